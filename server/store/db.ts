/**
 * The only module that imports lowdb. State lives in memory and is written as
 * one durable JSON document. Every change goes through `mutate(fn)`:
 *
 * - `fn` runs synchronously on the working state, so mutations are serialized
 *   by construction and no other request can interleave inside one. A
 *   mutation must validate before it changes anything: throwing after a change
 *   would leave that change in memory.
 * - Readers see only the committed state: a copy of the document as it was
 *   last written durably. A change is visible to status, replay, list, usage
 *   and the webhook outbox only once a crash can no longer undo it.
 * - The returned promise settles only after a write that includes the change
 *   is durable on disk. Mutations that arrive while a write is in flight are
 *   committed together by the next write (group commit), so throughput does
 *   not fall to one fsync per request.
 * - If a write fails, the state is reloaded from the last durable document and
 *   every unacknowledged mutation is rejected with `storage_unavailable`:
 *   nothing acknowledged is lost, nothing unacknowledged is half-kept. The
 *   next mutation tries the disk again, so the store recovers by itself.
 */
import { Low, type Adapter } from 'lowdb';
import { existsSync } from 'node:fs';
import { open, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { DurableJsonFile } from './durable-json-adapter.ts';
import { mkdirDurably, removeTempFiles } from '../kernel/durable-fs.ts';
import { storageUnavailable } from '../kernel/errors.ts';
import { emptyState, migrate, type State } from './schema.ts';

interface Waiter {
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** Written into a data directory whose shop was moved to PostgreSQL (`fittingroom migrate`). */
export const MOVED_MARKER = 'moved-to-postgres.json';

/** Thrown when a data directory's shop was moved to PostgreSQL: its state there is the one that counts. */
export class DataDirMovedError extends Error {
  constructor(dataDir: string) {
    super(
      `the shop in ${dataDir} was moved to PostgreSQL (see ${join(dataDir, MOVED_MARKER)}): its credits, keys and try-ons ` +
        'live in that database now, and using this copy too would spend the same credits twice',
    );
    this.name = 'DataDirMovedError';
  }
}

/** Thrown when a data directory is already used by a running fittingroom. */
export class DataDirLockedError extends Error {
  constructor(dataDir: string, pid: number) {
    super(`the data directory ${dataDir} is in use by another fittingroom process (pid ${pid}); stop it first`);
    this.name = 'DataDirLockedError';
  }
}

export class Store {
  readonly dataDir: string;
  private readonly db: Low<State>;
  private waiters: Waiter[] = [];
  private flushing: Promise<void> | null = null;
  private lockPath: string | null = null;
  /** The document as last written durably; replaced whole after each write, never changed in place. */
  private committed: State = emptyState();

  private constructor(dataDir: string, db: Low<State>) {
    this.dataDir = dataDir;
    this.db = db;
  }

  /** Opens (creating if needed) the state in `dataDir`, holding its lock. */
  static async open(
    dataDir: string,
    options: { lock?: boolean; adapter?: Adapter<State>; moved?: 'refuse' | 'open' } = {},
  ): Promise<Store> {
    if ((options.moved ?? 'refuse') === 'refuse' && existsSync(join(dataDir, MOVED_MARKER))) throw new DataDirMovedError(dataDir);
    await mkdirDurably(dataDir);
    const db = new Low<State>(options.adapter ?? new DurableJsonFile<State>(join(dataDir, 'state.json')), emptyState());
    const store = new Store(dataDir, db);
    if (options.lock !== false) await store.acquireLock();
    try {
      // Writes cut off by a crash leave their temporary files; only the renamed document counts.
      if (options.lock !== false) await removeTempFiles(dataDir);
      await store.load();
    } catch (error) {
      await store.releaseLock();
      throw error;
    }
    return store;
  }

  /**
   * The committed state: what a restart would find. Read it freely and never change it (changes go through
   * `mutate`); hold on to it across an await only if a slightly older view will do.
   */
  get state(): State {
    return this.committed;
  }

  /**
   * Applies `fn` to the working state and resolves with its result once the change is durable (and so visible
   * through `state`). Decisions that must see changes not yet written, such as a balance check, belong in `fn`.
   */
  mutate<T>(fn: (state: State) => T): Promise<T> {
    let result: T;
    try {
      result = fn(this.db.data);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.commit().then(() => result);
  }

  /** Resolves when every change made so far is durable. */
  async settle(): Promise<void> {
    while (this.flushing) await this.flushing.catch(() => undefined);
  }

  /** Waits for pending writes and releases the data directory. */
  async close(): Promise<void> {
    await this.settle();
    await this.releaseLock();
  }

  private commit(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiters.push({ resolve, reject });
      if (!this.flushing) {
        this.flushing = this.flushLoop().finally(() => {
          this.flushing = null;
        });
      }
    });
  }

  private async flushLoop(): Promise<void> {
    while (this.waiters.length > 0) {
      const batch = this.waiters;
      this.waiters = [];
      // The copy is taken just as the adapter serializes, so it holds exactly what this write puts on disk.
      const snapshot = structuredClone(this.db.data);
      try {
        await this.db.write();
        this.committed = snapshot;
      } catch (error) {
        // Changes made after this write began are also only in memory: the reload discards them, so they fail too.
        const lost = [...batch, ...this.waiters];
        this.waiters = [];
        try {
          await this.load();
        } catch (reloadError) {
          console.error('fittingroom: could not reload state after a failed write', reloadError);
        }
        const refused = storageUnavailable(error);
        for (const waiter of lost) waiter.reject(refused);
        return;
      }
      for (const waiter of batch) waiter.resolve();
    }
  }

  private async load(): Promise<void> {
    await this.db.read();
    this.db.data = migrate(this.db.data ?? emptyState());
    this.committed = structuredClone(this.db.data);
  }

  private async acquireLock(): Promise<void> {
    const path = join(this.dataDir, 'lock');
    for (let tries = 0; tries < 2; tries++) {
      try {
        const handle = await open(path, 'wx', 0o600);
        await handle.writeFile(String(process.pid));
        await handle.close();
        this.lockPath = path;
        return;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        const pid = Number.parseInt(await readFile(path, 'utf8').catch(() => ''), 10);
        if (Number.isInteger(pid) && pid > 0 && isAlive(pid)) {
          throw new DataDirLockedError(this.dataDir, pid);
        }
        // A lock left by a process that died (a crash, a power cut) is stale.
        await rm(path, { force: true });
      }
    }
    throw new Error(`could not lock the data directory ${this.dataDir}`);
  }

  private async releaseLock(): Promise<void> {
    if (!this.lockPath) return;
    await rm(this.lockPath, { force: true });
    this.lockPath = null;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
