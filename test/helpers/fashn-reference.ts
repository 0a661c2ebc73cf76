/**
 * A plain-arithmetic reference of the FASHN VTON forward pass, written
 * line by line after the PyTorch reference (tryon_mmdit.py) with loops over
 * JavaScript numbers, no ONNX: the rotary embedding as 2×2 matrices, the
 * attention as explicit softmax sums, einops rearranges as index arithmetic.
 * Tests compare the ONNX graph's blocks and whole model against it.
 */
import type { FashnConfig } from '../../server/engines/fashn/architecture.ts';

/** Weights by checkpoint name, float values in the checkpoint's layout. */
export type RefWeights = ReadonlyMap<string, { shape: number[]; values: Float32Array }>;

/** Rows of numbers: [tokens][features]. */
export type Rows = number[][];

function w(weights: RefWeights, name: string): Float32Array {
  const t = weights.get(name);
  if (!t) throw new Error(`reference: no weight ${name}`);
  return t.values;
}

/** y = x·Wᵀ + b with W [out, in]. */
export function refLinear(x: Rows, weight: Float32Array, bias: Float32Array | null, outputs: number): Rows {
  return x.map((row) => {
    const out = new Array<number>(outputs).fill(0);
    for (let o = 0; o < outputs; o++) {
      let sum = bias ? bias[o]! : 0;
      for (let i = 0; i < row.length; i++) sum += row[i]! * weight[o * row.length + i]!;
      out[o] = sum;
    }
    return out;
  });
}

function lin(x: Rows, weights: RefWeights, prefix: string, outputs: number, bias = true): Rows {
  return refLinear(x, w(weights, `${prefix}.weight`), bias ? w(weights, `${prefix}.bias`) : null, outputs);
}

export function refLayerNorm(row: number[]): number[] {
  const mean = row.reduce((a, b) => a + b, 0) / row.length;
  const variance = row.reduce((a, b) => a + (b - mean) ** 2, 0) / row.length;
  return row.map((v) => (v - mean) / Math.sqrt(variance + 1e-6));
}

export function refRmsNorm(row: number[], scale: ArrayLike<number>): number[] {
  const rrms = 1 / Math.sqrt(row.reduce((a, b) => a + b * b, 0) / row.length + 1e-6);
  return row.map((v, i) => v * rrms * scale[i]!);
}

export const refSilu = (v: number): number => v / (1 + Math.exp(-v));
export const refGelu = (v: number): number => 0.5 * v * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (v + 0.044715 * v ** 3)));

/** The reference's rope(): for each token and pair, the matrix [[cos, −sin], [sin, cos]]. */
export function refRopeMatrices(ids: number[][], axesDim: readonly number[], theta: number): number[][][][] {
  return ids.map((id) =>
    axesDim.flatMap((dim, axis) =>
      Array.from({ length: dim / 2 }, (_, k) => {
        const omega = 1 / theta ** ((2 * k) / dim);
        const angle = id[axis]! * omega;
        return [
          [Math.cos(angle), -Math.sin(angle)],
          [Math.sin(angle), Math.cos(angle)],
        ];
      }),
    ),
  );
}

/** apply_rope: out pair = M · (x0, x1) for the token's matrix M. */
export function refApplyRope(x: Rows, matrices: number[][][][]): Rows {
  return x.map((row, token) =>
    row.map((_, i) => {
      const pair = Math.floor(i / 2);
      const m = matrices[token]![pair]!;
      const r = i % 2;
      return m[r]![0]! * row[2 * pair]! + m[r]![1]! * row[2 * pair + 1]!;
    }),
  );
}

/** Scaled dot-product attention of one head (q, k, v [L][D]). */
export function refSdpa(q: Rows, k: Rows, v: Rows): Rows {
  const scale = 1 / Math.sqrt(q[0]!.length);
  return q.map((qi) => {
    const scores = k.map((kj) => qi.reduce((a, b, d) => a + b * kj[d]!, 0) * scale);
    const max = Math.max(...scores);
    const exps = scores.map((s) => Math.exp(s - max));
    const total = exps.reduce((a, b) => a + b, 0);
    return v[0]!.map((_, d) => exps.reduce((a, e, j) => a + (e / total) * v[j]![d]!, 0));
  });
}

/** "B L (K H D) -> K B H L D" for one batch row: q, k, v per head. */
function refHeads(qkv: Rows, heads: number, headDim: number): [Rows[], Rows[], Rows[]] {
  const hidden = heads * headDim;
  const part = (k: number): Rows[] =>
    Array.from({ length: heads }, (_, h) => qkv.map((row) => row.slice(k * hidden + h * headDim, k * hidden + (h + 1) * headDim)));
  return [part(0), part(1), part(2)];
}

