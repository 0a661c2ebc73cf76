/**
 * FASHN VTON sampling against the PyTorch reference's own runs
 * (shared/reference/fashn-goldens): the shifted schedule, which steps are
 * guided, the Euler arithmetic alone (a denoiser replaying the reference's
 * velocities), whole 4- and 30-step runs of the tiny golden model from the
 * reference's noise, and the bytes the result becomes. Bounds are about ten
 * times what the goldens' README measured, except where it found equality.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { sessionDenoiser } from '../../server/engines/fashn/denoiser.ts';
import type { PadPlan } from '../../server/engines/fashn/preprocess.ts';
import { unpadToRgb } from '../../server/engines/fashn/preprocess.ts';
import { rfSchedule, sampleEuler, type Denoiser } from '../../server/engines/fashn/sampler.ts';
import type { ComputeType } from '../../server/onnx/graph.ts';
import {
  describeDiscrepancy,
  discrepancy,
  goldensMissing,
  loadGoldens,
  openGoldenModel,
  rms,
  type GoldenModel,
  type GoldenSampling,
  type Goldens,
} from '../helpers/fashn-goldens.ts';

const goldens: Goldens | null = goldensMissing ? null : loadGoldens();
const skip = goldensMissing;
const models = new Map<ComputeType, Promise<GoldenModel>>();
after(async () => Promise.all([...models.values()].map(async (model) => (await model).release())));

/** One build per compute type for the whole file (fused attention, as the engine uses). */
function model(compute: ComputeType): Promise<GoldenModel> {
  let built = models.get(compute);
  if (!built) models.set(compute, (built = openGoldenModel(goldens!.config, compute, 'fused')));
  return built;
}

function run(steps: 4 | 30): GoldenSampling {
  const found = goldens!.index.sampling[String(steps)];
  if (!found) throw new Error(`no ${steps}-step run in tensors.json`);
  return found;
}

/** The reference's sampler settings as the engine's sampler takes them. */
function options(sampling: GoldenSampling): Parameters<typeof sampleEuler>[2] {
  return { steps: sampling.steps, mu: sampling.mu, guidance: sampling.guidance, skipGuidanceLast: sampling.skip_cfg_last_n_steps };
}

/** The person's plan from the run's padding (README section 3: the person fills 96×108 of 96×144). */
function personPlan(sampling: GoldenSampling): PadPlan {
  const [left, top, right, bottom] = sampling.padding_ltrb;
  const { width, height } = goldens!.config;
  return { width: width - left - right, height: height - top - bottom, left, top, right, bottom };
}

/** A denoiser that records each x and t it is given and answers with `inner`. */
function recording(inner: Denoiser): { denoise: Denoiser; states: Float32Array[]; times: number[]; guided: boolean[] } {
  const record = { states: [] as Float32Array[], times: [] as number[], guided: [] as boolean[] };
  const denoise: Denoiser = (x, t, guided) => {
    record.states.push(Float32Array.from(x));
    record.times.push(t);
    record.guided.push(guided);
    return inner(x, t, guided);
  };
  return { denoise, ...record };
}

/** Step `step` of a [steps, 3, H, W] tensor. */
function stepOf(all: Float32Array, step: number, steps: number): Float32Array {
  const size = all.length / steps;
  return all.subarray(step * size, (step + 1) * size);
}

test('rfSchedule gives every stored schedule to within a float32 ulp, the 4-step one bit for bit', { skip }, (t) => {
  let worst = 0;
  let values = 0;
  let differing = 0;
  for (const { steps, mu, t: expected } of goldens!.index.schedules) {
    const times = rfSchedule(steps, mu);
    assert.equal(times.length, expected.length, `${steps} steps, μ ${mu}`);
    times.forEach((time, i) => {
      const d = Math.abs(time - expected[i]!);
      assert.ok(d <= 2 ** -23, `${steps} steps, μ ${mu}, value ${i}: ${time} vs ${expected[i]}`);
      worst = Math.max(worst, d);
      values++;
      if (d > 0) differing++;
    });
  }
  t.diagnostic(
    `${goldens!.index.schedules.length} schedules, ${values} values: max abs ${worst.toExponential(2)}, ${differing} not bit-identical`,
  );
  assert.deepEqual(rfSchedule(4, 1.5), run(4).schedule);
  const thirty = rfSchedule(30, 1.5);
  assert.ok(thirty.every((time, i) => Math.abs(time - run(30).schedule[i]!) <= 2 ** -23));
});

for (const steps of [4, 30] as const) {
  test(`${steps} steps: the model sees the reference's times, guided on every step but the last`, { skip }, async () => {
    const sampling = run(steps);
    const zero: Denoiser = async (x, _t, guided) =>
      guided
        ? { conditional: new Float32Array(x.length), unconditional: new Float32Array(x.length) }
        : { conditional: new Float32Array(x.length) };
    const record = recording(zero);
    await sampleEuler(new Float32Array(3), record.denoise, options(sampling));
    assert.deepEqual(record.guided, sampling.guided);
    record.times.forEach((time, i) => assert.ok(Math.abs(time - sampling.t_per_step[i]!) <= 2 ** -23, `step ${i}`));
  });
}

