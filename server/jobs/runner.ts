/**
 * The job runner: an in-process queue of pending generations, with a fixed
 * number of jobs per device at once (the CPU's is the appliance's engine
 * workers) and never more per engine than its host pool holds, so a started
 * job always has an engine host free. Engines run in their host processes
 * (see engines/engine-host.ts); the runner records attempts, results and
 * failures through the store and wakes waiting requests.
 *
 * Every attempt is made durable before the engine starts, so after a crash
 * the attempt counts: a generation that keeps killing the appliance fails
 * after `maxAttempts` with its credit released instead of looping forever.
 *
 * A write the disk refuses (full, failing) never drops a job: the runner keeps
 * trying it, so the work resumes by itself within seconds of the disk
 * recovering, with no restart.
 */
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  EngineError,
  type EngineDescription,
  type EngineProgress,
  type EngineRequest,
  type EngineResult,
  type EngineStage,
} from '../engines/types.ts';
import { completeGeneration, failGeneration, requeue, startAttempt } from './generations.ts';
import type { TerminalNotifier } from './notifier.ts';
import { markErasedAnywhere } from './retention.ts';
import { removeImage, storeImage } from '../images/files.ts';
import { probeImage } from '../images/probe.ts';
import { convertImage } from '../engines/encode.ts';
import { isStorageFailure } from '../kernel/errors.ts';
import { findGeneration, type Archive } from '../store/archive.ts';
import type { Store } from '../store/db.ts';
import type { GenerationRecord, StoredImage } from '../store/schema.ts';
import type { ImageFormat } from '../kernel/vocabulary.ts';

/** Waits between tries of a write the disk refused: doubling from the first to the last. */
const STORAGE_RETRY_MS = { first: 250, last: 2000 };

/** What the runner needs from the engine registry. */
export interface EngineCatalog {
  list(): EngineDescription[];
  get(id: string): EngineDescription | undefined;
  defaultEngine(): EngineDescription | undefined;
  /** Reads the list again where it can be stale (a shared database's fleet); a submit does before refusing. */
  refresh?(): Promise<void>;
  deviceOf(id: string): string | undefined;
  /** Jobs the engine may run at once. */
  concurrencyOf(id: string): number;
  run(
    id: string,
    request: EngineRequest,
    options: { signal: AbortSignal; onProgress: (p: EngineProgress) => void; timeoutMs: number },
  ): Promise<EngineResult>;
}

export interface JobRunnerOptions {
  store: Store;
  /** Where finished records move; read to erase the inputs of one that moved already. */
  archive: Archive;
  engines: EngineCatalog;
  notifier: TerminalNotifier;
  clock: () => Date;
  maxAttempts: number;
  jobTimeoutMs: number;
  /** Jobs that may run at once on each device; a device not named runs one. */
  deviceConcurrency: Record<string, number>;
  eraseInputsWhenDone: boolean;
  log: (message: string, error?: unknown) => void;
}

/** The live part of a pending generation's state, never persisted. */
export interface LiveProgress {
  stage: 'queued' | EngineStage;
  progress: number;
}

interface RunningJob {
  controller: AbortController;
  /** The busy counters the job holds a slot in: its device's and its engine's. */
  slots: [string, string];
  live: LiveProgress;
  reason: 'cancel' | 'shutdown' | null;
}

export class JobRunner {
  private readonly options: JobRunnerOptions;
  private queue: string[] = [];
  private readonly running = new Map<string, RunningJob>();
  private readonly busy = new Map<string, number>();
  private readonly settled = new Set<Promise<void>>();
  private stopping = false;
  /** Aborts the waits between storage retries when the runner stops. */
  private readonly stopped = new AbortController();

  constructor(options: JobRunnerOptions) {
    this.options = options;
  }

  /** Queues every pending generation again after a start; fails those that used up their attempts. */
  async recover(): Promise<void> {
    const { store, clock, maxAttempts } = this.options;
    const failed: string[] = [];
    const queued = await store.mutate((state) => {
      const now = clock();
      const pending = Object.values(state.generations)
        .filter((record) => record.status === 'pending')
        .sort((a, b) => (a.id < b.id ? -1 : 1));
      const again: string[] = [];
      for (const record of pending) {
        if (record.stage === 'running' && record.attempts >= maxAttempts) {
          failGeneration(
            state,
            record.id,
            { code: 'engine_failed', message: `The appliance stopped during this try-on ${record.attempts} times; it was given up.` },
            now,
          );
          failed.push(record.id);
        } else {
          requeue(state, record.id, { refundAttempt: false });
          again.push(record.id);
        }
      }
      return again;
    });
    for (const id of failed) this.options.notifier.publish(id);
    for (const id of queued) this.enqueue(id);
  }

