/**
 * The FASHN VTON building blocks as ONNX subgraphs, each run in ONNX Runtime
 * on small random tensors and compared with plain arithmetic written after
 * the PyTorch reference (test/helpers/fashn-reference.ts).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OnnxGraph, encodeInline, type WeightSource } from '../../server/onnx/graph.ts';
import { OrtSession, type FloatTensor } from '../../server/onnx/ort.ts';
import type { FashnConfig } from '../../server/engines/fashn/architecture.ts';
import {
  applyRope,
  attention,
  geluTanh,
  layerNorm,
  modulate,
  modulation,
  rmsNorm,
  ropeConstants,
  ropeTables,
  silu,
  type AttentionKind,
} from '../../server/engines/fashn/blocks.ts';
import { doubleBlock, patchEmbed, singleBlock, timestepFeatures, unpatchify } from '../../server/engines/fashn/model-graph.ts';
import {
  refApplyRope,
  refAttention,
  refDoubleBlock,
  refGelu,
  refLayerNorm,
  refLinear,
  refPatchify,
  refRmsNorm,
  refRopeMatrices,
  refSilu,
  refSingleBlock,
  refUnpatchify,
  type RefWeights,
  type Rows,
} from '../helpers/fashn-reference.ts';
import { TINY, randomWeights, seeded } from '../helpers/fashn-tiny.ts';

const TOLERANCE = 2e-5;

function randomValues(count: number, seed: number, scale = 1): Float32Array {
  const random = seeded(seed);
  return Float32Array.from({ length: count }, () => (random() * 2 - 1) * scale);
}

function sourceOf(weights: RefWeights): WeightSource {
  return {
    read: async (name) => {
      const t = weights.get(name);
      if (!t) throw new Error(`no weight ${name}`);
      return t.values;
    },
  };
}

async function run(g: OnnxGraph, weights: RefWeights, feeds: Record<string, FloatTensor>): Promise<Record<string, FloatTensor>> {
  const session = await OrtSession.create(await encodeInline(g, sourceOf(weights), 'test'), { name: 'block', threads: 1 });
  try {
    return await session.run(feeds);
  } finally {
    await session.release();
  }
}

function assertClose(actual: ArrayLike<number>, expected: ArrayLike<number>, tolerance = TOLERANCE, what = 'value'): void {
  assert.equal(actual.length, expected.length, `${what}: length`);
  let worst = 0;
  for (let i = 0; i < actual.length; i++) worst = Math.max(worst, Math.abs(actual[i]! - expected[i]!));
  assert.ok(worst <= tolerance, `${what}: max difference ${worst} > ${tolerance}`);
}

/** [rows][cols] from a flat array. */
function rows(values: ArrayLike<number>, count: number, width: number, offset = 0): Rows {
  return Array.from({ length: count }, (_, r) => Array.from({ length: width }, (_, c) => values[offset + r * width + c]!));
}

test('patch embedding is the reference patchify followed by a Linear; unpatchify inverts the layout', async () => {
  const config: FashnConfig = { ...TINY, height: 4, width: 6, patch: 2, hidden: 5, channels: 3 };
  const inChannels = 4;
  const weight = randomValues(5 * inChannels * 4, 11);
  const bias = randomValues(5, 12);
  const weights: RefWeights = new Map([
    ['e.proj.weight', { shape: [5, inChannels, 2, 2], values: weight }],
    ['e.proj.bias', { shape: [5], values: bias }],
  ]);
  const image = randomValues(inChannels * 4 * 6, 13);
  const g = new OnnxGraph();
  const x = g.input({ name: 'x', dims: [1, inChannels, 4, 6] });
  g.output(patchEmbed(g, x, 'e', inChannels, config), { name: 'tokens', dims: [1, 6, 5] });
  const tokens = await run(g, weights, { x: { data: image, dims: [1, inChannels, 4, 6] } });
  const expected = refLinear(refPatchify(image, inChannels, 4, 6, 2), weight, bias, 5).flat();
  assertClose(tokens.tokens!.data, expected);

  const u = new OnnxGraph();
  const patches = randomValues(6 * 12, 14);
  u.output(unpatchify(u, u.input({ name: 'p', dims: [1, 6, 12] }), config), { name: 'image', dims: [1, 3, 4, 6] });
  const back = await run(u, new Map(), { p: { data: patches, dims: [1, 6, 12] } });
  const reference = refUnpatchify(rows(patches, 6, 12), 3, 4, 6, 2);
  assert.deepEqual([...back.image!.data], [...reference].map(Math.fround));
  // and patchify ∘ unpatchify is the identity on the token rows
  assert.deepEqual(
    refPatchify([...reference], 3, 4, 6, 2).flat(),
    [...patches].map((v) => v),
  );
});

