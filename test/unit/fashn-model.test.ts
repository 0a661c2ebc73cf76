/**
 * The whole FASHN VTON network at a tiny configuration: built from a random
 * safetensors file into a cached ONNX model with external weights, run in
 * ONNX Runtime on CPU and compared with the plain-arithmetic reference, and
 * sampled twice with one seed (identical) and with another (different).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { sessionDenoiser, type Conditions } from '../../server/engines/fashn/denoiser.ts';
import { WeightsError, prepareModel } from '../../server/engines/fashn/model-cache.ts';
import { gaussianNoise, sampleEuler } from '../../server/engines/fashn/sampler.ts';
import { OrtSession, type FloatTensor } from '../../server/onnx/ort.ts';
import { refForward, type RefWeights } from '../helpers/fashn-reference.ts';
import { TINY, seeded, writeRandomModel } from '../helpers/fashn-tiny.ts';

const dir = mkdtempSync(join(tmpdir(), 'fashn-model-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const weightsPath = join(dir, 'model.safetensors');
const tensors = writeRandomModel(weightsPath, TINY, 9, 'BF16');
// The reference sees what the file holds: BF16 values widened to float32.
const reference: RefWeights = new Map(
  tensors.map((t) => {
    const bits = new Uint32Array(Float32Array.from(t.values).buffer);
    const rounded = new Uint32Array(bits.length);
    for (let i = 0; i < bits.length; i++) rounded[i] = ((bits[i]! + 0x7fff + ((bits[i]! >>> 16) & 1)) >>> 16) << 16;
    return [t.name, { shape: t.shape, values: new Float32Array(rounded.buffer) }];
  }),
);

const { height: H, width: W } = TINY;
const PIXELS = H * W;

function random(count: number, seed: number): Float32Array {
  const next = seeded(seed);
  return Float32Array.from({ length: count }, () => next() * 2 - 1);
}

async function session(path: string): Promise<OrtSession> {
  return OrtSession.create(path, { name: 'fashn-tiny', threads: 1 });
}

test('the model is built once next to the weights, with external data, and reused until the weights change', async () => {
  const logs: string[] = [];
  const first = await prepareModel({ weightsPath, config: TINY, compute: 'float32', attention: 'fused', log: (m) => logs.push(m) });
  assert.equal(first.cached, false);
  assert.equal(first.onnxPath, join(dir, 'model.float32-fused.onnx'));
  assert.ok(existsSync(`${first.onnxPath}.data`) && existsSync(`${first.onnxPath}.json`));
  assert.ok(statSync(`${first.onnxPath}.data`).size > statSync(first.onnxPath).size, 'weights live in the data file');
  assert.match(logs.join('\n'), /building the ONNX model/);

  const again = await prepareModel({ weightsPath, config: TINY, compute: 'float32', attention: 'fused' });
  assert.equal(again.cached, true);

  utimesSync(weightsPath, new Date(), new Date(Date.now() + 5000));
  const rebuilt = await prepareModel({ weightsPath, config: TINY, compute: 'float32', attention: 'fused' });
  assert.equal(rebuilt.cached, false, 'a changed weights file is built again');
  assert.equal(JSON.parse(readFileSync(`${first.onnxPath}.json`, 'utf8')).weights.bytes, statSync(weightsPath).size);
});

test('weights that do not fit the architecture are refused by name, before anything is built', async () => {
  const wrong = join(dir, 'wrong.safetensors');
  writeRandomModel(wrong, { ...TINY, hidden: 48, heads: 3 }, 1);
  await assert.rejects(
    prepareModel({ weightsPath: wrong, config: TINY, compute: 'float32', attention: 'fused' }),
    (error: Error) =>
      error instanceof WeightsError &&
      /does not match the FASHN VTON v1\.5 architecture: .*with the wrong shape \(t_embedder\.mlp\.in_layer\.weight is \[48,16\], expected \[32,16\]/.test(
        error.message,
      ),
  );
  assert.equal(existsSync(join(dir, 'wrong.float32-fused.onnx')), false);
  await assert.rejects(
    prepareModel({ weightsPath: join(dir, 'absent.safetensors'), config: TINY, compute: 'float32', attention: 'fused' }),
    /absent\.safetensors is missing/,
  );
});

function inputs(batch: number): { feeds: Record<string, FloatTensor>; rows: Parameters<typeof refForward>[2][] } {
  const image = (seed: number, channels: number): Float32Array => random(batch * channels * PIXELS, seed);
  const [x, agnostic, garment, personPose, garmentPose] = [image(1, 3), image(2, 3), image(3, 3), image(4, 1), image(5, 1)];
  const t = Float32Array.from({ length: batch }, (_, b) => 0.2 + 0.5 * b);
  const labels = Array.from({ length: batch }, (_, b) => [1, 0, 3][b % 3]!);
  const category = new Float32Array(batch * 4);
  labels.forEach((label, b) => (category[b * 4 + label] = 1));
  const dims = (c: number): number[] => [batch, c, H, W];
  const row = (data: Float32Array, c: number, b: number): Float32Array => data.slice(b * c * PIXELS, (b + 1) * c * PIXELS);
  return {
    feeds: {
      x: { data: x, dims: dims(3) },
      t: { data: t, dims: [batch] },
      agnostic: { data: agnostic, dims: dims(3) },
      garment: { data: garment, dims: dims(3) },
      person_pose: { data: personPose, dims: dims(1) },
      garment_pose: { data: garmentPose, dims: dims(1) },
      category: { data: category, dims: [batch, 4] },
    },
    rows: Array.from({ length: batch }, (_, b) => ({
      x: row(x, 3, b),
      t: t[b]!,
      agnostic: row(agnostic, 3, b),
      garment: row(garment, 3, b),
      personPose: row(personPose, 1, b),
      garmentPose: row(garmentPose, 1, b),
      category: labels[b]!,
    })),
  };
}

for (const attention of ['fused', 'plain'] as const) {
  test(`the ONNX model (${attention} attention) computes the reference forward pass for each row of a batch`, async () => {
    const { onnxPath } = await prepareModel({ weightsPath, config: TINY, compute: 'float32', attention });
    const model = await session(onnxPath);
    try {
      const { feeds, rows } = inputs(3);
      const out = await model.run(feeds);
      assert.deepEqual(out.velocity!.dims, [3, 3, H, W]);
      const expected = rows.flatMap((row) => [...refForward(reference, TINY, row)]);
      let worst = 0;
      out.velocity!.data.forEach((v, i) => (worst = Math.max(worst, Math.abs(v - expected[i]!))));
      assert.ok(worst < 1e-4, `max difference ${worst}`);
      const spread = Math.max(...expected) - Math.min(...expected);
      assert.ok(spread > 0.1, 'the reference output is not trivially flat');
    } finally {
      await model.release();
    }
  });
}

test('sampling is deterministic for a seed, differs across seeds, and ends in [−1, 1] at the model size', async () => {
  const { onnxPath } = await prepareModel({ weightsPath, config: TINY, compute: 'float32', attention: 'fused' });
  const model = await session(onnxPath);
  try {
    const conditions: Conditions = {
      agnostic: random(3 * PIXELS, 11),
      garment: random(3 * PIXELS, 12),
      personPose: random(PIXELS, 13),
      garmentPose: random(PIXELS, 14),
      category: 'tops',
    };
    const denoise = sessionDenoiser(model, TINY, conditions);
    const run = (seed: number): Promise<Float32Array> => sampleEuler(gaussianNoise(3 * PIXELS, seed), denoise, { steps: 3 });
    const [a, b, c] = [await run(42), await run(42), await run(43)];
    assert.equal(a.length, 3 * PIXELS);
    assert.deepEqual(a, b);
    assert.notDeepEqual(a, c);
    assert.ok(a.every((v) => v >= -1 && v <= 1));
  } finally {
    await model.release();
  }
});

test('the fp16 build (weights and activations in half precision, norms in float32) stays close to float32', async () => {
  const full = await session((await prepareModel({ weightsPath, config: TINY, compute: 'float32', attention: 'fused' })).onnxPath);
  const half = await session((await prepareModel({ weightsPath, config: TINY, compute: 'float16', attention: 'fused' })).onnxPath);
  try {
    const { feeds } = inputs(2);
    const [a, b] = [(await full.run(feeds)).velocity!.data, (await half.run(feeds)).velocity!.data];
    let worst = 0;
    a.forEach((v, i) => (worst = Math.max(worst, Math.abs(v - b[i]!))));
    // fp16 keeps about 3 decimal digits; the tiny model's outputs are of order 1.
    assert.ok(worst < 0.02, `max difference ${worst}`);
    assert.ok(worst > 0, 'the half build really computes in half precision');
  } finally {
    await Promise.all([full.release(), half.release()]);
  }
});