  /** Adds a pending generation to the queue. */
  enqueue(id: string): void {
    if (this.stopping || this.queue.includes(id) || this.running.has(id)) return;
    this.queue.push(id);
    this.pump();
  }

  /** Generations queued or running. */
  depth(): number {
    return this.queue.length + this.running.size;
  }

  /** Stage and progress of a pending generation. */
  live(id: string): LiveProgress {
    return this.running.get(id)?.live ?? { stage: 'queued', progress: 0 };
  }

  /** Stops work on a generation that was canceled (its state is already durable). */
  cancel(id: string): void {
    this.queue = this.queue.filter((queued) => queued !== id);
    const job = this.running.get(id);
    if (job) {
      job.reason = 'cancel';
      job.controller.abort();
    }
  }

  /** Stops taking jobs and puts running ones back in the queue (without spending an attempt). */
  async stop(): Promise<void> {
    this.stopping = true;
    this.stopped.abort();
    this.queue = [];
    for (const job of this.running.values()) {
      job.reason = 'shutdown';
      job.controller.abort();
    }
    await Promise.allSettled([...this.settled]);
  }

  private pump(): void {
    if (this.stopping) return;
    for (let i = 0; i < this.queue.length;) {
      const id = this.queue[i]!;
      const record = this.options.store.state.generations[id];
      if (!record || record.status !== 'pending') {
        this.queue.splice(i, 1);
        continue;
      }
      const { engines, deviceConcurrency } = this.options;
      const device = engines.deviceOf(record.engine) ?? 'cpu';
      const slots: [string, string] = [`device:${device}`, `engine:${record.engine}`];
      const limits = [deviceConcurrency[device] ?? 1, engines.concurrencyOf(record.engine)];
      if (slots.some((slot, k) => (this.busy.get(slot) ?? 0) >= limits[k]!)) {
        i++;
        continue;
      }
      this.queue.splice(i, 1);
      for (const slot of slots) this.busy.set(slot, (this.busy.get(slot) ?? 0) + 1);
      const job: RunningJob = { controller: new AbortController(), slots, live: { stage: 'queued', progress: 0 }, reason: null };
      this.running.set(id, job);
      const done = this.execute(id, job)
        .catch((error) => this.options.log(`job ${id} failed unexpectedly`, error))
        .finally(() => {
          this.running.delete(id);
          for (const slot of slots) this.busy.set(slot, (this.busy.get(slot) ?? 1) - 1);
          this.settled.delete(done);
          this.pump();
        });
      this.settled.add(done);
    }
  }

  private async execute(id: string, job: RunningJob): Promise<void> {
    const { store, engines, clock } = this.options;
    const record = store.state.generations[id];
    if (!record) return;
    if (!engines.get(record.engine)?.ready) {
      await this.fail(id, { code: 'engine_unavailable', message: `The engine "${record.engine}" is not installed or not ready.` });
      return;
    }
    if (!(await this.durably(() => store.mutate((state) => startAttempt(state, id, clock()))))) return;
    const started = store.state.generations[id]!;
    job.live = { stage: 'preprocessing', progress: 0 };
    const workDir = join(store.dataDir, 'work', `${id}-${started.attempts}`);
    await this.durably(() => mkdir(workDir, { recursive: true }));
    try {
      const result = await engines.run(started.engine, this.request(started, workDir), {
        signal: job.controller.signal,
        onProgress: (progress) => {
          job.live = { stage: progress.stage, progress: Math.max(job.live.progress, Math.min(1, progress.progress)) };
        },
        timeoutMs: this.options.jobTimeoutMs,
      });
      job.live = { stage: 'finishing', progress: Math.max(job.live.progress, 0.95) };
      await this.finish(id, result);
    } catch (error) {
      await this.handleFailure(id, job, error);
    } finally {
      await rm(workDir, { recursive: true, force: true });
    }
  }

  private request(record: GenerationRecord, workDir: string): EngineRequest {
    const { dataDir } = this.options.store;
    return engineRequest(record, (image) => join(dataDir, image.file), workDir);
  }