/** attention(): rope on q and k, SDPA per head, "B H L D -> B L (H D)". */
export function refAttention(q: Rows[], k: Rows[], v: Rows[], matrices: number[][][][]): Rows {
  const perHead = q.map((qh, h) => refSdpa(refApplyRope(qh, matrices), refApplyRope(k[h]!, matrices), v[h]!));
  return perHead[0]!.map((_, token) => perHead.flatMap((head) => head[token]!));
}

const modulated = (x: Rows, shift: number[], scale: number[]): Rows =>
  x.map((row) => refLayerNorm(row).map((v, i) => (1 + scale[i]!) * v + shift[i]!));

function modulation(vec: number[], weights: RefWeights, prefix: string, hidden: number, count: number): number[][] {
  const out = lin([vec.map(refSilu)], weights, `${prefix}.lin`, count * hidden)[0]!;
  return Array.from({ length: count }, (_, c) => out.slice(c * hidden, (c + 1) * hidden));
}

export function refSingleBlock(
  x: Rows,
  vec: number[],
  weights: RefWeights,
  prefix: string,
  config: FashnConfig,
  matrices: number[][][][],
): Rows {
  const h = config.hidden;
  const headDim = h / config.heads;
  const mlpHidden = h * config.mlpRatio;
  const [shift, scale, gate] = modulation(vec, weights, `${prefix}.modulation`, h, 3) as [number[], number[], number[]];
  const both = lin(modulated(x, shift, scale), weights, `${prefix}.linear1`, 3 * h + mlpHidden);
  const [q, k, v] = refHeads(
    both.map((row) => row.slice(0, 3 * h)),
    config.heads,
    headDim,
  );
  const norm = (heads: Rows[], which: string): Rows[] =>
    heads.map((rows) => rows.map((row) => refRmsNorm(row, w(weights, `${prefix}.norm.${which}.scale`))));
  const attn = refAttention(norm(q, 'query_norm'), norm(k, 'key_norm'), v, matrices);
  const joined = attn.map((row, i) => [...row, ...both[i]!.slice(3 * h).map(refGelu)]);
  const out = lin(joined, weights, `${prefix}.linear2`, h);
  return x.map((row, i) => row.map((value, j) => value + gate[j]! * out[i]![j]!));
}

export function refDoubleBlock(
  img: Rows,
  txt: Rows,
  vec: number[],
  weights: RefWeights,
  prefix: string,
  config: FashnConfig,
  matrices: number[][][][],
): [Rows, Rows] {
  const h = config.hidden;
  const headDim = h / config.heads;
  const im = modulation(vec, weights, `${prefix}.img_mod`, h, 6);
  const tm = modulation(vec, weights, `${prefix}.txt_mod`, h, 6);
  const prepare = (x: Rows, stream: string, mod: number[][]): [Rows[], Rows[], Rows[]] => {
    const [q, k, v] = refHeads(
      lin(modulated(x, mod[0]!, mod[1]!), weights, `${prefix}.${stream}_attn.qkv`, 3 * h, config.qkvBias),
      config.heads,
      headDim,
    );
    const norm = (heads: Rows[], which: string): Rows[] =>
      heads.map((rows) => rows.map((row) => refRmsNorm(row, w(weights, `${prefix}.${stream}_attn.norm.${which}.scale`))));
    return [norm(q, 'query_norm'), norm(k, 'key_norm'), v];
  };
  const [iq, ik, iv] = prepare(img, 'img', im);
  const [tq, tk, tv] = prepare(txt, 'txt', tm);
  const cat = (a: Rows[], b: Rows[]): Rows[] => a.map((rows, head) => [...rows, ...b[head]!]);
  const attn = refAttention(cat(tq, iq), cat(tk, ik), cat(tv, iv), matrices);
  const txtAttn = attn.slice(0, txt.length);
  const imgAttn = attn.slice(txt.length);
  const finish = (x: Rows, a: Rows, stream: string, mod: number[][]): Rows => {
    const proj = lin(a, weights, `${prefix}.${stream}_attn.proj`, h);
    const x1 = x.map((row, i) => row.map((v, j) => v + mod[2]![j]! * proj[i]![j]!));
    const hiddenMlp = lin(modulated(x1, mod[3]!, mod[4]!), weights, `${prefix}.${stream}_mlp.0`, h * config.mlpRatio).map((row) =>
      row.map(refGelu),
    );
    const mlp = lin(hiddenMlp, weights, `${prefix}.${stream}_mlp.2`, h);
    return x1.map((row, i) => row.map((v, j) => v + mod[5]![j]! * mlp[i]![j]!));
  };
  return [finish(img, imgAttn, 'img', im), finish(txt, txtAttn, 'txt', tm)];
}

