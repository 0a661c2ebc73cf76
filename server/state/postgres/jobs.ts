/**
 * The job queue of a shared database: GPU workers on other machines claim pending try-ons with a lease, renew it
 * while they run, and settle or give back what they hold. A try-on whose worker died is claimed again once its lease
 * has run out, each claim counting an attempt; one that has used up its attempts is failed and its credit released.
 *
 * Why `FOR UPDATE SKIP LOCKED` on `generations` rather than pg-boss or graphile-worker: our jobs already are the rows
 * of `generations`, and a try-on's end (its ledger capture or release, its record, its webhook event) is written in
 * one transaction with its lease ended (gateway.ts's `settleLocked`). A queue library keeps its own job table, which
 * would have to be kept in step with ours: a job it thinks done whose try-on is still pending, or the reverse, after
 * any crash between the two. With the lease on the row itself there is nothing to keep in step, and the claim is one
 * indexed query.
 */
import type { GenerationErrorCode } from '../../kernel/vocabulary.ts';
import type { GenerationRecord, StoredImage } from '../../store/schema.ts';
import type { PgDatabase, Sql } from './db.ts';
import { settleLocked } from './gateway.ts';

/** What a worker tells the fleet about itself when it starts. */
export interface WorkerAnnouncement {
  /** Unique per worker process: a restarted worker is a new one. */
  id: string;
  host: string;
  pid: number;
  engines: string[];
  device: string;
}

/** A worker seen recently, for `GET /api/v1/engines`. */
export interface FleetMember extends WorkerAnnouncement {
  startedAt: string;
  seenAt: string;
  /** Try-ons it holds a live lease on. */
  running: number;
}

export interface PgJobQueueOptions {
  /** Attempts a try-on may have before a claim fails it instead (default 3, as the single-PC runner). */
  maxAttempts?: number;
}

/** Try-ons with spent attempts that one claim fails before it gives up looking (the next claim goes on). */
const FAILS_PER_CLAIM = 20;
/** A retired or silent worker's row is deleted this long after it was last seen. */
const FORGET_WORKERS_MS = 86_400_000;

interface WorkerRow {
  id: string;
  host: string;
  pid: number;
  engines: string[];
  device: string;
  started_at: Date;
  seen_at: Date;
  running: number;
}

/** Leases on try-ons and the fleet of workers, over the database a PgState opened (`new PgJobQueue(state.db)`). */
export class PgJobQueue {
  readonly maxAttempts: number;

  constructor(
    private readonly db: PgDatabase,
    options: PgJobQueueOptions = {},
  ) {
    this.maxAttempts = options.maxAttempts ?? 3;
  }

  /** Joins the fleet (again, after a heartbeat found the worker gone), forgetting workers long gone. */
  async announce(worker: WorkerAnnouncement, now: Date): Promise<void> {
    await this.db.transaction(async (sql) => {
      await sql.query(
        `INSERT INTO workers (id, host, pid, engines, device, started_at, seen_at) VALUES ($1, $2, $3, $4, $5, $6, $6)
         ON CONFLICT (id) DO UPDATE SET host = $2, pid = $3, engines = $4, device = $5, seen_at = $6, stopping = false`,
        [worker.id, worker.host, worker.pid, JSON.stringify(worker.engines), worker.device, now],
      );
      await sql.query('DELETE FROM workers WHERE seen_at < $1', [new Date(now.getTime() - FORGET_WORKERS_MS)]);
    });
  }

  /** Marks the worker seen; false when it is unknown or retired (it should announce itself again). */
  async heartbeat(workerId: string, now: Date): Promise<boolean> {
    const { rowCount } = await this.db.query('UPDATE workers SET seen_at = $2 WHERE id = $1 AND NOT stopping', [workerId, now]);
    return rowCount === 1;
  }

  /** Takes the worker out of the fleet as it shuts down. */
  async retire(workerId: string): Promise<void> {
    await this.db.query('UPDATE workers SET stopping = true WHERE id = $1', [workerId]);
  }

  /** The workers seen within `staleSeconds` of `now` and not retired, oldest first. */
  async fleet(now: Date, staleSeconds: number): Promise<FleetMember[]> {
    const { rows } = await this.db.query<WorkerRow>(
      `SELECT w.*, (SELECT count(*) FROM generations g WHERE g.claimed_by = w.id AND g.lease_until >= $1)::integer AS running
       FROM workers w WHERE NOT w.stopping AND w.seen_at >= $2 ORDER BY w.started_at, w.id`,
      [now, new Date(now.getTime() - staleSeconds * 1000)],
    );
    return rows.map((row) => ({
      id: row.id,
      host: row.host,
      pid: row.pid,
      engines: row.engines,
      device: row.device,
      startedAt: row.started_at.toISOString(),
      seenAt: row.seen_at.toISOString(),
      running: row.running,
    }));
  }