test('rotary tables and applyRope match the 2×2 rotation matrices of the reference', async () => {
  const axes = [2, 2, 4];
  const ids = Array.from({ length: 6 }, (_, n) => [0, Math.floor(n / 3), n % 3]);
  const matrices = refRopeMatrices(ids, axes, 10000);
  const tables = ropeTables(2, 3, axes, 10000);
  for (let n = 0; n < 6; n++) {
    for (let pair = 0; pair < 4; pair++) {
      const m = matrices[n]![pair]!;
      assertClose(
        [tables.cos[n * 8 + 2 * pair]!, tables.sin[n * 8 + 2 * pair]!, tables.sin[n * 8 + 2 * pair + 1]!],
        [m[0]![0]!, m[0]![1]!, m[1]![0]!],
        1e-7,
        'table',
      );
    }
  }
  // Axis 0 is always position 0: its pair does not turn.
  assert.equal(tables.cos[8 * 5], 1);
  assert.equal(tables.sin[8 * 5 + 1], 0);

  const g = new OnnxGraph();
  const q = g.input({ name: 'q', dims: [2, 2, 6, 8] });
  g.output(applyRope(g, q, ropeConstants(g, tables)), { name: 'out', dims: [2, 2, 6, 8] });
  const values = randomValues(2 * 2 * 6 * 8, 21);
  const out = await run(g, new Map(), { q: { data: values, dims: [2, 2, 6, 8] } });
  const expected = Array.from({ length: 4 }, (_, bh) => refApplyRope(rows(values, 6, 8, bh * 48), matrices).flat()).flat();
  assertClose(out.out!.data, expected, 1e-6);
});

for (const kind of ['plain', 'fused'] as AttentionKind[]) {
  test(`attention (${kind}) equals rope + softmax(q·kᵀ/√D)·v per head, heads merged`, async () => {
    const [B, H, L, D] = [2, 2, 6, 8];
    const axes = [2, 2, 4];
    const ids = Array.from({ length: L }, (_, n) => [0, Math.floor(n / 3), n % 3]);
    const g = new OnnxGraph();
    const dims = [B, H, L, D];
    const [q, k, v] = ['q', 'k', 'v'].map((name) => g.input({ name, dims }));
    g.output(attention(g, q!, k!, v!, ropeConstants(g, ropeTables(2, 3, axes, 10000)), { hidden: H * D, heads: H, headDim: D }, kind), {
      name: 'out',
      dims: [B, L, H * D],
    });
    const data = [31, 32, 33].map((seed) => randomValues(B * H * L * D, seed, 2));
    const out = await run(g, new Map(), { q: { data: data[0]!, dims }, k: { data: data[1]!, dims }, v: { data: data[2]!, dims } });
    const matrices = refRopeMatrices(ids, axes, 10000);
    const perBatch = (values: Float32Array, b: number): Rows[] =>
      Array.from({ length: H }, (_, h) => rows(values, L, D, (b * H + h) * L * D));
    const expected = Array.from({ length: B }, (_, b) =>
      refAttention(perBatch(data[0]!, b), perBatch(data[1]!, b), perBatch(data[2]!, b), matrices).flat(),
    ).flat();
    assertClose(out.out!.data, expected, 1e-5);
  });
}