  private async finish(id: string, result: EngineResult): Promise<void> {
    const { store, clock } = this.options;
    const record = store.state.generations[id];
    if (!record) return;
    const format = record.params.outputFormat;
    const image = await resultImage(result, format);
    const stored = await this.durably(() =>
      storeImage(store.dataDir, id, 'result', { bytes: image.bytes, format, width: image.width, height: image.height }),
    );
    const completed = await this.durably(() => store.mutate((state) => completeGeneration(state, id, stored, clock())));
    if (!completed) {
      await removeImage(store.dataDir, stored);
      return;
    }
    if (this.options.eraseInputsWhenDone) await this.eraseInputs(id);
    this.options.notifier.publish(id);
  }

  private async handleFailure(id: string, job: RunningJob, error: unknown): Promise<void> {
    const { store, maxAttempts } = this.options;
    if (job.reason === 'cancel') return;
    if (job.reason === 'shutdown') {
      await store.mutate((state) => requeue(state, id, { refundAttempt: true }));
      return;
    }
    const engineError = error instanceof EngineError ? error : null;
    if (!engineError) this.options.log(`engine run for ${id} failed`, error);
    const attempts = store.state.generations[id]?.attempts ?? maxAttempts;
    if (engineError?.retryable && attempts < maxAttempts) {
      if (await this.durably(() => store.mutate((state) => requeue(state, id, { refundAttempt: false })))) {
        this.queue.push(id);
      }
      return;
    }
    await this.fail(
      id,
      engineError
        ? { code: engineError.code, message: engineError.message }
        : { code: 'engine_failed', message: 'The engine failed on this try-on.' },
    );
  }

  private async fail(id: string, error: { code: EngineError['code']; message: string }): Promise<void> {
    const { store, clock } = this.options;
    if (await this.durably(() => store.mutate((state) => failGeneration(state, id, error, clock())))) {
      if (this.options.eraseInputsWhenDone) await this.eraseInputs(id);
      this.options.notifier.publish(id);
    }
  }

  private async eraseInputs(id: string): Promise<void> {
    const { store, archive } = this.options;
    // The archiver may have moved the finished record already.
    const inputs = findGeneration(store.state, archive, id)?.inputs;
    if (!inputs) return;
    await this.durably(() => markErasedAnywhere(store, archive, id, 'inputs'));
    for (const image of [inputs.selfie, ...inputs.items]) await removeImage(store.dataDir, image);
  }

  /**
   * Runs a write until the disk takes it: a storage failure is tried again after a doubling wait, so a job
   * outlives a full disk in memory. Other errors, and any failure once the runner stops, are thrown (the
   * durable state then still says pending, and the next start runs the job again).
   */
  private async durably<T>(write: () => Promise<T>): Promise<T> {
    for (let wait = STORAGE_RETRY_MS.first; ; wait = Math.min(wait * 2, STORAGE_RETRY_MS.last)) {
      try {
        return await write();
      } catch (error) {
        if (!isStorageFailure(error) || this.stopping) throw error;
        if (wait === STORAGE_RETRY_MS.first) this.options.log('a write failed; trying it again until the disk takes it', error);
        await sleep(wait, undefined, { signal: this.stopped.signal }).catch(() => undefined);
      }
    }
  }
}

/** What an engine is asked to do for a try-on; `pathOf` says where each input image is on this machine's disk. */
export function engineRequest(record: GenerationRecord, pathOf: (image: StoredImage) => string, workDir: string): EngineRequest {
  const inputs = record.inputs;
  if (!inputs) throw new EngineError('engine_failed', 'The inputs of this try-on were erased.');
  const ref = (image: StoredImage) => ({ path: pathOf(image), format: image.format, width: image.width, height: image.height });
  const request: EngineRequest = {
    genId: record.id,
    selfie: ref(inputs.selfie),
    items: inputs.items.map(ref),
    categories: record.params.categories,
    size: record.params.size,
    personSize: record.params.personSize,
    fit: record.params.fit,
    styling: record.params.styling,
    outputFormat: record.params.outputFormat,
    workDir,
  };
  if (record.params.occasion !== undefined) request.occasion = record.params.occasion;
  if (record.params.seed !== undefined) request.seed = record.params.seed;
  return request;
}

/** An engine's result in the format the try-on asked for, encoded once: one already in it is kept as it is. */
export async function resultImage(
  result: EngineResult,
  format: ImageFormat,
): Promise<{ bytes: Uint8Array; width: number; height: number }> {
  const probe =
    result.format === format ? probeImage(Buffer.from(result.image.buffer, result.image.byteOffset, result.image.length)) : null;
  return probe && probe.format === format
    ? { bytes: result.image, width: probe.width, height: probe.height }
    : convertImage(result.image, format);
}
