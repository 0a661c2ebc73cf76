/** The FASHN VTON sampler: schedule, CFG mixing, Euler steps, seeded noise; pure arithmetic, no model. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  cfgMix,
  gaussianNoise,
  linspace32,
  rfSchedule,
  sampleEuler,
  timeShift,
  type Denoiser,
} from '../../server/engines/fashn/sampler.ts';

test('the schedule is the shifted linspace from 0 (noise) to 1 (image), denser near the noise', () => {
  const times = rfSchedule(30, 1.5);
  assert.equal(times.length, 31);
  assert.equal(times[0], 0);
  assert.equal(times[30], 1);
  for (let i = 1; i <= 30; i++) {
    // e^-μ / (e^-μ + 1/s − 1) with s = i/30, in plain float64
    const s = i / 30;
    const expected = Math.exp(-1.5) / (Math.exp(-1.5) + 1 / s - 1);
    assert.ok(Math.abs(times[i]! - expected) < 1e-6, `step ${i}: ${times[i]} vs ${expected}`);
    assert.ok(times[i]! > times[i - 1]!);
    assert.ok(i === 30 || times[i]! < s, 'shifted towards the noise');
  }
  assert.ok(Math.abs(times[1]! - 0.0076354) < 1e-6);
  assert.deepEqual(linspace32(1, 0, 5), [1, 0.75, 0.5, 0.25, 0]);
  assert.equal(timeShift(0, 1, 0.3), Math.fround(0.3), 'μ = 0 is no shift');
});

test('CFG mixing is v_u + s·(v_c − v_u)', () => {
  const mixed = cfgMix(Float32Array.of(1, -2, 0.5), Float32Array.of(0.5, 0, 0.5), 1.5);
  assert.deepEqual([...mixed], [1.25, -3, 0.5]);
  assert.deepEqual([...cfgMix(Float32Array.of(3), Float32Array.of(1), 1)], [3], 'scale 1 is the conditional velocity');
});

test('Euler steps with guidance on every step but the last, then a clamp; the same as a plain loop', async () => {
  const calls: { t: number; guided: boolean }[] = [];
  // v_c pulls towards 0.8, v_u towards −0.3: known velocities to integrate by hand.
  const denoise: Denoiser = async (x, t, guided) => {
    calls.push({ t, guided });
    const conditional = x.map((v) => 0.8 - v);
    return guided ? { conditional, unconditional: x.map((v) => -0.3 - v) } : { conditional };
  };
  const steps: number[] = [];
  const noise = Float32Array.of(2, -0.5, 0);
  const out = await sampleEuler(noise, denoise, { steps: 4, onStep: (done) => steps.push(done) });
  assert.deepEqual(steps, [1, 2, 3, 4]);
  assert.deepEqual(
    calls.map((c) => c.guided),
    [true, true, true, false],
  );
  const times = rfSchedule(4, 1.5);
  assert.deepEqual(
    calls.map((c) => c.t),
    times.slice(0, 4),
  );
  // In float32 after every operation, as the reference's tensors compute.
  const f = Math.fround;
  const expected = [...noise].map((x0) => {
    let x = f(x0);
    for (let i = 0; i < 4; i++) {
      const vc = f(0.8 - x);
      const vu = f(-0.3 - x);
      const v = i < 3 ? f(vu + f(1.5 * f(vc - vu))) : vc;
      x = f(x + f(f(times[i + 1]! - times[i]!) * v));
    }
    return Math.min(1, Math.max(-1, x));
  });
  assert.deepEqual([...out], expected);
  assert.deepEqual([...noise], [2, -0.5, 0], 'the noise is not changed in place');
});

test('a cancelled run stops before the next step', async () => {
  const controller = new AbortController();
  let calls = 0;
  const denoise: Denoiser = async (x) => {
    calls++;
    if (calls === 2) controller.abort(new Error('stop'));
    return { conditional: x, unconditional: x };
  };
  await assert.rejects(sampleEuler(new Float32Array(2), denoise, { steps: 5, signal: controller.signal }), /stop/);
  assert.equal(calls, 2);
});

test('seeded noise is reproducible, differs between seeds and is standard normal', () => {
  const a = gaussianNoise(20_001, 7);
  assert.deepEqual(a, gaussianNoise(20_001, 7));
  assert.notDeepEqual(a.slice(0, 10), gaussianNoise(10, 8));
  const mean = a.reduce((s, v) => s + v, 0) / a.length;
  const variance = a.reduce((s, v) => s + (v - mean) ** 2, 0) / a.length;
  assert.ok(Math.abs(mean) < 0.03, `mean ${mean}`);
  assert.ok(Math.abs(variance - 1) < 0.05, `variance ${variance}`);
  assert.ok(a.every(Number.isFinite));
});