test('modulation, modulate, layer norm, RMS norm, SiLU and tanh-GELU match the formulas', async () => {
  const hidden = 4;
  const weights: RefWeights = new Map([
    ['m.lin.weight', { shape: [3 * hidden, hidden], values: randomValues(3 * hidden * hidden, 41) }],
    ['m.lin.bias', { shape: [3 * hidden], values: randomValues(3 * hidden, 42) }],
    ['s.scale', { shape: [hidden], values: randomValues(hidden, 43) }],
  ]);
  const g = new OnnxGraph();
  const vec = g.input({ name: 'vec', dims: [2, hidden] });
  const x = g.input({ name: 'x', dims: [2, 3, hidden] });
  const [shift, scale, gate] = modulation(g, silu(g, vec), 'm', hidden, 3) as [string, string, string];
  g.output(modulate(g, layerNorm(g, x, hidden), shift, scale), { name: 'modulated', dims: [2, 3, hidden] });
  g.output(gate, { name: 'gate', dims: [2, 1, hidden] });
  g.output(rmsNorm(g, x, g.weight('s.scale', [hidden])), { name: 'rms', dims: [2, 3, hidden] });
  g.output(geluTanh(g, x), { name: 'gelu', dims: [2, 3, hidden] });
  const vecData = randomValues(2 * hidden, 44, 3);
  const xData = randomValues(2 * 3 * hidden, 45, 3);
  const out = await run(g, weights, { vec: { data: vecData, dims: [2, hidden] }, x: { data: xData, dims: [2, 3, hidden] } });

  const mods = refLinear(
    rows(vecData, 2, hidden).map((r) => r.map(refSilu)),
    weights.get('m.lin.weight')!.values,
    weights.get('m.lin.bias')!.values,
    3 * hidden,
  );
  const xRows = rows(xData, 6, hidden);
  const expected = xRows.map((row, i) => {
    const m = mods[Math.floor(i / 3)]!;
    return refLayerNorm(row).map((v, j) => (1 + m[hidden + j]!) * v + m[j]!);
  });
  assertClose(out.modulated!.data, expected.flat(), 1e-5, 'modulated');
  assertClose(
    out.gate!.data,
    mods.flatMap((m) => m.slice(2 * hidden)),
    1e-6,
    'gate',
  );
  assertClose(
    out.rms!.data,
    xRows.flatMap((row) => refRmsNorm(row, weights.get('s.scale')!.values)),
    1e-6,
    'rms',
  );
  assertClose(out.gelu!.data, [...xData].map(refGelu), 1e-6, 'gelu');
});

test('timestep features are [cos | sin] of 1000·t times the reference frequencies', async () => {
  const g = new OnnxGraph();
  g.output(timestepFeatures(g, g.input({ name: 't', dims: [3] }), 8), { name: 'f', dims: [3, 8] });
  const times = Float32Array.of(0, 0.25, 0.9);
  const out = await run(g, new Map(), { t: { data: times, dims: [3] } });
  const expected = [...times].flatMap((t) => {
    const args = [0, 1, 2, 3].map((i) => 1000 * t * Math.exp((-Math.log(10000) * i) / 4));
    return [...args.map(Math.cos), ...args.map(Math.sin)];
  });
  assertClose(out.f!.data, expected, 1e-4);
});

function blockWeights(): RefWeights {
  return new Map(randomWeights(TINY, 5).map((t) => [t.name, { shape: t.shape, values: t.values }]));
}