  /**
   * Claims the oldest pending try-on for one of `engineIds` that nobody holds (never held, given back, or its lease
   * run out) and counts an attempt on it, with a lease until `now + leaseSeconds`; null when there is none. A try-on
   * met on the way that has used up its attempts (its workers died on it) is failed instead, its credit released.
   */
  claim(workerId: string, engineIds: readonly string[], leaseSeconds: number, now: Date): Promise<GenerationRecord | null> {
    if (engineIds.length === 0) return Promise.resolve(null);
    return this.db.transaction(async (sql) => {
      for (let failed = 0; failed <= FAILS_PER_CLAIM; failed++) {
        // A worker never takes back its own lapsed lease: it may still be running that try-on in another slot.
        const { rows } = await sql.query<{ record: GenerationRecord }>(
          `SELECT record FROM generations
           WHERE status = 'pending' AND engine = ANY($1) AND (lease_until IS NULL OR lease_until < $2)
             AND claimed_by IS DISTINCT FROM $3
           ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED`,
          [engineIds, now, workerId],
        );
        const record = rows[0]?.record;
        if (!record) return null;
        if (record.attempts >= this.maxAttempts) {
          record.error = {
            code: 'engine_failed',
            message: `The worker running this try-on stopped ${record.attempts} times; it was given up.`,
          };
          await settleLocked(sql, record, 'failed', now);
          continue;
        }
        record.stage = 'running';
        record.attempts += 1;
        record.startedAt = now.toISOString();
        await sql.query('UPDATE generations SET record = $2, claimed_by = $3, lease_until = $4 WHERE id = $1', [
          record.id,
          record,
          workerId,
          leaseUntil(now, leaseSeconds),
        ]);
        return record;
      }
      return null;
    });
  }

  /** Extends the worker's lease; false when it no longer holds the try-on (taken over, settled, canceled). */
  async renew(id: string, workerId: string, leaseSeconds: number, now: Date): Promise<boolean> {
    const { rowCount } = await this.db.query(
      `UPDATE generations SET lease_until = $3 WHERE id = $1 AND claimed_by = $2 AND status = 'pending'`,
      [id, workerId, leaseUntil(now, leaseSeconds)],
    );
    return rowCount === 1;
  }

  /** Completes a try-on the worker holds and captures its credit; false when it does not hold it. */
  complete(id: string, workerId: string, result: StoredImage, now: Date): Promise<boolean> {
    return this.settleHeld(id, workerId, now, (record) => {
      record.result = result;
      return 'complete';
    });
  }

  /** Fails a try-on the worker holds and releases its credit; false when it does not hold it. */
  fail(id: string, workerId: string, error: { code: GenerationErrorCode; message: string }, now: Date): Promise<boolean> {
    return this.settleHeld(id, workerId, now, (record) => {
      record.error = error;
      return 'failed';
    });
  }

  /**
   * Puts a try-on the worker holds back in the queue: on shutdown without spending the attempt, after a retryable
   * failure (`spendAttempt`) counting it. False when the worker does not hold it.
   */
  async giveBack(id: string, workerId: string, options: { spendAttempt?: boolean } = {}): Promise<boolean> {
    const refund = options.spendAttempt ? 0 : 1;
    const { rowCount } = await this.db.query(
      `UPDATE generations SET claimed_by = NULL, lease_until = NULL,
         record = record || jsonb_build_object('stage', 'queued', 'attempts', greatest(0, (record ->> 'attempts')::integer - $3))
       WHERE id = $1 AND claimed_by = $2 AND status = 'pending'`,
      [id, workerId, refund],
    );
    return rowCount === 1;
  }

  private settleHeld(
    id: string,
    workerId: string,
    now: Date,
    apply: (record: GenerationRecord) => 'complete' | 'failed',
  ): Promise<boolean> {
    return this.db.transaction(async (sql: Sql) => {
      const { rows } = await sql.query<{ record: GenerationRecord }>(
        `SELECT record FROM generations WHERE id = $1 AND claimed_by = $2 AND status = 'pending' FOR UPDATE`,
        [id, workerId],
      );
      const record = rows[0]?.record;
      if (!record) return false;
      await settleLocked(sql, record, apply(record), now);
      return true;
    });
  }
}

function leaseUntil(now: Date, leaseSeconds: number): Date {
  return new Date(now.getTime() + leaseSeconds * 1000);
}
