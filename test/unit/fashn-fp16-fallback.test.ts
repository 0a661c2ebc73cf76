/**
 * float16 steps that overflow are computed again in float32: first with
 * injected denoisers (which step is redone, the log line, the float32 model
 * opened once and only when needed), then with a tiny checkpoint whose
 * weights push one activation past float16's 65504 while every weight stays
 * representable, run in ONNX Runtime on CPU in both builds.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { sessionDenoiser, type Conditions } from '../../server/engines/fashn/denoiser.ts';
import { createEngine } from '../../server/engines/fashn/engine.ts';
import { lazily, nonFiniteCount, withFloat32Fallback } from '../../server/engines/fashn/fp16-fallback.ts';
import { prepareModel } from '../../server/engines/fashn/model-cache.ts';
import { encodeSafetensors, type TensorToWrite } from '../../server/engines/fashn/safetensors.ts';
import { gaussianNoise, sampleEuler, type Denoiser } from '../../server/engines/fashn/sampler.ts';
import type { ComputeType } from '../../server/onnx/graph.ts';
import { OrtSession } from '../../server/onnx/ort.ts';
import { TINY, randomWeights, seeded } from '../helpers/fashn-tiny.ts';

const dir = mkdtempSync(join(tmpdir(), 'fashn-fp16-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A denoiser answering `value` everywhere, counting its calls. */
function constant(value: number): Denoiser & { calls: number } {
  const denoise = async (x: Float32Array, _t: number, guided: boolean): ReturnType<Denoiser> => {
    denoise.calls++;
    const v = new Float32Array(x.length).fill(value);
    return guided ? { conditional: v, unconditional: v.slice() } : { conditional: v };
  };
  denoise.calls = 0;
  return denoise;
}

test('a step with a non-finite velocity is computed again in float32, with a log line; finite steps are not', async () => {
  const half = constant(0.5);
  const full = constant(0.25);
  let opened = 0;
  const logs: string[] = [];
  let step = 0;
  const overflowing: Denoiser = async (x, t, guided) => {
    const out = await half(x, t, guided);
    if (step++ === 1) out.unconditional![3] = Infinity;
    return out;
  };
  const denoise = withFloat32Fallback(
    overflowing,
    async () => {
      opened++;
      return full;
    },
    (message) => logs.push(message),
  );
  const out = await sampleEuler(new Float32Array(6), denoise, { steps: 4 });
  assert.ok(out.every(Number.isFinite));
  assert.equal(half.calls, 4, 'every step runs in float16 first');
  assert.equal(full.calls, 1, 'only the overflowing step is redone');
  assert.equal(opened, 1);
  assert.equal(logs.length, 1);
  assert.match(logs[0]!, /float16 overflow at t = 0\.0692 \(1 values not finite\): that step is computed again in float32/);

  const clean = withFloat32Fallback(
    constant(0.5),
    () => assert.fail('the float32 model is not opened for finite steps'),
    () => undefined,
  );
  await sampleEuler(new Float32Array(6), clean, { steps: 4 });
});

test('a velocity that is not finite even in float32 fails the run rather than clamping NaNs into a picture', async () => {
  const denoise = withFloat32Fallback(
    constant(NaN),
    async () => constant(NaN),
    () => undefined,
  );
  await assert.rejects(sampleEuler(new Float32Array(6), denoise, { steps: 2 }), /not finite even in float32 \(12 values\)/);
});

test('the float32 model is opened once however many ask, released once, and opened again after a failure', async () => {
  let opens = 0;
  let releases = 0;
  let fail = true;
  const lazy = lazily(async () => {
    opens++;
    if (fail) throw new Error('no disk');
    return {
      release: async () => {
        releases++;
      },
    };
  });
  await assert.rejects(lazy.get(), /no disk/);
  fail = false;
  const [a, b] = await Promise.all([lazy.get(), lazy.get()]);
  assert.equal(a, b);
  assert.equal(opens, 2, 'the failed open is tried again, the shared one once');
  await lazy.release();
  await lazy.release();
  assert.equal(releases, 1);
});

