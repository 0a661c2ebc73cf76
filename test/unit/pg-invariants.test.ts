/**
 * The invariants the PostgreSQL schema holds by itself, tried with raw SQL as buggy code would write it: no
 * overdraft, one capture per reservation, no resolution without a reservation, an append-only ledger, one
 * redemption per voucher, a try-on's credit state agreeing with its ledger. And the migrations: applied once when
 * many processes start together, and a database newer than the code refused before anything is touched.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { PgDatabase } from '../../server/state/postgres/db.ts';
import { LATEST_VERSION, DatabaseNewerError } from '../../server/state/postgres/migrations.ts';
import { clusterForFile } from '../helpers/pg-cluster.ts';

const { skip, newDatabase } = clusterForFile('invariants');

/** A migrated database and a plain client on it. */
async function migrated(): Promise<{ url: string; client: pg.Client }> {
  const url = await newDatabase();
  await (await PgDatabase.open(url)).close();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return { url, client };
}

const LEDGER = 'INSERT INTO ledger (id, type, amount, lot, at, gen_id, expires_at) VALUES ($1, $2, $3, $4, now(), $5, $6)';

async function refused(promise: Promise<unknown>, constraint: RegExp): Promise<void> {
  await assert.rejects(promise, (error: Error & { constraint?: string }) => {
    assert.match(`${error.constraint ?? ''} ${error.message}`, constraint);
    return true;
  });
}

function record(id: string, status: string, credit: string) {
  return { id, keyId: 'key_1', status, credit, createdAt: '2026-03-01T09:00:00.000Z' };
}

test('no code can overdraw a lot', { skip }, async () => {
  const { client } = await migrated();
  await client.query(LEDGER, ['le_1', 'redeem', 1, 'paid', null, null]);
  await client.query(LEDGER, ['le_2', 'reserve', 1, 'paid', 'gen_a', null]);
  await refused(client.query(LEDGER, ['le_3', 'reserve', 1, 'paid', 'gen_b', null]), /credit_lots_no_overdraft/);
  await refused(client.query(LEDGER, ['le_4', 'expire', 5, 'paid', null, null]), /credit_lots_no_overdraft/);
  await refused(client.query(LEDGER, ['le_5', 'adjust', -2, 'paid', null, null]), /credit_lots_no_overdraft/);
  await refused(client.query(LEDGER, ['le_6', 'reserve', 1, 'trial', 'gen_c', null]), /credit_lots_no_overdraft/);
  await refused(client.query(`UPDATE credit_lots SET available = -1 WHERE lot = 'paid'`), /credit_lots_no_overdraft/);
  const { rows } = await client.query(`SELECT available, reserved FROM credit_lots WHERE lot = 'paid'`);
  assert.deepEqual(rows[0], { available: 0, reserved: 1 });
  await client.end();
});

test('a reservation is resolved once, in its own lot, and only if it exists', { skip }, async () => {
  const { client } = await migrated();
  await client.query(LEDGER, ['le_1', 'redeem', 3, 'paid', null, null]);
  await client.query(LEDGER, ['le_2', 'reserve', 1, 'paid', 'gen_a', null]);
  await refused(client.query(LEDGER, ['le_3', 'reserve', 1, 'paid', 'gen_a', null]), /ledger_one_reservation/);
  await refused(client.query(LEDGER, ['le_4', 'capture', 1, 'trial', 'gen_a', null]), /ledger_resolves_a_reservation/);
  await refused(client.query(LEDGER, ['le_5', 'capture', 1, 'paid', 'gen_none', null]), /ledger_resolves_a_reservation/);
  await client.query(LEDGER, ['le_6', 'capture', 1, 'paid', 'gen_a', null]);
  await refused(client.query(LEDGER, ['le_7', 'capture', 1, 'paid', 'gen_a', null]), /ledger_one_resolution/);
  await refused(client.query(LEDGER, ['le_8', 'release', 1, 'paid', 'gen_a', null]), /ledger_one_resolution/);
  await refused(client.query(LEDGER, ['le_9', 'reserve', 2, 'paid', 'gen_b', null]), /check/);
  const { rows } = await client.query(`SELECT available, reserved, spent FROM credit_lots WHERE lot = 'paid'`);
  assert.deepEqual(rows[0], { available: 2, reserved: 0, spent: 1 });
  await client.end();
});

test('the ledger is append-only', { skip }, async () => {
  const { client } = await migrated();
  await client.query(LEDGER, ['le_1', 'redeem', 3, 'paid', null, null]);
  await refused(client.query(`UPDATE ledger SET amount = 300`), /ledger_append_only/);
  await refused(client.query(`DELETE FROM ledger`), /ledger_append_only/);
  await refused(client.query(`TRUNCATE ledger`), /ledger_append_only/);
  await refused(client.query(`TRUNCATE credit_lots CASCADE`), /ledger_append_only/);
  assert.equal((await client.query('SELECT count(*)::int AS n FROM ledger')).rows[0].n, 1);
  await client.end();
});