/** "b c (h ph) (w pw) -> b (h w) (c ph pw)" for one image [C][H][W] flattened. */
export function refPatchify(image: Float32Array | number[], channels: number, height: number, width: number, p: number): Rows {
  const rows: Rows = [];
  for (let gy = 0; gy < height / p; gy++) {
    for (let gx = 0; gx < width / p; gx++) {
      const row: number[] = [];
      for (let c = 0; c < channels; c++)
        for (let py = 0; py < p; py++) for (let px = 0; px < p; px++) row.push(image[(c * height + gy * p + py) * width + gx * p + px]!);
      rows.push(row);
    }
  }
  return rows;
}

/** "b (h w) (c p1 p2) -> b c (h p1) (w p2)" for one image; returns [C][H][W] flattened. */
export function refUnpatchify(rows: Rows, channels: number, height: number, width: number, p: number): Float64Array {
  const out = new Float64Array(channels * height * width);
  const gridW = width / p;
  rows.forEach((row, token) => {
    const gy = Math.floor(token / gridW);
    const gx = token % gridW;
    for (let c = 0; c < channels; c++)
      for (let py = 0; py < p; py++)
        for (let px = 0; px < p; px++) out[(c * height + gy * p + py) * width + gx * p + px] = row[(c * p + py) * p + px]!;
  });
  return out;
}

/** The inputs of one forward pass for one batch row, each [C][H][W] flattened. */
export interface RefInputs {
  x: Float32Array;
  t: number;
  agnostic: Float32Array;
  garment: Float32Array;
  personPose: Float32Array;
  garmentPose: Float32Array;
  /** 0 none, 1 tops, 2 bottoms, 3 one-pieces. */
  category: number;
}

function concatChannels(parts: Float32Array[]): Float32Array {
  const out = new Float32Array(parts.reduce((a, p) => a + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** TryOnModel.forward for one batch row; returns the velocity [3][H][W] flattened. */
export function refForward(weights: RefWeights, config: FashnConfig, input: RefInputs): Float64Array {
  const { height: H, width: W, patch: p, hidden: h } = config;
  const tokens = (H / p) * (W / p);
  const embed = (image: Float32Array, channels: number, prefix: string): Rows =>
    lin(refPatchify(image, channels, H, W, p), weights, `${prefix}.proj`, h);
  let img = embed(concatChannels([input.x, input.agnostic, input.personPose]), 2 * config.channels + 1, 'x_embedder');
  let txt = embed(concatChannels([input.garment, input.garmentPose]), config.channels + 1, 'garment_embedder');

  const half = config.timeFeatures / 2;
  const args = Array.from({ length: half }, (_, i) => 1000 * input.t * Math.exp((-Math.log(10000) * i) / half));
  const features = [...args.map(Math.cos), ...args.map(Math.sin)];
  const inner = lin([features], weights, 't_embedder.mlp.in_layer', h)[0]!.map(refSilu);
  const time = lin([inner], weights, 't_embedder.mlp.out_layer', h)[0]!;
  const label = w(weights, 'y_embedder.weight').slice(input.category * h, (input.category + 1) * h);
  const vec = time.map((v, i) => v + label[i]!);

  const ids = Array.from({ length: tokens }, (_, n) => [0, Math.floor(n / (W / p)), n % (W / p)]);
  const single = refRopeMatrices(ids, config.axesDim, config.theta);
  const joint = [...single, ...single];
  for (let i = 0; i < config.patchMixerBlocks; i++) img = refSingleBlock(img, vec, weights, `x_patch_mixer.${i}`, config, single);
  for (let i = 0; i < config.doubleBlocks; i++) [img, txt] = refDoubleBlock(img, txt, vec, weights, `double_blocks.${i}`, config, joint);
  let both = [...txt, ...img];
  for (let i = 0; i < config.singleBlocks; i++) both = refSingleBlock(both, vec, weights, `single_blocks.${i}`, config, joint);
  const person = both.slice(tokens);
  const mod = lin([vec.map(refSilu)], weights, 'final_layer.adaLN_modulation.1', 2 * h)[0]!;
  const out = lin(modulated(person, mod.slice(0, h), mod.slice(h)), weights, 'final_layer.linear', config.channels * p * p);
  return refUnpatchify(out, config.channels, H, W, p);
}