test("the Euler steps alone, fed the reference's velocities, reach its states and its final image bit for bit", { skip }, async () => {
  const g = goldens!;
  const [states, vc, vu] = [g.f32('sample4_states'), g.f32('sample4_vc'), g.f32('sample4_vu')];
  let step = 0;
  const replay: Denoiser = async (_x, _t, guided) => {
    const conditional = stepOf(vc, step, 4).slice();
    const unconditional = stepOf(vu, step, 4).slice();
    step++;
    return guided ? { conditional, unconditional } : { conditional };
  };
  const record = recording(replay);
  const final = await sampleEuler(g.f32('noise'), record.denoise, options(run(4)));
  record.states.forEach((state, i) => assert.deepEqual(state, stepOf(states, i, 4).slice(), `state ${i}`));
  assert.deepEqual(final, g.f32('sample4_final'));
});

test('4 steps of the float32 model from the reference noise: its states and its final image', { skip }, async (t) => {
  const g = goldens!;
  const { session } = await model('float32');
  const record = recording(sessionDenoiser(session, g.config, g.conditions()));
  const final = await sampleEuler(g.f32('noise'), record.denoise, options(run(4)));
  const states = g.f32('sample4_states');
  record.states.forEach((state, i) => {
    const d = discrepancy(state, stepOf(states, i, 4));
    t.diagnostic(`state ${i}: ${describeDiscrepancy(d)}`);
    assert.ok(d.relL2 <= 2e-6, `state ${i}: ${describeDiscrepancy(d)}`);
  });
  const d = discrepancy(final, g.f32('sample4_final'));
  t.diagnostic(`final: ${describeDiscrepancy(d)}`);
  assert.ok(d.maxAbs <= 2e-5 && d.relL2 <= 5e-6, describeDiscrepancy(d));
});

test('30 steps of the float32 model from the reference noise: the state RMS at every step and the final image', { skip }, async (t) => {
  const g = goldens!;
  const sampling = run(30);
  const { session } = await model('float32');
  const record = recording(sessionDenoiser(session, g.config, g.conditions()));
  const final = await sampleEuler(g.f32('noise'), record.denoise, options(sampling));
  let worst = 0;
  record.states.forEach((state, i) => {
    const relative = Math.abs(rms(state) / sampling.state_rms[i]! - 1);
    worst = Math.max(worst, relative);
    assert.ok(relative <= 3e-7, `step ${i}: RMS ${rms(state)} vs ${sampling.state_rms[i]}`);
  });
  const d = discrepancy(final, g.f32('sample30_final'));
  t.diagnostic(`state RMS within ${worst.toExponential(2)} relative; final: ${describeDiscrepancy(d)}`);
  assert.ok(d.maxAbs <= 2e-5 && d.relL2 <= 5e-6, describeDiscrepancy(d));
});

test('4 steps of the float16 model stay within half precision of the reference', { skip }, async (t) => {
  const g = goldens!;
  const { session } = await model('float16');
  const final = await sampleEuler(g.f32('noise'), sessionDenoiser(session, g.config, g.conditions()), options(run(4)));
  const d = discrepancy(final, g.f32('sample4_final'));
  t.diagnostic(`final: ${describeDiscrepancy(d)}`);
  assert.ok(d.maxAbs <= 1.5e-2 && d.relL2 <= 3e-3, describeDiscrepancy(d));
});

/** How many bytes differ, by how much at most. */
function byteDifferences(actual: Uint8Array, expected: Uint8Array): { differing: number; worst: number } {
  let differing = 0;
  let worst = 0;
  actual.forEach((v, i) => {
    const d = Math.abs(v - expected[i]!);
    if (d > 0) differing++;
    worst = Math.max(worst, d);
  });
  return { differing, worst };
}

for (const steps of [4, 30] as const) {
  test(`${steps} steps: the reference's own image becomes exactly its bytes, the engine's within a level`, { skip }, async (t) => {
    const g = goldens!;
    const sampling = run(steps);
    const plan = personPlan(sampling);
    const { width: W, height: H } = g.config;
    const whole: PadPlan = { width: W, height: H, left: 0, top: 0, right: 0, bottom: 0 };
    const reference = g.f32(`sample${steps}_final`);
    assert.deepEqual(unpadToRgb(reference, whole), g.u8(`sample${steps}_rgb`));
    assert.deepEqual(unpadToRgb(reference, plan), g.u8(`sample${steps}_rgb_unpadded`));

    const { session } = await model('float32');
    const ours = await sampleEuler(g.f32('noise'), sessionDenoiser(session, g.config, g.conditions()), options(sampling));
    const { differing, worst } = byteDifferences(unpadToRgb(ours, plan), g.u8(`sample${steps}_rgb_unpadded`));
    t.diagnostic(`${differing} of ${plan.width * plan.height * 3} bytes differ, by at most ${worst}`);
    assert.ok(worst <= 1 && differing <= 20, `${differing} bytes differ, by up to ${worst}`);
  });
}
