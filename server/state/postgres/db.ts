/**
 * The only module that imports `pg`: a connection pool to the shop's PostgreSQL, transactions that retry when the
 * database chose this one to give way (a deadlock or a serialization failure), the schema brought up to date
 * (migrations.ts) before anything else runs, and a connection of its own that LISTENs for other nodes' notices.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { migrate } from './migrations.ts';

export type Sql = Pick<pg.PoolClient, 'query'>;

/** SQLSTATEs after which the whole transaction may simply run again. */
const RETRYABLE = new Set(['40001', '40P01']);
const MAX_TRIES = 5;

// bigint (int8) comes back as a string by default; every bigint here (ledger seq, byte counts) fits a double.
pg.types.setTypeParser(pg.types.builtins.INT8, (text) => Number(text));

/** What a LISTEN connection (`PgDatabase.listen`) tells its owner. */
export interface ListenHandlers {
  /** One notification on one of the channels, after the transaction that sent it committed. */
  notice: (channel: string, payload: string) => void;
  /** The connection came back after it dropped: notices sent while it was down are lost. */
  reconnected: () => void;
  /** A drop, or a reconnect that failed (default: console.error). */
  log?: (message: string, error?: unknown) => void;
}

export interface ListenOptions {
  /** The wait before each reconnect, doubling from `first` to `last` (default 100 and 5000 ms). */
  retryMs?: { first: number; last: number };
}

/** A LISTEN connection: `close()` ends it and stops reconnecting. */
export interface Listening {
  close(): Promise<void>;
}

/** How a LISTEN connection names itself in pg_stat_activity. */
export const LISTEN_APPLICATION_NAME = 'fittingroom-listen';

export class PgDatabase {
  private constructor(
    private readonly pool: pg.Pool,
    private readonly url: string,
  ) {}

  /** Connects to `url` and applies the migrations this code has that the database lacks. */
  static async open(url: string, options: { maxConnections?: number } = {}): Promise<PgDatabase> {
    const pool = new pg.Pool({ connectionString: url, max: options.maxConnections ?? 10 });
    // An idle connection that the server drops must not take the process down with it.
    pool.on('error', (error) => console.error('fittingroom: a database connection failed while idle:', error.message));
    const db = new PgDatabase(pool, url);
    try {
      await db.transaction((sql) => migrate(sql));
    } catch (error) {
      await pool.end();
      throw error;
    }
    return db;
  }

  /** Runs `fn` in one transaction (READ COMMITTED; `fn` takes the row locks it needs) and commits it. */
  async transaction<T>(fn: (sql: Sql) => Promise<T>): Promise<T> {
    for (let tries = 1; ; tries++) {
      const client = await this.pool.connect();
      try {
        await client.query('BEGIN');
        const result = await fn(client);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        if (tries < MAX_TRIES && RETRYABLE.has(sqlState(error) ?? '')) continue;
        throw error;
      } finally {
        client.release();
      }
    }
  }

  /** One statement on its own (its own transaction). */
  query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>> {
    return this.pool.query<R>(text, values);
  }

  /**
   * LISTENs on `channels` over a connection of its own, outside the pool (a pooled connection would stop hearing
   * once released), and calls `handlers.notice` per notification. When the connection drops it reconnects with a
   * doubling wait and then calls `handlers.reconnected`. Resolves once the first LISTEN is in place; rejects if
   * that first connection fails.
   */
  async listen(channels: readonly string[], handlers: ListenHandlers, options: ListenOptions = {}): Promise<Listening> {
    const listener = new Listener(this.url, channels, handlers, options.retryMs ?? { first: 100, last: 5000 });
    await listener.start();
    return listener;
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}

class Listener implements Listening {
  private client: pg.Client | null = null;
  private readonly closing = new AbortController();
  private kept: Promise<void> = Promise.resolve();
  private readonly log: (message: string, error?: unknown) => void;

  constructor(
    private readonly url: string,
    private readonly channels: readonly string[],
    private readonly handlers: ListenHandlers,
    private readonly retryMs: { first: number; last: number },
  ) {
    this.log = handlers.log ?? ((message, error) => console.error(`fittingroom: ${message}`, error ?? ''));
  }

  async start(): Promise<void> {
    this.kept = this.keep(await this.connect());
  }

  async close(): Promise<void> {
    this.closing.abort();
    await this.client?.end().catch(() => undefined);
    await this.kept;
  }

  /**
   * Connects a LISTENing client, held in `this.client`; `ended` resolves when its connection ends, with the error
   * that ended it, if any.
   */
  private async connect(): Promise<{ ended: Promise<unknown> }> {
    const client = new pg.Client({ connectionString: this.url, application_name: LISTEN_APPLICATION_NAME, keepAlive: true });
    let failure: unknown;
    const ended = new Promise<unknown>((resolve) => client.once('end', () => resolve(failure)));
    // Without a listener an 'error' event would throw; ending the client makes sure 'end' follows.
    client.on('error', (error) => {
      failure ??= error;
      client.end().catch(() => undefined);
    });
    client.on('notification', (message) => {
      if (!this.closing.signal.aborted) this.call(() => this.handlers.notice(message.channel, message.payload ?? ''));
    });
    try {
      await client.connect();
      for (const channel of this.channels) await client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
    } catch (error) {
      client.end().catch(() => undefined);
      throw error;
    }
    this.client = client;
    return { ended };
  }

  /** Reconnects whenever the connection ends, until `close()`. */
  private async keep(connection: { ended: Promise<unknown> }): Promise<void> {
    for (;;) {
      const failure = await connection.ended;
      this.client = null;
      if (this.closing.signal.aborted) return;
      this.log('the LISTEN connection dropped; reconnecting', failure);
      for (let wait = this.retryMs.first; ; wait = Math.min(wait * 2, this.retryMs.last)) {
        const waited = await sleep(wait, true, { signal: this.closing.signal }).catch(() => false);
        if (!waited) return;
        try {
          connection = await this.connect();
          break;
        } catch (error) {
          this.log('reconnecting the LISTEN connection failed', error);
        }
      }
      // close() came while connecting: it found no client to end.
      if (this.closing.signal.aborted) {
        await (this.client as pg.Client | null)?.end().catch(() => undefined);
        return;
      }
      this.call(() => this.handlers.reconnected());
    }
  }

  /** A handler that throws must not break the connection's event handling. */
  private call(fn: () => void): void {
    try {
      fn();
    } catch (error) {
      this.log('a LISTEN handler failed', error);
    }
  }
}

/** The SQLSTATE of a database error, if it is one. */
export function sqlState(error: unknown): string | undefined {
  const code = error instanceof Error ? (error as Error & { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
}

/** The constraint a database error names, if any. */
export function constraintOf(error: unknown): string | undefined {
  return error instanceof Error ? (error as Error & { constraint?: string }).constraint : undefined;
}
