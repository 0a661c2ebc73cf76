/**
 * The whole FASHN VTON network (the reference's TryOnModel.forward with every
 * condition kept) as one ONNX graph. The sampler builds the classifier-free
 * guidance batch itself (conditional rows, then rows with every condition
 * zeroed and the "none" category), so the graph is a plain forward pass with
 * a symbolic batch.
 *
 * Inputs (float32): x [B,3,H,W] the noisy image, t [B] the time in 0..1,
 * agnostic [B,3,H,W] the person photo, garment [B,3,H,W], person_pose and
 * garment_pose [B,1,H,W] (all in −1..1), category [B,classes+1] one-hot.
 * Output: velocity [B,3,H,W].
 */
import { OnnxGraph, type ComputeType } from '../../onnx/graph.ts';
import { derived, validateConfig, type FashnConfig } from './architecture.ts';
import {
  attention,
  chunk,
  geluTanh,
  layerNorm,
  linear,
  modulate,
  modulation,
  qkv,
  repeatTables,
  rmsNorm,
  ropeConstants,
  ropeTables,
  silu,
  splitHeads,
  type AttentionKind,
  type RopeConstants,
} from './blocks.ts';

export const MODEL_INPUTS = ['x', 't', 'agnostic', 'garment', 'person_pose', 'garment_pose', 'category'] as const;
export const MODEL_OUTPUT = 'velocity';

export interface BuildOptions {
  compute?: ComputeType;
  attention?: AttentionKind;
}

type Dims = { hidden: number; heads: number; headDim: number; mlpHidden: number };

/** A SingleStreamBlock: parallel attention and MLP from one Linear, gated residual. */
export function singleBlock(
  g: OnnxGraph,
  x: string,
  vecSilu: string,
  prefix: string,
  rope: RopeConstants,
  d: Dims,
  kind: AttentionKind,
): string {
  const [shift, scale, gate] = modulation(g, vecSilu, `${prefix}.modulation`, d.hidden, 3) as [string, string, string];
  const xMod = modulate(g, layerNorm(g, x, d.hidden), shift, scale);
  const [qkvPart, mlpPart] = g.ops(
    'Split',
    [linear(g, xMod, `${prefix}.linear1`, d.hidden, 3 * d.hidden + d.mlpHidden), g.ints([3 * d.hidden, d.mlpHidden])],
    2,
    { axis: -1 },
  ) as [string, string];
  const [q, k, v] = chunk(g, qkvPart, 3, d.hidden).map((part) => splitHeads(g, part, d.heads, d.headDim)) as [string, string, string];
  const scaleOf = (name: string): string => g.weight(`${prefix}.norm.${name}.scale`, [d.headDim]);
  const attended = attention(g, rmsNorm(g, q, scaleOf('query_norm')), rmsNorm(g, k, scaleOf('key_norm')), v, rope, d, kind);
  const joined = g.op('Concat', [attended, geluTanh(g, mlpPart)], { axis: -1 });
  const out = linear(g, joined, `${prefix}.linear2`, d.hidden + d.mlpHidden, d.hidden);
  return g.op('Add', [x, g.op('Mul', [gate, out])]);
}