test('the description GET /api/v1/engines shows says a float16 build falls back to float32 on overflow', async () => {
  const half = await createEngine({ dir: join(dir, 'absent'), config: TINY, compute: 'float16', providers: ['cpu'] });
  const full = await createEngine({ dir: join(dir, 'absent'), config: TINY, compute: 'float32', providers: ['cpu'] });
  assert.match(half.describe().about ?? '', /float16; a step that overflows it is computed again in float32/);
  assert.doesNotMatch(full.describe().about ?? '', /float16/);
});

/**
 * The tiny model with the MLP half of single block 0's linear1 scaled up by
 * S and linear2's matching columns down by S. In float32 the block computes
 * nearly the same (GELU is close to linear for large inputs); in float16 the
 * MLP activation, about S times a unit value, passes 65504 and becomes ∞.
 * The largest weight is S/√32 ≈ 17,700: every weight fits in float16.
 */
const S = 1e5;

function overflowingWeights(): TensorToWrite[] {
  const h = TINY.hidden;
  const mlp = TINY.mlpRatio * h;
  const scaled = (t: TensorToWrite, factor: (i: number) => number): TensorToWrite => ({
    ...t,
    values: t.values.map((v, i) => v * factor(i)),
  });
  return randomWeights(TINY, 3).map((t) => {
    if (t.name === 'single_blocks.0.linear1.weight') return scaled(t, (i) => (Math.floor(i / h) >= 3 * h ? S : 1));
    if (t.name === 'single_blocks.0.linear1.bias') return scaled(t, (i) => (i >= 3 * h ? S : 1));
    if (t.name === 'single_blocks.0.linear2.weight') return scaled(t, (i) => (i % (h + mlp) >= h ? 1 / S : 1));
    return t;
  });
}

const weightsPath = join(dir, 'model.safetensors');
writeFileSync(weightsPath, encodeSafetensors(overflowingWeights(), { format: 'pt' }));
const sessions: OrtSession[] = [];
after(() => Promise.all(sessions.map((s) => s.release())));

async function open(compute: ComputeType): Promise<OrtSession> {
  const { onnxPath } = await prepareModel({ weightsPath, config: TINY, compute, attention: 'fused' });
  const session = await OrtSession.create(onnxPath, { name: `overflow ${compute}`, threads: 1 });
  sessions.push(session);
  return session;
}

function conditions(): Conditions {
  const pixels = TINY.width * TINY.height;
  const next = seeded(21);
  const random = (count: number): Float32Array => Float32Array.from({ length: count }, () => next() * 2 - 1);
  return {
    agnostic: random(3 * pixels),
    garment: random(3 * pixels),
    personPose: random(pixels),
    garmentPose: random(pixels),
    category: 'tops',
  };
}

test('a checkpoint that overflows float16: the fallback gives the float32 result where plain float16 gives no picture', async () => {
  const [half, full] = [await open('float16'), await open('float32')];
  const given = conditions();
  const noise = gaussianNoise(3 * TINY.width * TINY.height, 5);
  const sample = (denoise: Denoiser): Promise<Float32Array> => sampleEuler(noise, denoise, { steps: 4 });

  const plainHalf = sessionDenoiser(half, TINY, given);
  const first = await plainHalf(noise, 0, true);
  assert.ok(nonFiniteCount(first.conditional) > 0, 'the float16 build overflows');
  assert.equal(nonFiniteCount((await sessionDenoiser(full, TINY, given)(noise, 0, true)).conditional), 0, 'float32 does not');
  const broken = await sample(plainHalf);
  assert.ok(nonFiniteCount(broken) > 0, 'without the fallback the picture is not finite');

  const reference = await sample(sessionDenoiser(full, TINY, given));
  assert.ok(reference.every(Number.isFinite));
  assert.ok(
    reference.some((v) => Math.abs(v) < 0.99),
    'the float32 picture is not merely clamped',
  );
  const logs: string[] = [];
  const guarded = withFloat32Fallback(
    plainHalf,
    async () => sessionDenoiser(full, TINY, given),
    (m) => logs.push(m),
  );
  const out = await sample(guarded);
  assert.equal(logs.length, 4, 'every step overflowed and was redone');
  let worst = 0;
  out.forEach((v, i) => (worst = Math.max(worst, Math.abs(v - reference[i]!))));
  assert.ok(worst <= 1e-6, `max difference from float32 ${worst}`);
});
