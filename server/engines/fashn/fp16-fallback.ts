/**
 * float16 that cannot fail silently. In half precision an activation past
 * 65504 becomes ∞ and soon NaN; the sampler's clamp would turn that into
 * flat white or black pixels without a word. So every velocity the float16
 * model returns is checked, and a step with any non-finite value is computed
 * again by the float32 model, which is opened the first time it is needed
 * (most runs never need it, and it holds twice the memory).
 */
import type { Denoiser } from './sampler.ts';

/** How many values are NaN or ±∞. */
export function nonFiniteCount(values: Float32Array | undefined): number {
  let count = 0;
  if (values) for (let i = 0; i < values.length; i++) if (!Number.isFinite(values[i]!)) count++;
  return count;
}

function velocityNonFinite(out: Awaited<ReturnType<Denoiser>>): number {
  return nonFiniteCount(out.conditional) + nonFiniteCount(out.unconditional);
}

/**
 * `primary` (the float16 model), with any step whose velocity is not finite
 * computed again by `fallback()` (the float32 model). Throws when even the
 * float32 velocity is not finite: a picture of clamped NaNs is no answer.
 */
export function withFloat32Fallback(primary: Denoiser, fallback: () => Promise<Denoiser>, log: (message: string) => void): Denoiser {
  return async (x, t, guided) => {
    const out = await primary(x, t, guided);
    const bad = velocityNonFinite(out);
    if (bad === 0) return out;
    log(`float16 overflow at t = ${t.toFixed(4)} (${bad} values not finite): that step is computed again in float32`);
    const again = await (await fallback())(x, t, guided);
    const still = velocityNonFinite(again);
    if (still > 0) throw new Error(`the model's velocity at t = ${t.toFixed(4)} is not finite even in float32 (${still} values)`);
    return again;
  };
}

/** Something opened on first use and released once: the float32 session behind the fallback. */
export interface Lazy<T extends { release(): Promise<void> }> {
  /** Opens it on the first call; later and concurrent calls share that one. */
  get(): Promise<T>;
  /** Releases it if it was opened; a later get() opens it again. */
  release(): Promise<void>;
}

/** Wraps `open` so it runs at most once at a time and its result is kept; a failed open is tried again next time. */
export function lazily<T extends { release(): Promise<void> }>(open: () => Promise<T>): Lazy<T> {
  let pending: Promise<T> | null = null;
  return {
    get() {
      pending ??= open().catch((error: unknown) => {
        pending = null;
        throw error;
      });
      return pending;
    },
    async release() {
      const opened = pending;
      pending = null;
      await opened?.then(
        (value) => value.release(),
        () => undefined,
      );
    },
  };
}