/** A DoubleStreamBlock: person ("img") and garment ("txt") streams with their own weights and one joint attention over [garment; person]. */
export function doubleBlock(
  g: OnnxGraph,
  img: string,
  txt: string,
  vecSilu: string,
  prefix: string,
  rope: RopeConstants,
  d: Dims & { tokens: number },
  kind: AttentionKind,
  qkvBias: boolean,
): [string, string] {
  const mods = (stream: string): string[] => modulation(g, vecSilu, `${prefix}.${stream}_mod`, d.hidden, 6);
  const [iShift1, iScale1, iGate1, iShift2, iScale2, iGate2] = mods('img') as [string, string, string, string, string, string];
  const [tShift1, tScale1, tGate1, tShift2, tScale2, tGate2] = mods('txt') as [string, string, string, string, string, string];
  const imgIn = modulate(g, layerNorm(g, img, d.hidden), iShift1, iScale1);
  const txtIn = modulate(g, layerNorm(g, txt, d.hidden), tShift1, tScale1);
  const [iq, ik, iv] = qkv(g, imgIn, `${prefix}.img_attn.qkv`, `${prefix}.img_attn.norm`, d, qkvBias);
  const [tq, tk, tv] = qkv(g, txtIn, `${prefix}.txt_attn.qkv`, `${prefix}.txt_attn.norm`, d, qkvBias);
  const joint = (a: string, b: string): string => g.op('Concat', [a, b], { axis: 2 });
  const attended = attention(g, joint(tq, iq), joint(tk, ik), joint(tv, iv), rope, d, kind);
  const [txtAttn, imgAttn] = g.ops('Split', [attended, g.ints([d.tokens, d.tokens])], 2, { axis: 1 }) as [string, string];

  const residual = (
    x: string,
    attn: string,
    stream: 'img' | 'txt',
    gate1: string,
    shift2: string,
    scale2: string,
    gate2: string,
  ): string => {
    const afterAttn = g.op('Add', [x, g.op('Mul', [gate1, linear(g, attn, `${prefix}.${stream}_attn.proj`, d.hidden, d.hidden)])]);
    const mlpIn = modulate(g, layerNorm(g, afterAttn, d.hidden), shift2, scale2);
    const mlp = linear(
      g,
      geluTanh(g, linear(g, mlpIn, `${prefix}.${stream}_mlp.0`, d.hidden, d.mlpHidden)),
      `${prefix}.${stream}_mlp.2`,
      d.mlpHidden,
      d.hidden,
    );
    return g.op('Add', [afterAttn, g.op('Mul', [gate2, mlp])]);
  };
  return [residual(img, imgAttn, 'img', iGate1, iShift2, iScale2, iGate2), residual(txt, txtAttn, 'txt', tGate1, tShift2, tScale2, tGate2)];
}

/** A PatchEmbed: a p×p convolution with stride p, flattened to [B, tokens, hidden]. */
export function patchEmbed(g: OnnxGraph, x: string, prefix: string, inChannels: number, config: FashnConfig): string {
  const p = config.patch;
  const conv = g.op(
    'Conv',
    [x, g.weight(`${prefix}.proj.weight`, [config.hidden, inChannels, p, p]), g.weight(`${prefix}.proj.bias`, [config.hidden])],
    {
      kernel_shape: [p, p],
      strides: [p, p],
    },
  );
  return g.op('Transpose', [g.op('Reshape', [conv, g.ints([0, 0, -1])])], { perm: [0, 2, 1] });
}

/** [B, tokens, channels·p·p] → [B, channels, H, W] ("b (h w) (c p1 p2) -> b c (h p1) (w p2)"). */
export function unpatchify(g: OnnxGraph, x: string, config: FashnConfig): string {
  const { gridH, gridW } = derived(config);
  const p = config.patch;
  const grid = g.op('Reshape', [x, g.ints([0, gridH, gridW, config.channels, p, p])]);
  const ordered = g.op('Transpose', [grid], { perm: [0, 3, 1, 4, 2, 5] });
  return g.op('Reshape', [ordered, g.ints([0, config.channels, config.height, config.width])]);
}

/** The sinusoidal features of 1000·t ([cos | sin], the reference's timestep_embedding), in float32. */
export function timestepFeatures(g: OnnxGraph, t: string, features: number): string {
  const half = features / 2;
  const freqs = Float32Array.from({ length: half }, (_, i) => Math.exp((-Math.log(10000) * Math.fround(i)) / half));
  const args = g.op('Mul', [g.op('Unsqueeze', [g.op('Mul', [t, g.constant32([1000], [])]), g.ints([1])]), g.constant32(freqs, [1, half])]);
  return g.op('Concat', [g.op('Cos', [args]), g.op('Sin', [args])], { axis: -1 });
}

