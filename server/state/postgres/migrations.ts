/**
 * Versioned migrations of the PostgreSQL schema, applied in order at start under an advisory lock (so that several
 * API processes and workers starting at once apply each one once). A database that a newer fittingroom has
 * migrated further is refused with a clear message, before anything is read or written.
 *
 * The invariants live in the schema, so that even buggy code cannot break them:
 * - the ledger is append-only; each entry updates its lot's balances by trigger, and a balance below zero is a
 *   constraint violation, so no code path can overdraw;
 * - a try-on holds at most one reservation, resolved (captured or released) at most once, in the lot it holds;
 * - a try-on's recorded credit state agrees with its ledger entries when its transaction commits;
 * - a voucher id is redeemed once; an Idempotency-Key is held by one request at a time and names one try-on.
 */
import type { Sql } from './db.ts';
import { migration as credits } from './migrations/001-credits.ts';
import { migration as jobs } from './migrations/002-jobs.ts';
import { migration as images } from './migrations/003-images.ts';
import { migration as accounts } from './migrations/004-accounts.ts';
import { migration as shopMove } from './migrations/005-shop-move.ts';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** Thrown when the database's schema is newer than this code. */
export class DatabaseNewerError extends Error {
  constructor(found: number, known: number) {
    super(
      `the database has schema version ${found}, but this fittingroom understands up to ${known}: ` +
        'upgrade fittingroom on this machine (every node sharing a database must run the same or a newer version)',
    );
    this.name = 'DatabaseNewerError';
  }
}

/** pg_advisory_xact_lock key: "fr" + "mi"(grations). */
const MIGRATION_LOCK = 0x66726d69;

/** Every migration, in order; each lives in its own file under migrations/ and is never changed once released. */
export const MIGRATIONS: readonly Migration[] = [credits, jobs, images, accounts, shopMove];

export const LATEST_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

/** Brings the schema up to LATEST_VERSION (inside the caller's transaction); refuses a newer database. */
export async function migrate(sql: Sql, migrations: readonly Migration[] = MIGRATIONS): Promise<{ from: number; to: number }> {
  await sql.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
  await sql.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version integer PRIMARY KEY,
    name text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
  )`);
  const { rows } = await sql.query<{ version: number | null }>('SELECT max(version) AS version FROM schema_migrations');
  const from = rows[0]?.version ?? 0;
  const known = migrations[migrations.length - 1]?.version ?? 0;
  if (from > known) throw new DatabaseNewerError(from, known);
  for (const migration of migrations) {
    if (migration.version <= from) continue;
    await sql.query(migration.sql);
    await sql.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
  }
  return { from, to: Math.max(from, known) };
}
