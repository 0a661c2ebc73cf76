/**
 * The only module that imports `pg`: a connection pool to the shop's PostgreSQL, transactions that retry when the
 * database chose this one to give way (a deadlock or a serialization failure), and the schema brought up to date
 * (migrations.ts) before anything else runs.
 */
import pg from 'pg';
import { migrate } from './migrations.ts';

export type Sql = Pick<pg.PoolClient, 'query'>;

/** SQLSTATEs after which the whole transaction may simply run again. */
const RETRYABLE = new Set(['40001', '40P01']);
const MAX_TRIES = 5;

// bigint (int8) comes back as a string by default; every bigint here (ledger seq, byte counts) fits a double.
pg.types.setTypeParser(pg.types.builtins.INT8, (text) => Number(text));

export class PgDatabase {
  private constructor(private readonly pool: pg.Pool) {}

  /** Connects to `url` and applies the migrations this code has that the database lacks. */
  static async open(url: string, options: { maxConnections?: number } = {}): Promise<PgDatabase> {
    const pool = new pg.Pool({ connectionString: url, max: options.maxConnections ?? 10 });
    // An idle connection that the server drops must not take the process down with it.
    pool.on('error', (error) => console.error('fittingroom: a database connection failed while idle:', error.message));
    const db = new PgDatabase(pool);
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

  close(): Promise<void> {
    return this.pool.end();
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
