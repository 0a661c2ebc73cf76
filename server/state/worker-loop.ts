/**
 * A GPU worker's loop on a shared database: it announces itself to the fleet, claims try-ons for its engines
 * (`concurrency` at a time), runs each through the injected `run`, renews the lease every third of its length while
 * it runs (aborting the run's signal when the lease is lost: taken over after a stall, or the try-on canceled), then
 * completes or fails it. It heartbeats while it lives, and on `stop()` gives back what it still runs, without
 * spending the attempt, and retires from the fleet.
 *
 * Idle slots poll with a doubling wait (50 ms up to 1 s by default); `wake()` cuts that wait short, so that a worker
 * told of a submit (postgres/notices.ts, `fittingroom_queued`) claims at once. The poll stays as the fallback: a
 * notice is lost while its connection is down, and a poll is one indexed query.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { GenerationErrorCode } from '../kernel/vocabulary.ts';
import type { GenerationRecord, StoredImage } from '../store/schema.ts';
import type { PgJobQueue, WorkerAnnouncement } from './postgres/jobs.ts';

/** What a run ends with: the stored result, or an error (retryable ones are tried again while attempts remain). */
export type JobOutcome = StoredImage | { error: { code: GenerationErrorCode; message: string }; retryable?: boolean };

/** What the loop tells its owner (logs, tests). */
export type WorkerEvent =
  | { type: 'claimed'; id: string; attempt: number }
  | { type: 'settled'; id: string; status: 'complete' | 'failed' | 'retry' }
  /** Settling was refused: another worker holds the try-on now, or it was canceled. */
  | { type: 'lost'; id: string }
  | { type: 'given-back'; id: string };

export type JobQueue = Pick<
  PgJobQueue,
  'maxAttempts' | 'announce' | 'heartbeat' | 'retire' | 'claim' | 'renew' | 'complete' | 'fail' | 'giveBack'
>;

export interface WorkerLoopOptions {
  queue: JobQueue;
  worker: WorkerAnnouncement;
  /** Runs one try-on; it should stop soon after `signal` aborts (its outcome is then dropped). */
  run: (record: GenerationRecord, signal: AbortSignal) => Promise<JobOutcome>;
  /** Try-ons run at once (default 1). */
  concurrency?: number;
  /** Default 30; renewed every third of it. */
  leaseSeconds?: number;
  /** Default 10. */
  heartbeatSeconds?: number;
  /** The wait of an idle slot between claims, doubling from `first` to `last` (default 50 and 1000 ms). */
  idleMs?: { first: number; last: number };
  clock?: () => Date;
  log?: (message: string, error?: unknown) => void;
  onEvent?: (event: WorkerEvent) => void;
}

interface RunningJob {
  controller: AbortController;
  /** Ends the renewals once the run is over. */
  done: AbortController;
  phase: 'running' | 'settling';
  lost: boolean;
  givenBack: boolean;
}

/** Tries of a settle whose database call failed (the lease is still ours meanwhile), with the waits between them. */
const SETTLE_RETRY_MS = [250, 1000, 2000];

/** One worker process's share of the queue. */
export class WorkerLoop {
  private readonly queue: JobQueue;
  private readonly worker: WorkerAnnouncement;
  private readonly concurrency: number;
  private readonly leaseSeconds: number;
  private readonly heartbeatSeconds: number;
  private readonly idleMs: { first: number; last: number };
  private readonly clock: () => Date;
  private readonly log: (message: string, error?: unknown) => void;
  private readonly running = new Map<string, RunningJob>();
  private readonly tasks: Promise<void>[] = [];
  private readonly stopped = new AbortController();
  /** Aborted by `wake()` (then replaced) and by `stop()`, ending the idle waits that began before. */
  private woken = new AbortController();
  private started = false;

  constructor(private readonly options: WorkerLoopOptions) {
    this.queue = options.queue;
    this.worker = options.worker;
    this.concurrency = options.concurrency ?? 1;
    this.leaseSeconds = options.leaseSeconds ?? 30;
    this.heartbeatSeconds = options.heartbeatSeconds ?? 10;
    this.idleMs = options.idleMs ?? { first: 50, last: 1000 };
    this.clock = options.clock ?? (() => new Date());
    this.log = options.log ?? ((message, error) => console.error(`fittingroom worker: ${message}`, error ?? ''));
  }

  /** Announces the worker and starts its slots and heartbeat. */
  async start(): Promise<void> {
    if (this.started) throw new Error('the worker loop has started already');
    this.started = true;
    await this.queue.announce(this.worker, this.clock());
    for (let slot = 0; slot < this.concurrency; slot++) this.tasks.push(this.slot());
    this.tasks.push(this.heartbeats());
  }

  /** Ends the idle waits now, so that idle slots claim at once (a try-on was submitted); busy slots are not disturbed. */
  wake(): void {
    this.woken.abort();
    this.woken = new AbortController();
  }

  /**
   * Stops the run of a try-on that ended elsewhere (canceled, erased) now rather than at the next renewal; it is not
   * settled here. Nothing happens if this worker does not run it, or is settling it already.
   */
  cancel(id: string): void {
    const job = this.running.get(id);
    if (!job || job.phase !== 'running') return;
    job.lost = true;
    job.controller.abort();
  }

  /** Try-ons this worker is running now. */
  runningIds(): string[] {
    return [...this.running.keys()];
  }