/** Builds the whole network for `config`; weights are referenced by their checkpoint names. */
export function buildModelGraph(config: FashnConfig, options: BuildOptions = {}): OnnxGraph {
  validateConfig(config);
  const kind = options.attention ?? 'fused';
  const g = new OnnxGraph(options.compute ?? 'float32');
  const { headDim, mlpHidden, gridH, gridW, tokens } = derived(config);
  const d = { hidden: config.hidden, heads: config.heads, headDim, mlpHidden, tokens };
  const image = (name: string, channels: number): string =>
    g.input({ name, dims: [0, channels, config.height, config.width], dimParams: ['batch'] });
  const [x, agnostic, garment, personPose, garmentPose] = [
    image('x', config.channels),
    image('agnostic', config.channels),
    image('garment', config.channels),
    image('person_pose', 1),
    image('garment_pose', 1),
  ];
  const t = g.input({ name: 't', dims: [0], dimParams: ['batch'] });
  const category = g.input({ name: 'category', dims: [0, config.classes + 1], dimParams: ['batch'] });
  const toCompute = (value: string): string => (g.compute === 'float32' ? value : g.cast(value, g.compute));

  const personIn = toCompute(g.op('Concat', [x, agnostic, personPose], { axis: 1 }));
  const garmentIn = toCompute(g.op('Concat', [garment, garmentPose], { axis: 1 }));
  let img = patchEmbed(g, personIn, 'x_embedder', 2 * config.channels + 1, config);
  let txt = patchEmbed(g, garmentIn, 'garment_embedder', config.channels + 1, config);

  const timeIn = toCompute(timestepFeatures(g, t, config.timeFeatures));
  const timeHidden = linear(
    g,
    silu(g, linear(g, timeIn, 't_embedder.mlp.in_layer', config.timeFeatures, config.hidden)),
    't_embedder.mlp.out_layer',
    config.hidden,
    config.hidden,
  );
  const label = g.op('MatMul', [toCompute(category), g.weight('y_embedder.weight', [config.classes + 1, config.hidden])]);
  const vecSilu = silu(g, g.op('Add', [timeHidden, label]));

  const single = ropeTables(gridH, gridW, config.axesDim, config.theta);
  const ropeOne = ropeConstants(g, single);
  const ropeTwo = ropeConstants(g, repeatTables(single, 2));

  for (let i = 0; i < config.patchMixerBlocks; i++) img = singleBlock(g, img, vecSilu, `x_patch_mixer.${i}`, ropeOne, d, kind);
  for (let i = 0; i < config.doubleBlocks; i++) {
    [img, txt] = doubleBlock(g, img, txt, vecSilu, `double_blocks.${i}`, ropeTwo, d, kind, config.qkvBias);
  }
  let joint = g.op('Concat', [txt, img], { axis: 1 });
  for (let i = 0; i < config.singleBlocks; i++) joint = singleBlock(g, joint, vecSilu, `single_blocks.${i}`, ropeTwo, d, kind);
  const person = g.op('Slice', [joint, g.ints([tokens]), g.ints([2 * tokens]), g.ints([1])]);

  const [shift, scale] = chunk(
    g,
    linear(g, vecSilu, 'final_layer.adaLN_modulation.1', config.hidden, 2 * config.hidden),
    2,
    config.hidden,
  ) as [string, string];
  const unsqueeze = (v: string): string => g.op('Unsqueeze', [v, g.ints([1])]);
  const finalIn = modulate(g, layerNorm(g, person, config.hidden), unsqueeze(shift), unsqueeze(scale));
  const patches = linear(g, finalIn, 'final_layer.linear', config.hidden, config.channels * config.patch * config.patch);
  const velocity = unpatchify(g, patches, config);
  g.output(g.compute === 'float32' ? velocity : g.cast(velocity, 'float32'), {
    name: MODEL_OUTPUT,
    dims: [0, config.channels, config.height, config.width],
    dimParams: ['batch'],
  });
  return g;
}
