/**
 * A run's named stages, the engine kit's one way to report progress, time its parts and stop when cancelled: a
 * cancelled run stops at the next stage boundary with the signal's own reason (`signal.throwIfAborted()`), and
 * the host reports the cancel itself. Work inside a long stage (the diffusion sampler's steps) checks the same
 * signal the same way.
 */
import type { EngineRunOptions, EngineStage, StageTiming } from './types.ts';

export class RunStages {
  /** Each stage's name and wall time, in the order they ran. */
  readonly timings: StageTiming[] = [];

  constructor(private readonly options: EngineRunOptions) {}

  get signal(): AbortSignal {
    return this.options.signal;
  }

  /**
   * Runs one named stage, reported as `stage` at `progress` (0..1 of the whole run) as it starts; the run stops
   * before it and after it when cancelled.
   */
  async run<T>(name: string, stage: EngineStage, progress: number, work: () => T | Promise<T>): Promise<T> {
    this.options.signal.throwIfAborted();
    this.options.onProgress({ stage, progress });
    const started = performance.now();
    try {
      return await work();
    } finally {
      this.timings.push({ name, ms: Math.round((performance.now() - started) * 10) / 10 });
      this.options.signal.throwIfAborted();
    }
  }
}