test('a voucher is redeemed once', { skip }, async () => {
  const { client } = await migrated();
  const insert = `INSERT INTO vouchers (id, credits, redeemed_at, key_id) VALUES ('v1', 10, now(), 'key_1')`;
  await client.query(insert);
  await refused(client.query(insert), /vouchers_pkey/);
  await client.end();
});

test("a try-on's credit state must agree with its ledger when it commits", { skip }, async () => {
  const { client } = await migrated();
  await client.query(LEDGER, ['le_1', 'redeem', 3, 'paid', null, null]);
  // A try-on written without its reservation.
  await refused(
    client.query('INSERT INTO generations (id, record) VALUES ($1, $2)', ['gen_a', record('gen_a', 'pending', 'reserved')]),
    /generation_credit_agrees/,
  );
  // Recorded as captured while the ledger only reserved it.
  await client.query('BEGIN');
  await client.query(LEDGER, ['le_2', 'reserve', 1, 'paid', 'gen_b', null]);
  await client.query('INSERT INTO generations (id, record) VALUES ($1, $2)', ['gen_b', record('gen_b', 'pending', 'reserved')]);
  await client.query('COMMIT');
  await refused(
    client.query('UPDATE generations SET record = $2 WHERE id = $1', ['gen_b', record('gen_b', 'complete', 'captured')]),
    /generation_credit_agrees/,
  );
  // A status that contradicts the credit state.
  await refused(
    client.query('UPDATE generations SET record = $2 WHERE id = $1', ['gen_b', record('gen_b', 'failed', 'captured')]),
    /check/,
  );
  // Settled with its ledger entry in the same transaction: accepted.
  await client.query('BEGIN');
  await client.query(LEDGER, ['le_3', 'capture', 1, 'paid', 'gen_b', null]);
  await client.query('UPDATE generations SET record = $2 WHERE id = $1', ['gen_b', record('gen_b', 'complete', 'captured')]);
  await client.query('COMMIT');
  assert.equal((await client.query(`SELECT status FROM generations WHERE id = 'gen_b'`)).rows[0].status, 'complete');
  await client.end();
});

test('an Idempotency-Key names one try-on, and holds a lease or a reply, never both', { skip }, async () => {
  const { client } = await migrated();
  await client.query(LEDGER, ['le_1', 'redeem', 3, 'paid', null, null]);
  await client.query('BEGIN');
  await client.query(LEDGER, ['le_2', 'reserve', 1, 'paid', 'gen_a', null]);
  await client.query('INSERT INTO generations (id, record) VALUES ($1, $2)', ['gen_a', record('gen_a', 'pending', 'reserved')]);
  await client.query('COMMIT');
  const done = `INSERT INTO idempotency (scope, key, fingerprint, token, gen_id, status, headers, body, created_at, expires_at)
    VALUES ($1, $2, 'f', 't', 'gen_a', 202, '{}', '{}', now(), now() + interval '1 day')`;
  await client.query(done, ['lin_1', 'k-1']);
  await refused(client.query(done, ['lin_1', 'k-2']), /idempotency_gen_id_key/);
  await refused(client.query(done, ['lin_1', 'k-1']), /idempotency_pkey/);
  await refused(
    client.query(`INSERT INTO idempotency (scope, key, fingerprint, token, lease_until, status, headers, body, created_at, expires_at)
      VALUES ('lin_1', 'k-3', 'f', 't', now(), 202, '{}', '{}', now(), now())`),
    /check/,
  );
  await client.end();
});

test('migrations run once when several processes start together, and again is a no-op', { skip }, async () => {
  const url = await newDatabase();
  const opened = await Promise.all(Array.from({ length: 6 }, () => PgDatabase.open(url)));
  const { rows } = await opened[0]!.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
  assert.deepEqual(
    rows.map((row) => row.version),
    Array.from({ length: LATEST_VERSION }, (_, i) => i + 1),
  );
  assert.equal((await opened[0]!.query('SELECT count(*)::int AS n FROM credit_lots')).rows[0]!.n, 2);
  await Promise.all(opened.map((db) => db.close()));
  const again = await PgDatabase.open(url);
  assert.equal((await again.query('SELECT count(*)::int AS n FROM schema_migrations')).rows[0]!.n, LATEST_VERSION);
  await again.close();
});

test('a database newer than the code is refused, and left as it was', { skip }, async () => {
  const { url, client } = await migrated();
  await client.query(`INSERT INTO schema_migrations (version, name) VALUES ($1, 'from a newer fittingroom')`, [LATEST_VERSION + 1]);
  await assert.rejects(PgDatabase.open(url), (error: Error) => {
    assert.ok(error instanceof DatabaseNewerError);
    assert.match(error.message, new RegExp(`schema version ${LATEST_VERSION + 1}.*up to ${LATEST_VERSION}: upgrade fittingroom`));
    return true;
  });
  assert.equal((await client.query('SELECT count(*)::int AS n FROM schema_migrations')).rows[0].n, LATEST_VERSION + 1);
  await client.end();
});