test('a single-stream block (the patch mixer) equals the reference, per batch row', async () => {
  const weights = blockWeights();
  const tokens = 8;
  const { hidden } = TINY;
  const d = { hidden, heads: TINY.heads, headDim: hidden / TINY.heads, mlpHidden: hidden * TINY.mlpRatio };
  const g = new OnnxGraph();
  const x = g.input({ name: 'x', dims: [2, tokens, hidden] });
  const vec = g.input({ name: 'vec', dims: [2, hidden] });
  const rope = ropeConstants(g, ropeTables(4, 2, TINY.axesDim, TINY.theta));
  g.output(singleBlock(g, x, silu(g, vec), 'x_patch_mixer.0', rope, d, 'fused'), { name: 'out', dims: [2, tokens, hidden] });
  const xData = randomValues(2 * tokens * hidden, 51);
  const vecData = randomValues(2 * hidden, 52);
  const out = await run(g, weights, { x: { data: xData, dims: [2, tokens, hidden] }, vec: { data: vecData, dims: [2, hidden] } });
  const matrices = refRopeMatrices(
    Array.from({ length: tokens }, (_, n) => [0, Math.floor(n / 2), n % 2]),
    TINY.axesDim,
    TINY.theta,
  );
  const expected = [0, 1].flatMap((b) =>
    refSingleBlock(
      rows(xData, tokens, hidden, b * tokens * hidden),
      rows(vecData, 1, hidden, b * hidden)[0]!,
      weights,
      'x_patch_mixer.0',
      TINY,
      matrices,
    ).flat(),
  );
  assertClose(out.out!.data, expected, 1e-5);
});

test('a double-stream block equals the reference: joint attention over [garment; person], separate weights', async () => {
  const weights = blockWeights();
  const tokens = 8;
  const { hidden } = TINY;
  const d = { hidden, heads: TINY.heads, headDim: hidden / TINY.heads, mlpHidden: hidden * TINY.mlpRatio, tokens };
  const g = new OnnxGraph();
  const img = g.input({ name: 'img', dims: [2, tokens, hidden] });
  const txt = g.input({ name: 'txt', dims: [2, tokens, hidden] });
  const vec = g.input({ name: 'vec', dims: [2, hidden] });
  const single = ropeTables(4, 2, TINY.axesDim, TINY.theta);
  const rope = ropeConstants(g, {
    cos: Float32Array.of(...single.cos, ...single.cos),
    sin: Float32Array.of(...single.sin, ...single.sin),
    tokens: 2 * tokens,
    headDim: single.headDim,
  });
  const [imgOut, txtOut] = doubleBlock(g, img, txt, silu(g, vec), 'double_blocks.0', rope, d, 'plain', true);
  g.output(imgOut, { name: 'img_out', dims: [2, tokens, hidden] });
  g.output(txtOut, { name: 'txt_out', dims: [2, tokens, hidden] });
  const [imgData, txtData, vecData] = [61, 62, 63].map((seed, i) => randomValues(i === 2 ? 2 * hidden : 2 * tokens * hidden, seed));
  const out = await run(g, weights, {
    img: { data: imgData!, dims: [2, tokens, hidden] },
    txt: { data: txtData!, dims: [2, tokens, hidden] },
    vec: { data: vecData!, dims: [2, hidden] },
  });
  const ids = Array.from({ length: tokens }, (_, n) => [0, Math.floor(n / 2), n % 2]);
  const matrices = refRopeMatrices([...ids, ...ids], TINY.axesDim, TINY.theta);
  const expected = [0, 1].map((b) =>
    refDoubleBlock(
      rows(imgData!, tokens, hidden, b * tokens * hidden),
      rows(txtData!, tokens, hidden, b * tokens * hidden),
      rows(vecData!, 1, hidden, b * hidden)[0]!,
      weights,
      'double_blocks.0',
      TINY,
      matrices,
    ),
  );
  assertClose(
    out.img_out!.data,
    expected.flatMap(([i]) => i.flat()),
    1e-5,
    'img',
  );
  assertClose(
    out.txt_out!.data,
    expected.flatMap(([, t]) => t.flat()),
    1e-5,
    'txt',
  );
});
