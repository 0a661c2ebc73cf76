/**
 * The server side of one engine host process: spawns the child, runs one job
 * at a time in it, and turns every way a child can go wrong (crash, hang,
 * memory blow-up, cancel) into a rejected job instead of a dead server.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { HostCommand, HostEvent } from './host-protocol.ts';
import {
  EngineError,
  type EngineDescription,
  type EngineProgress,
  type EngineRequest,
  type EngineResult,
  type EngineSpec,
} from './types.ts';

/** Limits and timings for an EngineHost; every field has a default. */
export interface EngineHostOptions {
  /** Resident memory above which the child is killed (default 4096). */
  memoryLimitMb?: number;
  /** How long spawn + import + load may take (default 60 s); a spec's loadTimeoutMs wins. */
  initTimeoutMs?: number;
  /** How long a cancelled job may take to stop before the child is killed (default 2 s). */
  cancelGraceMs?: number;
  /** How long stop() waits for a graceful exit (default 2 s). */
  stopGraceMs?: number;
  /** How often resident memory is sampled (default 250 ms). */
  sampleIntervalMs?: number;
  /** The child entry point (default engine-child.ts next to this file). */
  hostPath?: string;
}

/** Per-job options for EngineHost.run and EngineRegistry.run. */
export interface HostRunOptions {
  signal?: AbortSignal;
  onProgress?: (progress: EngineProgress) => void;
  /** Kill the engine and fail with code 'timeout' after this long. */
  timeoutMs?: number;
}

interface PendingInit {
  resolve: (description: EngineDescription) => void;
  timer: NodeJS.Timeout;
}

interface PendingJob {
  jobId: string;
  resolve: (result: EngineResult) => void;
  reject: (error: Error) => void;
  onProgress: ((progress: EngineProgress) => void) | undefined;
  cancelled: boolean;
  timers: NodeJS.Timeout[];
  cleanup: () => void;
}

const defaultHostPath = fileURLToPath(new URL('./engine-child.ts', import.meta.url));

/** Creates the error a cancelled job rejects with (name 'AbortError'). */
export function abortError(): Error {
  const error = new Error('the generation was cancelled');
  error.name = 'AbortError';
  return error;
}

/** Hosts one engine (one EngineSpec) in one child process, one job at a time. */
export class EngineHost {
  readonly spec: EngineSpec;
  private readonly memoryLimitMb: number;
  private readonly initTimeoutMs: number;
  private readonly cancelGraceMs: number;
  private readonly stopGraceMs: number;
  private readonly sampleIntervalMs: number;
  private readonly hostPath: string;

  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  /** Why we killed the current child; the exit handler reports it. */
  private killReason: Error | undefined;
  private sampler: NodeJS.Timeout | undefined;
  private starting: Promise<EngineDescription> | undefined;
  private init: PendingInit | undefined;
  private job: PendingJob | undefined;
  private busy = false;
  private stopped = false;
  private lastDescription: EngineDescription | undefined;

  constructor(spec: EngineSpec, options: EngineHostOptions = {}) {
    this.spec = spec;
    this.memoryLimitMb = options.memoryLimitMb ?? 4096;
    this.initTimeoutMs = spec.loadTimeoutMs ?? options.initTimeoutMs ?? 60_000;
    this.cancelGraceMs = options.cancelGraceMs ?? 2_000;
    this.stopGraceMs = options.stopGraceMs ?? 2_000;
    this.sampleIntervalMs = options.sampleIntervalMs ?? 250;
    this.hostPath = options.hostPath ?? defaultHostPath;
  }

  /** The description from the latest init, if any. */
  get description(): EngineDescription | undefined {
    return this.lastDescription;
  }

