/**
 * The invariants migration 4 holds by itself, tried with raw SQL as buggy code would write it: keys (unique hash,
 * never deleted, fixed identity, revoked for good, one successor in the same lineage and scope, a grace that only
 * ends sooner), one installation set once, one current and one previous webhook secret, one shop-floor row whose
 * GUI key is an admin key, sessions acting as admin keys with unique token hashes, unique SKUs and barcodes
 * regardless of case, one take-home link per try-on.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import pg from 'pg';
import { PgDatabase } from '../../server/state/postgres/db.ts';
import { clusterForFile } from '../helpers/pg-cluster.ts';

const { skip, newDatabase } = clusterForFile('account_invariants');

/** A migrated database and a plain client on it. */
async function migrated(): Promise<pg.Client> {
  const url = await newDatabase();
  await (await PgDatabase.open(url)).close();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return client;
}

async function refused(promise: Promise<unknown>, constraint: RegExp): Promise<void> {
  await assert.rejects(promise, (error: Error & { constraint?: string }) => {
    assert.match(`${error.constraint ?? ''} ${error.message}`, constraint);
    return true;
  });
}

const hex = (text: string) => createHash('sha256').update(text).digest('hex');
const b64 = (text: string) => createHash('sha256').update(text).digest('base64');

const KEY = `INSERT INTO api_keys (id, name, scope, hash, prefix, created_at, lineage_id, expires_at, rotated_to)
  VALUES ($1, 'k', $2, $3, 'fr_live_abcd', now(), $4, $5, $6)`;

/** A key of its own lineage. */
function key(client: pg.Client, id: string, scope = 'admin') {
  return client.query(KEY, [id, scope, hex(id), id, null, null]);
}