  /** Stops claiming, gives back the try-ons still running (their attempt not spent), waits for the runs, retires. */
  async stop(): Promise<void> {
    if (this.stopped.signal.aborted) return;
    this.stopped.abort();
    this.woken.abort();
    const givingBack: Promise<unknown>[] = [];
    for (const [id, job] of this.running) {
      if (job.phase !== 'running') continue;
      job.givenBack = true;
      job.controller.abort();
      givingBack.push(this.giveBack(id));
    }
    await Promise.all(givingBack);
    await Promise.allSettled(this.tasks);
    if (this.started) await this.queue.retire(this.worker.id).catch((error) => this.log('retiring from the fleet failed', error));
  }

  private async slot(): Promise<void> {
    let idle = this.idleMs.first;
    while (!this.stopped.signal.aborted) {
      // Taken before the claim, so that a wake() while the claim finds nothing ends the wait that follows it.
      const woken = this.woken.signal;
      let record: GenerationRecord | null = null;
      try {
        record = await this.queue.claim(this.worker.id, this.worker.engines, this.leaseSeconds, this.clock());
      } catch (error) {
        this.log('claiming a try-on failed', error);
      }
      if (!record) {
        await sleep(idle, undefined, { signal: woken }).catch(() => undefined);
        idle = Math.min(idle * 2, this.idleMs.last);
        continue;
      }
      idle = this.idleMs.first;
      this.options.onEvent?.({ type: 'claimed', id: record.id, attempt: record.attempts });
      if (this.stopped.signal.aborted) await this.giveBack(record.id);
      else await this.execute(record);
    }
  }

  private async execute(record: GenerationRecord): Promise<void> {
    const job: RunningJob = {
      controller: new AbortController(),
      done: new AbortController(),
      phase: 'running',
      lost: false,
      givenBack: false,
    };
    this.running.set(record.id, job);
    const renewals = this.keepLease(record.id, job);
    try {
      let outcome: JobOutcome;
      try {
        outcome = await this.options.run(record, job.controller.signal);
      } catch (error) {
        if (!job.controller.signal.aborted) this.log(`the run of ${record.id} failed`, error);
        outcome = { error: { code: 'engine_failed', message: 'The engine failed on this try-on.' } };
      }
      job.phase = 'settling';
      job.done.abort();
      await renewals;
      if (job.givenBack) return;
      if (job.lost) {
        this.options.onEvent?.({ type: 'lost', id: record.id });
        return;
      }
      await this.settle(record, outcome);
    } finally {
      job.done.abort();
      this.running.delete(record.id);
    }
  }

  private async settle(record: GenerationRecord, outcome: JobOutcome): Promise<void> {
    const id = record.id;
    const workerId = this.worker.id;
    let status: 'complete' | 'failed' | 'retry';
    let write: () => Promise<boolean>;
    if (!('error' in outcome)) {
      status = 'complete';
      write = () => this.queue.complete(id, workerId, outcome, this.clock());
    } else if (outcome.retryable && record.attempts < this.queue.maxAttempts) {
      status = 'retry';
      write = () => this.queue.giveBack(id, workerId, { spendAttempt: true });
    } else {
      status = 'failed';
      write = () => this.queue.fail(id, workerId, outcome.error, this.clock());
    }
    for (let tries = 0; ; tries++) {
      try {
        const settled = await write();
        this.options.onEvent?.(settled ? { type: 'settled', id, status } : { type: 'lost', id });
        return;
      } catch (error) {
        const wait = SETTLE_RETRY_MS[tries];
        if (wait === undefined) {
          // The lease runs out and another worker runs the try-on again.
          this.log(`settling ${id} failed; its lease will run out`, error);
          return;
        }
        await sleep(wait);
      }
    }
  }

  /** Renews the lease every third of its length until the run ends; aborts the run when the lease is lost. */
  private async keepLease(id: string, job: RunningJob): Promise<void> {
    const every = (this.leaseSeconds * 1000) / 3;
    while (!job.done.signal.aborted) {
      if (!(await sleep(every, true, { signal: job.done.signal }).catch(() => false))) return;
      try {
        if (await this.queue.renew(id, this.worker.id, this.leaseSeconds, this.clock())) continue;
        job.lost = true;
        job.controller.abort();
        return;
      } catch (error) {
        // The database may be back before the lease runs out; if not, the next renewal finds the lease lost.
        this.log(`renewing the lease on ${id} failed`, error);
      }
    }
  }

  private async heartbeats(): Promise<void> {
    while (await this.pause(this.heartbeatSeconds * 1000)) {
      try {
        if (!(await this.queue.heartbeat(this.worker.id, this.clock())) && !this.stopped.signal.aborted) {
          await this.queue.announce(this.worker, this.clock());
        }
      } catch (error) {
        this.log('the heartbeat failed', error);
      }
    }
  }

  private async giveBack(id: string): Promise<void> {
    try {
      if (await this.queue.giveBack(id, this.worker.id)) this.options.onEvent?.({ type: 'given-back', id });
    } catch (error) {
      this.log(`giving back ${id} failed; its lease will run out`, error);
    }
  }

  /** Waits `ms`; false when the loop stopped meanwhile. */
  private pause(ms: number): Promise<boolean> {
    return sleep(ms, true, { signal: this.stopped.signal }).catch(() => false);
  }
}