  /**
   * Spawns the child and loads the engine. Never rejects: an engine that
   * cannot load resolves with `ready: false` and a `reason`.
   */
  start(): Promise<EngineDescription> {
    if (this.stopped) return Promise.resolve(this.notReady('the engine host was stopped'));
    if (this.child && this.lastDescription?.ready && !this.starting) {
      return Promise.resolve(this.lastDescription);
    }
    this.starting ??= this.spawnAndInit().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  /** Runs one job; (re)starts the child first when it is not running. */
  async run(request: EngineRequest, options: HostRunOptions = {}): Promise<EngineResult> {
    if (this.stopped) throw new EngineError('engine_unavailable', 'the engine host was stopped');
    if (this.busy) throw new Error('EngineHost runs one job at a time');
    this.busy = true;
    try {
      const { signal } = options;
      if (signal?.aborted) throw abortError();
      const description = await raceAbort(this.start(), signal);
      if (!description.ready) {
        throw new EngineError('engine_unavailable', description.reason ?? 'the engine is not ready');
      }
      if (signal?.aborted) throw abortError();
      return await this.runJob(request, options);
    } finally {
      this.busy = false;
    }
  }

  /** Disconnects the child (it exits on its own), killing it after a short grace. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.stopChild(new EngineError('engine_unavailable', 'the engine host was stopped'));
  }

  private async spawnAndInit(): Promise<EngineDescription> {
    await this.exited;
    if (this.stopped) return this.notReady('the engine host was stopped');
    let child: ChildProcess;
    try {
      child = fork(this.hostPath, [], {
        serialization: 'advanced',
        execArgv: [...childExecArgv(), `--max-old-space-size=${this.memoryLimitMb}`],
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
    } catch (error) {
      return this.notReady(`the engine process could not be started: ${(error as Error).message}`);
    }
    this.child = child;
    this.killReason = undefined;
    liveChildren.add(child);
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.handleExit(child, code, signal);
        resolve();
      });
      child.on('error', (error) => {
        // A failed spawn may never emit 'exit'.
        if (child.pid === undefined) {
          this.handleExit(child, null, null, error);
          resolve();
        }
      });
    });
    child.on('message', (message) => {
      if (child === this.child) this.handleEvent(message as HostEvent);
    });
    this.sampler = setInterval(() => void this.sampleMemory(child), this.sampleIntervalMs);
    this.sampler.unref();

    const description = await new Promise<EngineDescription>((resolve) => {
      const timer = setTimeout(() => {
        this.kill(new EngineError('engine_unavailable', `the engine did not load within ${this.initTimeoutMs} ms`));
      }, this.initTimeoutMs);
      this.init = { resolve, timer };
      this.send({ type: 'init', spec: this.spec });
    });
    this.lastDescription = description;
    if (!description.ready && this.child === child) {
      await this.stopChild(new EngineError('engine_unavailable', description.reason ?? 'not ready'));
    }
    return description;
  }

  private runJob(request: EngineRequest, options: HostRunOptions): Promise<EngineResult> {
    const { signal, timeoutMs, onProgress } = options;
    return new Promise<EngineResult>((resolve, reject) => {
      if (!this.child?.connected) {
        reject(new EngineError('engine_failed', 'the engine process stopped before the job started'));
        return;
      }
      this.holdProcessOpen(true);
      const onAbort = (): void => {
        if (this.job !== job || job.cancelled) return;
        job.cancelled = true;
        this.send({ type: 'cancel', jobId: job.jobId });
        job.timers.push(setTimeout(() => this.kill(abortError()), this.cancelGraceMs));
      };
      const job: PendingJob = {
        jobId: randomUUID(),
        resolve,
        reject,
        onProgress,
        cancelled: false,
        timers: [],
        cleanup: () => {
          for (const timer of job.timers) clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
        },
      };
      this.job = job;
      if (timeoutMs !== undefined) {
        job.timers.push(
          setTimeout(() => {
            this.kill(new EngineError('timeout', `the engine did not finish within ${timeoutMs} ms`));
          }, timeoutMs),
        );
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      this.send({ type: 'run', jobId: job.jobId, request });
    });
  }

  private handleEvent(event: HostEvent): void {
    switch (event.type) {
      case 'ready':
        this.settleInit(event.description);
        break;
      case 'init-failed':
        this.settleInit(this.notReady(event.message, event.description));
        break;
      case 'heartbeat':
        this.checkMemory(event.rss);
        break;
      case 'progress':
        if (this.job?.jobId !== event.jobId) break;
        try {
          this.job.onProgress?.({ stage: event.stage, progress: event.progress });
        } catch (error) {
          console.error('[engine-host] onProgress threw:', error);
        }
        break;
      case 'result':
        if (this.job?.jobId !== event.jobId) break;
        this.settleJob(undefined, { image: event.image, format: event.format, ...(event.stages ? { stages: event.stages } : {}) });
        break;
      case 'error':
        if (this.job?.jobId !== event.jobId) break;
        this.settleJob(new EngineError(event.code, event.message, event.retryable));
        break;
    }
  }

  private settleInit(description: EngineDescription): void {
    const init = this.init;
    if (!init) return;
    this.init = undefined;
    clearTimeout(init.timer);
    this.holdProcessOpen(false);
    init.resolve(description);
  }

  /**
   * An idle host must not keep its parent alive (a test process, or a CLI that
   * is done); while it loads or runs a job, it must, or the parent could exit
   * with the job's promise still pending.
   */
  private holdProcessOpen(hold: boolean): void {
    const child = this.child;
    if (!child) return;
    const channel = child.channel as { ref?: () => void; unref?: () => void } | null | undefined;
    if (hold) {
      child.ref();
      channel?.ref?.();
    } else {
      child.unref();
      channel?.unref?.();
    }
  }

  private settleJob(error: Error | undefined, result?: EngineResult): void {
    const job = this.job;
    if (!job) return;
    this.job = undefined;
    this.holdProcessOpen(false);
    job.cleanup();
    if (job.cancelled) job.reject(abortError());
    else if (error) job.reject(error);
    else if (result) job.resolve(result);
  }

  private handleExit(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null, spawnError?: Error): void {
    liveChildren.delete(child);
    if (child !== this.child) return;
    this.child = undefined;
    clearInterval(this.sampler);
    const how = signal ? `signal ${signal}` : `exit code ${code}`;
    const failure =
      this.killReason ??
      new EngineError(
        'engine_failed',
        spawnError ? `the engine process could not be started: ${spawnError.message}` : `the engine process stopped unexpectedly (${how})`,
      );
    this.killReason = undefined;
    this.settleInit(this.notReady(failure.message));
    this.settleJob(failure);
  }

  private async sampleMemory(child: ChildProcess): Promise<void> {
    if (process.platform !== 'linux' || child.pid === undefined) return;
    try {
      const status = await readFile(`/proc/${child.pid}/status`, 'utf8');
      const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1];
      if (kb !== undefined && child === this.child) this.checkMemory(Number(kb) * 1024);
    } catch {
      // The process is exiting; the exit handler takes it from here.
    }
  }