async function count(client: pg.Client, table: string): Promise<number> {
  return (await client.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n;
}

test('a key’s hash is unique, and a key is never deleted', { skip }, async () => {
  const client = await migrated();
  await key(client, 'key_a');
  await refused(client.query(KEY, ['key_b', 'admin', hex('key_a'), 'key_b', null, null]), /api_keys_hash_unique/);
  await refused(client.query(KEY, ['key_c', 'admin', 'not-a-sha256', 'key_c', null, null]), /check/);
  await refused(client.query(KEY, ['key_d', 'root', hex('key_d'), 'key_d', null, null]), /check/);
  await refused(client.query(`DELETE FROM api_keys`), /api_keys_kept/);
  await refused(client.query(`TRUNCATE api_keys CASCADE`), /api_keys_kept/);
  assert.equal(await count(client, 'api_keys'), 1);
  await client.end();
});

test('a key’s identity never changes, and its revocation is for good', { skip }, async () => {
  const client = await migrated();
  await key(client, 'key_a');
  await key(client, 'key_b', 'standard');
  await refused(client.query(`UPDATE api_keys SET scope = 'standard' WHERE id = 'key_a'`), /api_keys_immutable/);
  await refused(client.query(`UPDATE api_keys SET hash = $1 WHERE id = 'key_a'`, [hex('other')]), /api_keys_immutable/);
  await refused(client.query(`UPDATE api_keys SET lineage_id = 'key_b' WHERE id = 'key_a'`), /api_keys_immutable/);
  await client.query(`UPDATE api_keys SET revoked_at = now() WHERE id = 'key_b'`);
  await refused(client.query(`UPDATE api_keys SET revoked_at = NULL WHERE id = 'key_b'`), /api_keys_revoked_for_good/);
  await client.query(`UPDATE api_keys SET name = 'renamed' WHERE id = 'key_a'`);
  await client.end();
});

test('a key has one successor, in its lineage and of its scope, and its grace only ever ends sooner', { skip }, async () => {
  const client = await migrated();
  await key(client, 'key_a', 'standard');
  await key(client, 'key_x', 'standard');
  // A successor must name an existing lineage of its own scope.
  await refused(client.query(KEY, ['key_b', 'admin', hex('key_b'), 'key_a', null, null]), /api_keys_lineage/);
  await refused(client.query(KEY, ['key_b', 'standard', hex('key_b'), 'key_none', null, null]), /api_keys_lineage/);
  await client.query(KEY, ['key_b', 'standard', hex('key_b'), 'key_a', null, null]);
  await client.query(KEY, ['key_c', 'standard', hex('key_c'), 'key_a', null, null]);
  // Rotated without an end to the old key's grace; rotated to a key of another lineage.
  await refused(client.query(`UPDATE api_keys SET rotated_to = 'key_b' WHERE id = 'key_a'`), /api_keys_rotated_has_grace_end/);
  await refused(
    client.query(`UPDATE api_keys SET rotated_to = 'key_x', expires_at = now() + interval '1 hour' WHERE id = 'key_a'`),
    /api_keys_successor_in_lineage/,
  );
  await client.query(`UPDATE api_keys SET rotated_to = 'key_b', expires_at = now() + interval '1 hour' WHERE id = 'key_a'`);
  // A second rotation of the same key, or a second key rotated to the same successor.
  await refused(client.query(`UPDATE api_keys SET rotated_to = 'key_c' WHERE id = 'key_a'`), /api_keys_rotated_once/);
  await refused(
    client.query(`UPDATE api_keys SET rotated_to = 'key_b', expires_at = now() + interval '1 hour' WHERE id = 'key_c'`),
    /api_keys_one_predecessor/,
  );
  // The grace may be cut short, never stretched or lifted.
  await refused(
    client.query(`UPDATE api_keys SET expires_at = expires_at + interval '1 day' WHERE id = 'key_a'`),
    /api_keys_expiry_only_sooner/,
  );
  await refused(client.query(`UPDATE api_keys SET expires_at = NULL WHERE id = 'key_a'`), /api_keys_expiry_only_sooner/);
  await client.query(`UPDATE api_keys SET expires_at = now() WHERE id = 'key_a'`);
  await client.end();
});

test('one installation, set once', { skip }, async () => {
  const client = await migrated();
  const insert = `INSERT INTO installation (id, created_at) VALUES ($1, now())`;
  await client.query(insert, ['inst_01J00000000000000000000000']);
  await refused(client.query(insert, ['inst_01J00000000000000000000001']), /installation_pkey/);
  await refused(
    client.query(`INSERT INTO installation (one, id, created_at) VALUES (false, 'inst_01J00000000000000000000002', now())`),
    /installation_one_row/,
  );
  await refused(client.query(`UPDATE installation SET id = 'inst_01J00000000000000000000003'`), /installation_set_once/);
  await refused(client.query(`DELETE FROM installation`), /installation_set_once/);
  await refused(client.query(`TRUNCATE installation`), /installation_set_once/);
  assert.equal((await client.query('SELECT id FROM installation')).rows[0].id, 'inst_01J00000000000000000000000');
  await client.end();
});

test('one current webhook secret and one previous', { skip }, async () => {
  const client = await migrated();
  const secret = (n: number) => `whsec_${Buffer.alloc(32, n).toString('base64')}`;
  const insert = 'INSERT INTO webhook_secrets (secret, created_at, expires_at) VALUES ($1, now(), $2)';
  await client.query(insert, [secret(1), null]);
  await refused(client.query(insert, [secret(2), null]), /webhook_secrets_one_current/);
  await client.query(insert, [secret(3), new Date(Date.now() + 3_600_000)]);
  await refused(client.query(insert, [secret(4), new Date(Date.now() + 3_600_000)]), /webhook_secrets_one_previous/);
  await refused(client.query(insert, ['not a secret', new Date()]), /check/);
  assert.equal(await count(client, 'webhook_secrets'), 2);
  await client.end();
});

test('one shop-floor row; the GUI’s key is an admin key; the PIN throttle is consistent', { skip }, async () => {
  const client = await migrated();
  assert.equal(await count(client, 'shop_floor'), 1, 'the migration made the row');
  await refused(client.query('INSERT INTO shop_floor DEFAULT VALUES'), /shop_floor_pkey/);
  await refused(client.query('DELETE FROM shop_floor'), /shop_floor_one_row/);
  await refused(client.query('TRUNCATE shop_floor'), /shop_floor_one_row/);
  await key(client, 'key_admin');
  await key(client, 'key_std', 'standard');
  await refused(client.query(`UPDATE shop_floor SET gui_key_id = 'key_std'`), /shop_floor_gui_key_is_admin/);
  await refused(client.query(`UPDATE shop_floor SET gui_key_id = 'key_none'`), /shop_floor_gui_key_is_admin/);
  await refused(client.query(`UPDATE shop_floor SET gui_key_id = 'key_std', gui_key_scope = 'standard'`), /check/);
  await client.query(`UPDATE shop_floor SET gui_key_id = 'key_admin'`);
  await refused(client.query(`UPDATE shop_floor SET pin_hash = '1234'`), /check/);
  await client.query(`UPDATE shop_floor SET pin_hash = 'scrypt$c2FsdA==$aGFzaA=='`);
  await refused(client.query(`UPDATE shop_floor SET pin_failures = -1`), /check/);
  await refused(client.query(`UPDATE shop_floor SET pin_blocked_until = now(), pin_failures = 0`), /shop_floor_blocked_after_failures/);
  await client.end();
});

test('a session acts as an admin key, and its token hash is unique', { skip }, async () => {
  const client = await migrated();
  await key(client, 'key_admin');
  await key(client, 'key_std', 'standard');
  const insert = `INSERT INTO gui_sessions (id, hash, key_id, via, created_at, expires_at)
    VALUES ($1, $2, $3, $4, now(), now() + interval '12 hours')`;
  await client.query(insert, ['ses_1', hex('t1'), 'key_admin', 'pin']);
  await refused(client.query(insert, ['ses_2', hex('t1'), 'key_admin', 'key']), /gui_sessions_hash_unique/);
  await refused(client.query(insert, ['ses_3', hex('t3'), 'key_std', 'key']), /gui_sessions_act_as_admin/);
  await refused(client.query(insert, ['ses_4', hex('t4'), 'key_none', 'key']), /gui_sessions_act_as_admin/);
  await refused(client.query(insert, ['ses_5', 'token-in-clear', 'key_admin', 'key']), /check/);
  await refused(client.query(insert, ['ses_6', hex('t6'), 'key_admin', 'cookie']), /check/);
  await refused(
    client.query(
      `INSERT INTO gui_sessions (id, hash, key_id, via, created_at, expires_at) VALUES ('ses_7', $1, 'key_admin', 'pin', now(), now())`,
      [hex('t7')],
    ),
    /gui_sessions_end_after_start/,
  );
  assert.equal(await count(client, 'gui_sessions'), 1);
  await client.end();
});

test('a garment’s SKU and barcode are unique regardless of case, never empty; at most 6 photos', { skip }, async () => {
  const client = await migrated();
  const photo = { file: 'catalogue/x.jpg', format: 'jpeg', width: 1, height: 1 };
  const record = (id: string, more: Record<string, unknown>) => ({
    id,
    name: id,
    category: 'top',
    sizes: [],
    image: photo,
    createdAt: '2026-03-01T09:00:00.000Z',
    ...more,
  });
  const insert = 'INSERT INTO garments (id, record) VALUES ($1, $2)';
  await client.query(insert, ['gar_1', record('gar_1', { sku: 'SH-1', barcode: '400638' })]);
  await refused(client.query(insert, ['gar_2', record('gar_2', { sku: 'sh-1' })]), /garments_sku_unique/);
  await refused(client.query(insert, ['gar_3', record('gar_3', { barcode: '400638' })]), /garments_barcode_unique/);
  await refused(client.query(insert, ['gar_4', record('gar_4', { sku: '' })]), /garments_sku_not_empty/);
  await refused(client.query(insert, ['gar_5', record('gar_6', {})]), /check/);
  await refused(client.query(insert, ['gar_7', record('gar_7', { morePhotos: Array(6).fill(photo) })]), /garments_at_most_six_photos/);
  await client.query(insert, ['gar_8', record('gar_8', { morePhotos: Array(5).fill(photo) })]);
  await client.query(insert, ['gar_9', record('gar_9', {})]);
  await refused(
    client.query(`UPDATE garments SET record = record || '{"barcode": "400638"}' WHERE id = 'gar_9'`),
    /garments_barcode_unique/,
  );
  assert.equal(await count(client, 'garments'), 3);
  await client.end();
});

test('one take-home link per try-on, kept only as a hash', { skip }, async () => {
  const client = await migrated();
  const insert = `INSERT INTO gui_shares (gen_id, hash, expires_at) VALUES ($1, $2, now() + interval '1 hour')`;
  await client.query(insert, ['gen_01J00000000000000000000000', b64('s1')]);
  await refused(client.query(insert, ['gen_01J00000000000000000000000', b64('s2')]), /gui_shares_pkey/);
  await refused(client.query(insert, ['gen_01J00000000000000000000001', 'the-secret-itself']), /check/);
  await refused(client.query(insert, ['not-a-try-on', b64('s3')]), /check/);
  await client.end();
});
