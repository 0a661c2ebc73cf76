/**
 * Order statistics for latency samples: nearest-rank percentiles, never
 * means, because a shared two-core machine has a long noisy tail.
 */

/** A latency sample summarised in milliseconds. */
export interface LatencySummary {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** The nearest-rank `p`-th percentile (0–100) of ascending `sorted`. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1]!;
}

/** p50, p90, p99 and max of `samples` (milliseconds), rounded to 0.01 ms. */
export function summarize(samples: readonly number[]): LatencySummary {
  const sorted = [...samples].sort((a, b) => a - b);
  const round = (value: number) => Math.round(value * 100) / 100;
  return {
    n: sorted.length,
    p50: round(percentile(sorted, 50)),
    p90: round(percentile(sorted, 90)),
    p99: round(percentile(sorted, 99)),
    max: round(sorted[sorted.length - 1] ?? Number.NaN),
  };
}

/** The median of `samples`. */
export function median(samples: readonly number[]): number {
  return percentile(
    [...samples].sort((a, b) => a - b),
    50,
  );
}

/** Runs `count` calls of `fn`, `width` at a time: each call's own latency, and the wall time of all (ms). */
export async function timed(
  count: number,
  width: number,
  fn: (i: number) => Promise<unknown>,
): Promise<{ each: number[]; wallMs: number }> {
  const each: number[] = [];
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) {
        const i = next++;
        const t = performance.now();
        await fn(i);
        each.push(performance.now() - t);
      }
    }),
  );
  return { each, wallMs: performance.now() - start };
}

/** `value` rounded to `digits` decimals. */
export function round(value: number, digits = 2): number {
  return Math.round(value * 10 ** digits) / 10 ** digits;
}

/** The nearest-rank `at`-th percentile of unsorted `samples`, rounded to 0.01. */
export function percentileOf(samples: readonly number[], at: number): number {
  return round(
    percentile(
      [...samples].sort((a, b) => a - b),
      at,
    ),
  );
}