  private checkMemory(rssBytes: number): void {
    if (rssBytes > this.memoryLimitMb * 1024 * 1024) {
      this.kill(new EngineError('engine_failed', `the engine used more than ${this.memoryLimitMb} MB of memory`));
    }
  }

  /** SIGKILLs the current child; the first reason given is the one reported. */
  private kill(reason: Error): void {
    if (!this.child) return;
    this.killReason ??= reason;
    this.child.kill('SIGKILL');
  }

  private async stopChild(reason: Error): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.killReason ??= reason;
    if (child.connected) child.disconnect();
    const timer = setTimeout(() => this.kill(reason), this.stopGraceMs);
    await this.exited;
    clearTimeout(timer);
  }

  private send(command: HostCommand): void {
    const child = this.child;
    if (!child?.connected) return;
    child.send(command, (error) => {
      // The child is gone; its exit handler fails whatever was waiting on it.
      if (error && child === this.child) this.kill(new EngineError('engine_failed', 'the engine process stopped'));
    });
  }

  private notReady(reason: string, description?: EngineDescription): EngineDescription {
    const known = description ?? this.lastDescription ?? placeholderDescription(this.spec);
    return { ...known, ready: false, reason };
  }
}

/** A description for an engine that never described itself (its module did not load). */
export function placeholderDescription(spec: EngineSpec): EngineDescription {
  const options = (spec.options ?? {}) as { id?: unknown; device?: unknown };
  const fallbackId =
    spec.module
      .split(/[\\/]/)
      .pop()
      ?.replace(/\.[cm]?[jt]s$/, '') ?? spec.module;
  const id = typeof options.id === 'string' ? options.id : fallbackId;
  return {
    id,
    name: id,
    ready: false,
    device: typeof options.device === 'string' ? options.device : 'cpu',
    license: 'unknown',
    resolution: { width: 0, height: 0 },
    honors: [],
    typicalSeconds: 0,
  };
}

/** Rejects with an AbortError as soon as `signal` aborts; the promise itself carries on. */
function raceAbort<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(abortError());
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** The parent's flags (so tsx loads in the child), minus ones that must not be inherited. */
function childExecArgv(): string[] {
  return process.execArgv.filter((arg) => !/^--(inspect|debug|test)/.test(arg));
}

const liveChildren = new Set<ChildProcess>();
// A child in a synchronous loop cannot notice the IPC channel closing; kill it when we exit.
process.once('exit', () => {
  for (const child of liveChildren) child.kill('SIGKILL');
});
