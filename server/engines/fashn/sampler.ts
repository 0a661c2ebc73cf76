/**
 * The rectified-flow sampler of FASHN VTON, as pure functions: the shifted
 * time schedule (0 = noise → 1 = image), classifier-free guidance mixing,
 * Euler steps with guidance skipped on the last step, and seeded Gaussian
 * noise. The model is behind a `Denoiser` callback, so the arithmetic is
 * tested without a network.
 */

const f = Math.fround;

/** torch.linspace(start, end, count) in float32 (its symmetric two-sided formula). */
export function linspace32(start: number, end: number, count: number): number[] {
  if (count === 1) return [f(start)];
  const step = f(f(end - start) / (count - 1));
  const half = Math.floor(count / 2);
  return Array.from({ length: count }, (_, i) => (i < half ? f(start + f(step * i)) : f(end - f(step * (count - i - 1)))));
}

/** The reference's time_shift: e^μ / (e^μ + (1/t − 1)^σ), in float32 like its tensor arithmetic. */
export function timeShift(mu: number, sigma: number, t: number): number {
  const e = f(Math.exp(mu));
  return f(e / f(e + f(f(f(1 / t) - 1) ** sigma)));
}

/**
 * The reference's get_rf_schedule(steps, mu) with reverse=True: times shifted
 * with −μ and run from 0 (noise) to 1 (clean), so there are more steps near
 * the noise. Returns steps + 1 times.
 */
export function rfSchedule(steps: number, mu = 1.5): number[] {
  return linspace32(1, 0, steps + 1)
    .map((t) => timeShift(-mu, 1, t))
    .reverse();
}

/**
 * v_u + scale·(v_c − v_u), element-wise (the reference's guided velocity),
 * rounded to float32 after each operation as its tensors are: the Euler
 * steps then give the reference's states bit for bit.
 */
export function cfgMix(conditional: Float32Array, unconditional: Float32Array, scale: number): Float32Array {
  const out = new Float32Array(conditional.length);
  for (let i = 0; i < out.length; i++) out[i] = unconditional[i]! + f(scale * f(conditional[i]! - unconditional[i]!));
  return out;
}

/** The model's velocity at time t: the conditional one, and the unconditional one when `guided`. */
export type Denoiser = (
  x: Float32Array,
  t: number,
  guided: boolean,
) => Promise<{ conditional: Float32Array; unconditional?: Float32Array }>;

export interface SamplerOptions {
  steps: number;
  /** Time-shift μ (default 1.5). */
  mu?: number;
  /** CFG scale (default 1.5). */
  guidance?: number;
  /** The last N steps use the conditional velocity only (default 1; stops colour saturation). */
  skipGuidanceLast?: number;
  signal?: AbortSignal;
  /** Called after each step with (steps done, total). */
  onStep?: (done: number, total: number) => void;
}

/** Euler integration of dx/dt = v from the noise to t = 1, then a clamp to [−1, 1]. */
export async function sampleEuler(noise: Float32Array, denoise: Denoiser, options: SamplerOptions): Promise<Float32Array> {
  const { steps, mu = 1.5, guidance = 1.5, skipGuidanceLast = 1 } = options;
  const times = rfSchedule(steps, mu);
  const x = Float32Array.from(noise);
  for (let step = 0; step < steps; step++) {
    options.signal?.throwIfAborted();
    const t = times[step]!;
    const dt = f(times[step + 1]! - t);
    const guided = !(skipGuidanceLast > 0 && step >= steps - skipGuidanceLast);
    const { conditional, unconditional } = await denoise(x, t, guided);
    let velocity = conditional;
    if (guided) {
      if (!unconditional) throw new Error('the denoiser returned no unconditional velocity for a guided step');
      velocity = cfgMix(conditional, unconditional, guidance);
    }
    for (let i = 0; i < x.length; i++) x[i] = x[i]! + f(dt * velocity[i]!);
    options.onStep?.(step + 1, steps);
  }
  for (let i = 0; i < x.length; i++) x[i] = Math.min(1, Math.max(-1, x[i]!));
  return x;
}

/** xoshiro128**: a small, fast generator with 128 bits of state, seeded by splitmix32. */
export function seededUniform(seed: number): () => number {
  let s = seed >>> 0;
  const split = (): number => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
  let [a, b, c, d] = [split(), split(), split(), split()];
  return () => {
    const result = Math.imul(((Math.imul(b, 5) << 7) | (Math.imul(b, 5) >>> 25)) >>> 0, 9) >>> 0;
    const t = (b << 9) >>> 0;
    c ^= a;
    d ^= b;
    b ^= c;
    a ^= d;
    c ^= t;
    d = ((d << 11) | (d >>> 21)) >>> 0;
    return (result + 0.5) / 4294967296;
  };
}

/** `count` standard normal values from `seed` (Box–Muller); the same seed always gives the same values. */
export function gaussianNoise(count: number, seed: number): Float32Array {
  const uniform = seededUniform(seed);
  const out = new Float32Array(count);
  for (let i = 0; i < count; i += 2) {
    const radius = Math.sqrt(-2 * Math.log(uniform()));
    const angle = 2 * Math.PI * uniform();
    out[i] = radius * Math.cos(angle);
    if (i + 1 < count) out[i + 1] = radius * Math.sin(angle);
  }
  return out;
}
