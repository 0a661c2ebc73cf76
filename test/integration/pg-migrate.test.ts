/**
 * `fittingroom migrate`: a shop that ran on one PC (trial and redeemed vouchers, keys rotated and revoked, try-ons
 * complete, failed, canceled, erased and pending, some moved to the archive, images, a catalogue garment with two
 * photos, a webhook event, an Idempotency-Key reply, a take-home link, the PIN) is moved into a new PostgreSQL
 * database, and the database then answers as the appliance did: the same account, ledger (seq numbers included),
 * try-ons, keys, images byte for byte, catalogue. A second move is refused and changes nothing; so is a database
 * that is not empty, and a data directory an appliance holds; a copy that does not verify leaves nothing behind.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test, type TestContext } from 'node:test';
import { allGenerations, allLedgerEntries } from '../../server/credits/history.ts';
import { defaultConfig } from '../../server/config.ts';
import { accountSummary, redeemCredits, type AccountSummary } from '../../server/credits/ledger.ts';
import { hashPin } from '../../server/gui/session.ts';
import { newShareLink } from '../../server/gui/share.ts';
import { completeGeneration, createGeneration, startAttempt } from '../../server/jobs/generations.ts';
import { sweep } from '../../server/jobs/retention.ts';
import { newId } from '../../server/kernel/ids.ts';
import { hashKey } from '../../server/keys/api-keys.ts';
import { firstStart } from '../../server/services.ts';
import { DirectoryImageStore } from '../../server/state/images.ts';
import { LowdbAccounts } from '../../server/state/lowdb-accounts.ts';
import { migrateShop, ShopMoveMismatch, ShopMoveRefused } from '../../server/state/migrate-shop.ts';
import { PgAccounts } from '../../server/state/postgres/accounts.ts';
import { PgState } from '../../server/state/postgres/gateway.ts';
import { PgImageStore } from '../../server/state/postgres/images.ts';
import { PgJobQueue } from '../../server/state/postgres/jobs.ts';
import { Archive } from '../../server/store/archive.ts';
import { DataDirLockedError, DataDirMovedError, MOVED_MARKER, Store } from '../../server/store/db.ts';
import type { ApiKeyRecord, CatalogueGarment, GenerationRecord, LedgerEntry, State, StoredImage } from '../../server/store/schema.ts';
import { generateIssuerKey, mintVoucher } from '../../server/vouchers/voucher.ts';
import type { LookupFn } from '../../server/webhooks/send.ts';
import { composeEngine, startTestApp, type TestAppliance } from '../helpers/appliance.ts';
import { validJpeg } from '../helpers/hostile-images.ts';
import { plainParams, submission } from '../helpers/inputs.ts';
import { clusterForFile } from '../helpers/pg-cluster.ts';

const CLI = resolve(import.meta.dirname, '../../server/cli.ts');
const { skip, newDatabase } = clusterForFile('migrate');

/** The shop on one PC, and what the appliance itself says about it. */
interface Shop {
  dataDir: string;
  keys: { admin: string; till: string; revoked: string; rotatedFrom: string; rotatedTo: string };
  ids: { complete: string; withWebhook: string; failed: string; canceled: string; erased: string; recent: string; pending: string };
  garmentId: string;
  now: Date;
  account: AccountSummary;
  ledger: LedgerEntry[];
  generations: GenerationRecord[];
  keyRecords: ApiKeyRecord[];
  garments: CatalogueGarment[];
  state: State;
}

let shop: Promise<Shop> | undefined;

async function json<T>(response: Response): Promise<T> {
  const text = await response.text();
  assert.ok(response.ok, `${response.status}: ${text}`);
  return JSON.parse(text) as T;
}

async function submit(app: TestAppliance, key: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  const { genId } = await json<{ genId: string }>(
    await app.call('POST', '/api/v1/try-on', { body: await submission(extra), key, headers }),
  );
  return genId;
}

async function settled(app: TestAppliance, id: string): Promise<GenerationRecord['status']> {
  return (await json<{ status: GenerationRecord['status'] }>(await app.call('GET', `/api/v1/try-on/${id}?wait=20`))).status;
}

async function buildShop(t: TestContext): Promise<Shop> {
  const issuer = generateIssuerKey();
  const lookup: LookupFn = async () => [{ address: '127.0.0.1', family: 4 }];
  const app = await startTestApp(t, {
    engines: [
      composeEngine(),
      composeEngine({ id: 'slow', device: 'other', delayMs: 60_000 }),
      composeEngine({ id: 'failing', fail: 'no_person_detected' }),
    ],
    config: { trustedIssuerKeys: [issuer.publicKey], archiveMinEntries: 1 },
    webhookLookup: lookup,
  });
  const store = app.appliance.store;
  for (const credits of [100, 40])
    await json(await app.call('POST', '/api/v1/credits/redeem', { body: { voucher: mintVoucher(issuer.privateKeyPem, { credits }) } }));

  const newKey = async (name: string) =>
    json<{ id: string; key: string }>(await app.call('POST', '/api/v1/keys', { body: { name, scope: 'standard' } }));
  const till = await newKey('till');
  const revoked = await newKey('old till');
  assert.equal((await app.call('DELETE', `/api/v1/keys/${revoked.id}`)).status, 204);
  const rotatedFrom = await newKey('web shop');
  const rotatedTo = await json<{ key: string }>(
    await app.call('POST', `/api/v1/keys/${rotatedFrom.id}/rotate`, { body: { graceSeconds: 86_400 } }),
  );

  const complete = await submit(app, till.key);
  const withWebhook = await submit(app, till.key, { webhookUrl: 'http://hooks.test:9/fittingroom' }, { 'idempotency-key': 'order-1001' });
  const failed = await submit(app, till.key, { engine: 'failing' });
  const canceled = await submit(app, till.key, { engine: 'slow' });
  const erased = await submit(app, rotatedFrom.key);
  for (const id of [complete, withWebhook, erased]) assert.equal(await settled(app, id), 'complete');
  assert.equal(await settled(app, failed), 'failed');
  assert.equal((await app.call('POST', `/api/v1/try-on/${canceled}/cancel`)).status, 200);
  assert.equal((await app.call('DELETE', `/api/v1/try-on/${erased}`)).status, 204);
  // Finished try-ons and their ledger prefix leave the state for the archive.
  assert.equal((await sweep(store, new Date(), app.appliance.archive, 1)).archived, 5);
  const recent = await submit(app, rotatedTo.key);
  assert.equal(await settled(app, recent), 'complete');
  const pending = await submit(app, till.key, { engine: 'slow' });

  const garment = await json<{ id: string }>(
    await fetch(`${app.url}/gui/api/garments`, {
      method: 'POST',
      headers: { authorization: `Bearer ${app.adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'Blue tee',
        category: 'auto',
        sizes: ['M', 'L'],
        sku: 'TEE-001',
        image: (await validJpeg(300, 400)).toString('base64'),
      }),
    }),
  );
  await json(
    await fetch(`${app.url}/gui/api/garments/${garment.id}/photos`, {
      method: 'POST',
      headers: { authorization: `Bearer ${app.adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ image: (await validJpeg(320, 420)).toString('base64') }),
    }),
  );
  const pinHash = await hashPin('2468');
  await store.mutate((state) => {
    state.gui.pinHash = pinHash;
    state.gui.autoCapture = true;
  });
  // A staff sign-in and a take-home link, recorded as the GUI's routes record them.
  const accounts = new LowdbAccounts(store);
  const now = new Date();
  const sessionHash = createHash('sha256').update(randomBytes(32).toString('base64url')).digest('hex');
  await accounts.startSession(
    { hash: sessionHash, via: 'key', keyId: store.state.keys[0]!.id, expiresAt: new Date(now.getTime() + 3_600_000) },
    now,
  );
  const link = newShareLink(recent, store.state.generations[recent]!.expiresAt, now);
  await accounts.createShare(recent, link.hash, link.expiresAt, now);
  await app.appliance.close();

  // The appliance then went down while it ran the pending try-on (as a power cut leaves it).
  const reopened = await Store.open(app.dataDir);
  await reopened.mutate((state) => startAttempt(state, pending, new Date()));
  await reopened.close();

  return {
    ...(await readShop(app.dataDir)),
    dataDir: app.dataDir,
    keys: { admin: app.adminKey, till: till.key, revoked: revoked.key, rotatedFrom: rotatedFrom.key, rotatedTo: rotatedTo.key },
    ids: { complete, withWebhook, failed, canceled, erased, recent, pending },
    garmentId: garment.id,
  };
}

/** What the data directory holds, read as the appliance reads it. */
async function readShop(dataDir: string) {
  const store = await Store.open(dataDir);
  const archive = await Archive.open(dataDir);
  const state = structuredClone(store.state);
  const now = new Date();
  const read = {
    now,
    state,
    account: accountSummary(store.state, now),
    ledger: [...allLedgerEntries(store.state, archive)],
    generations: [...allGenerations(store.state, archive)].sort((a, b) => (a.id < b.id ? -1 : 1)),
    keyRecords: [...store.state.keys],
    garments: Object.values(store.state.gui.garments),
  };
  assert.ok(archive.ledgerEntries().length > 0 && state.ledgerBase !== null, 'part of the ledger is in the archive');
  assert.ok(archive.ids().length >= 5, 'finished try-ons are in the archive');
  await store.close();
  return read;
}

function theShop(t: TestContext): Promise<Shop> {
  shop ??= buildShop(t);
  return shop;
}

/** Lets the data directory be moved again (each test moves it into a database of its own). */
async function unmark(dataDir: string): Promise<void> {
  await rm(join(dataDir, MOVED_MARKER), { force: true });
}

function imagesOf(record: GenerationRecord): StoredImage[] {
  return [...(record.inputs ? [record.inputs.selfie, ...record.inputs.items] : []), ...(record.result ? [record.result] : [])];
}

/** Rows in every table a shop writes (0 everywhere: nothing was written). */
async function rowCounts(url: string): Promise<Record<string, number>> {
  const state = await PgState.open(url);
  const counts: Record<string, number> = {};
  for (const table of [
    'installation',
    'api_keys',
    'ledger',
    'generations',
    'vouchers',
    'idempotency',
    'webhook_secrets',
    'webhook_events',
    'gui_sessions',
    'garments',
    'gui_shares',
    'images',
    'catalogue_photos',
    'shop_migrations',
  ])
    counts[table] = (await state.db.query<{ n: number }>(`SELECT count(*)::integer AS n FROM ${table}`)).rows[0]!.n;
  await state.close();
  return counts;
}

const empty = (counts: Record<string, number>) => Object.values(counts).every((n) => n === 0);

test('a shop moves into PostgreSQL whole: account, ledger, try-ons, keys, images, catalogue', { skip }, async (t) => {
  const s = await theShop(t);
  await unmark(s.dataDir);
  const url = await newDatabase();
  const report = await migrateShop({ dataDir: s.dataDir, database: url, now: s.now });
  assert.equal(report.installationId, s.state.installation!.id);
  assert.deepEqual(report.totals.generations, { pending: 1, complete: 4, failed: 1, canceled: 1 });
  assert.equal(report.totals.ledgerEntries, s.ledger.length);
  assert.equal(report.requeued, 1);
  assert.equal(report.sessionsDropped, 1);
  assert.deepEqual(report.missingImages, []);
  assert.ok(existsSync(join(s.dataDir, MOVED_MARKER)), 'the data directory is marked as moved');
  await assert.rejects(Store.open(s.dataDir), DataDirMovedError, 'an appliance or a CLI command can no longer open the moved copy');

  const state = await PgState.open(url);
  const accounts = new PgAccounts(state.db);
  const images = new PgImageStore(state.db);
  try {
    assert.deepEqual(await state.account(s.now), s.account);
    assert.ok(s.account.creditsRemaining > 100 && s.account.creditsReserved === 1 && s.account.trialCreditsRemaining > 0);
    const ledger = (await state.ledgerPage(null, 10_000)).entries.reverse();
    assert.deepEqual(ledger, s.ledger, 'every entry, in order, with its id, seq, type, amount, lot, try-on and time');

    for (const expected of s.generations) {
      const moved = await state.generation(expected.id);
      // The try-on the appliance was running when it went down is queued for a worker, its attempt kept.
      const want = expected.id === s.ids.pending ? { ...expected, stage: 'queued' as const } : expected;
      assert.deepEqual(moved, want, expected.id);
      for (const image of imagesOf(expected))
        assert.deepEqual(await images.get(image), await readFile(join(s.dataDir, image.file)), `${image.file} byte for byte`);
    }
    assert.equal(s.generations.find((g) => g.id === s.ids.erased)?.erased, true);
    assert.equal((await state.generation(s.ids.pending))?.attempts, 1);

    const byAge = (a: ApiKeyRecord, b: ApiKeyRecord) =>
      a.createdAt === b.createdAt ? (a.id < b.id ? -1 : 1) : a.createdAt < b.createdAt ? -1 : 1;
    assert.deepEqual(await accounts.keys(), [...s.keyRecords].sort(byAge));
    const usable = async (key: string) => (await accounts.activeKeyByHash(hashKey(key), s.now))?.id;
    for (const key of [s.keys.admin, s.keys.till, s.keys.rotatedFrom, s.keys.rotatedTo]) assert.ok(await usable(key), 'a live key works');
    assert.equal(await usable(s.keys.revoked), undefined, 'a revoked key stays revoked');
    assert.equal(await usable(s.keys.rotatedFrom), s.keyRecords.find((k) => k.rotatedTo !== undefined)!.id);
    await assert.rejects(accounts.rotateKey(s.keyRecords.find((k) => k.rotatedTo)!.id, s.now, 60), /already rotated/);

    assert.deepEqual(
      await accounts.garments(),
      [...s.garments].sort((a, b) => (a.createdAt < b.createdAt ? 1 : -1)),
    );
    const garment = s.garments[0]!;
    assert.equal(garment.morePhotos?.length, 1);
    for (const photo of [garment.image, ...garment.morePhotos!]) {
      const { rows } = await state.db.query<{ bytes: Buffer }>('SELECT bytes FROM catalogue_photos WHERE file = $1', [photo.file]);
      assert.deepEqual(rows[0]?.bytes, await readFile(join(s.dataDir, photo.file)), photo.file);
    }

    const event = s.state.webhookEvents[s.generations.find((g) => g.id === s.ids.withWebhook)!.webhookEventId!]!;
    assert.deepEqual(await state.webhookEvents(s.ids.withWebhook), [event]);
    const floor = await accounts.shopFloor();
    assert.deepEqual([floor.pinHash, floor.guiKeyId, floor.autoCapture], [s.state.gui.pinHash, s.state.gui.keyId, true]);
    assert.equal((await accounts.share(s.ids.recent, s.now))?.hash, s.state.gui.shares![s.ids.recent]!.hash);
    assert.deepEqual(await accounts.signingSecrets(s.now), [s.state.webhookSecrets.find((x) => !x.expiresAt)!.secret]);

    // A client retrying its submit gets the stored reply; a redeemed voucher stays redeemed.
    const reply = Object.values(s.state.idempotency)[0]!;
    const admitted = await state.admit(reply.scope, reply.key, reply.fingerprint, s.now, 30);
    assert.equal(admitted.kind, 'replay');
    assert.equal(admitted.kind === 'replay' && admitted.record.body, reply.body);
    const voucher = Object.values(s.state.vouchers)[0]!;
    await assert.rejects(
      state.redeemVoucher({ id: voucher.id, credits: voucher.credits, issuedAt: s.now.toISOString() }, voucher.keyId, s.now),
      /already redeemed/,
    );

    // A worker takes the pending try-on with its reservation; its end settles the ledger once, after the old seqs.
    const queue = new PgJobQueue(state.db);
    const claimed = await queue.claim('worker-1', ['slow'], 30, new Date());
    assert.equal(claimed?.id, s.ids.pending);
    assert.equal(claimed.attempts, 2);
    assert.ok(await queue.fail(s.ids.pending, 'worker-1', { code: 'engine_failed', message: 'test' }, new Date()));
    const last = (await state.ledgerPage(null, 1)).entries[0]!;
    assert.deepEqual([last.type, last.genId, last.seq], ['release', s.ids.pending, s.ledger[s.ledger.length - 1]!.seq + 1]);
    assert.equal((await state.account(new Date())).creditsReserved, 0);
  } finally {
    await state.close();
  }
});

test('a second move is refused and changes nothing, from the same data directory or into the same database', { skip }, async (t) => {
  const s = await theShop(t);
  await unmark(s.dataDir);
  const url = await newDatabase();
  await migrateShop({ dataDir: s.dataDir, database: url, now: s.now });
  const before = await rowCounts(url);

  await assert.rejects(migrateShop({ dataDir: s.dataDir, database: await newDatabase(), now: s.now }), (error: Error) => {
    assert.ok(error instanceof ShopMoveRefused);
    assert.match(error.message, /was already moved to PostgreSQL .*a shop is moved once/);
    assert.doesNotMatch(error.message, /password/);
    return true;
  });
  // Even with the data directory's mark gone, the database knows it holds the shop.
  await unmark(s.dataDir);
  await assert.rejects(migrateShop({ dataDir: s.dataDir, database: url, now: s.now }), (error: Error) => {
    assert.ok(error instanceof ShopMoveRefused);
    assert.match(error.message, new RegExp(`already holds the shop ${s.state.installation!.id}, moved from .* at `));
    return true;
  });
  assert.deepEqual(await rowCounts(url), before);
  assert.equal(before.shop_migrations, 1);
  const state = await PgState.open(url);
  await assert.rejects(state.db.query('DELETE FROM shop_migrations'), /shop_migrations_kept|moved into a database once/);
  await state.close();
});

test('a database that is not empty is refused, and so is a data directory an appliance holds', { skip }, async (t) => {
  const s = await theShop(t);
  await unmark(s.dataDir);
  const url = await newDatabase();
  const other = await PgState.open(url);
  await other.grantTrial(25, 30, new Date());
  await other.close();
  await assert.rejects(migrateShop({ dataDir: s.dataDir, database: url }), (error: Error) => {
    assert.ok(error instanceof ShopMoveRefused);
    assert.match(error.message, /the database is not empty \(.*ledger: 1.*\): a shop moves only into a new, empty database/);
    return true;
  });
  assert.ok(!existsSync(join(s.dataDir, MOVED_MARKER)));

  const running = await Store.open(s.dataDir);
  try {
    await assert.rejects(migrateShop({ dataDir: s.dataDir, database: await newDatabase() }), DataDirLockedError);
  } finally {
    await running.close();
  }
  const blank = await mkdtemp(join(tmpdir(), 'fr-migrate-blank-'));
  await assert.rejects(migrateShop({ dataDir: blank, database: await newDatabase() }), /holds no appliance/);
  await rm(blank, { recursive: true, force: true });
});

test('a copy that does not verify is rolled back whole, images in a shared directory too', { skip }, async (t) => {
  const s = await theShop(t);
  await unmark(s.dataDir);
  const url = await newDatabase();
  const imagesDir = await mkdtemp(join(tmpdir(), 'fr-migrate-images-'));
  t.after(() => rm(imagesDir, { recursive: true, force: true }));

  // A buggy copy credits five more than the shop had: the lots no longer agree with the data directory's ledger.
  const credited = migrateShop({
    dataDir: s.dataDir,
    database: url,
    imagesDir,
    beforeVerify: async (sql) => {
      await sql.query(`INSERT INTO ledger (id, type, amount, lot, at, note) VALUES ('le_bogus', 'adjust', 5, 'paid', now(), 'a bug')`);
    },
  });
  await assert.rejects(credited, (error: Error) => {
    assert.ok(error instanceof ShopMoveMismatch, String(error));
    const said = error.differences.join('\n');
    assert.match(said, /lots\.paid\.available: the data directory has \d+, the database \d+/);
    assert.match(said, /ledgerEntries/);
    assert.match(said, /digests\.ledger/);
    assert.match(error.message, /rolled back/);
    return true;
  });
  assert.ok(empty(await rowCounts(url)), 'nothing stays in the database');
  assert.deepEqual(await readdir(imagesDir, { recursive: true }), [], 'nor in the shared directory');
  assert.ok(!existsSync(join(s.dataDir, MOVED_MARKER)), 'and the data directory may be moved again');

  // A copy that loses an image is caught by the images' hashes.
  await assert.rejects(
    migrateShop({
      dataDir: s.dataDir,
      database: url,
      beforeVerify: async (sql) => {
        await sql.query(
          `UPDATE images SET bytes = bytes || '\\x00'::bytea WHERE (gen_id, name) IN (SELECT gen_id, name FROM images LIMIT 1)`,
        );
      },
    }),
    (error: Error) => error instanceof ShopMoveMismatch && /digests\.images/.test(error.message) && /imageBytes/.test(error.message),
  );
  assert.ok(empty(await rowCounts(url)));

  // The same database takes the shop once the copy is right, images in the shared directory.
  const report = await migrateShop({ dataDir: s.dataDir, database: url, imagesDir, now: s.now });
  assert.equal(report.images, imagesDir);
  const counts = await rowCounts(url);
  assert.equal(counts.images, 0, 'no image went into the database');
  const store = new DirectoryImageStore(imagesDir);
  let copied = 0;
  for (const record of s.generations)
    for (const image of imagesOf(record)) {
      assert.deepEqual(await store.get(image), await readFile(join(s.dataDir, image.file)));
      copied++;
    }
  assert.equal(report.totals.images, copied);
  for (const photo of [s.garments[0]!.image, ...s.garments[0]!.morePhotos!])
    assert.deepEqual(await readFile(join(imagesDir, photo.file)), await readFile(join(s.dataDir, photo.file)));
});

test('a shop without trial credits moves; one whose archive lost ledger entries is refused', { skip }, async (t) => {
  // Built through the features' functions: a shop run with --trial-credits 0 (its trial entry moves no credit), two
  // try-ons whose images were lost from the disk, both archived with the ledger prefix that is theirs.
  const dataDir = await mkdtemp(join(tmpdir(), 'fr-migrate-notrial-'));
  t.after(() => rm(dataDir, { recursive: true, force: true }));
  const store = await Store.open(dataDir);
  const now = new Date();
  await firstStart(store, defaultConfig({ dataDir, trialCredits: 0 }), now);
  const ids = [newId('gen'), newId('gen')];
  await store.mutate((state) => {
    redeemCredits(state, now, 10, 'voucher v-10');
    for (const id of ids) {
      const image = (name: string): StoredImage => ({ file: `images/${id}/${name}.jpg`, format: 'jpeg', width: 300, height: 400 });
      const params = plainParams();
      createGeneration(
        state,
        { id, keyId: state.keys[0]!.id, engine: 'warp', params, inputs: { selfie: image('selfie'), items: [] }, retentionDays: 7 },
        now,
      );
      completeGeneration(state, id, image('result'), now);
    }
  });
  assert.equal((await sweep(store, now, await Archive.open(dataDir), 1)).archived, 2);
  const account = accountSummary(store.state, now);
  await store.close();

  const url = await newDatabase();
  const report = await migrateShop({ dataDir, database: url, now });
  assert.equal(report.skippedEntries.length, 1, 'the trial of 0 credits');
  assert.deepEqual(report.missingImages.sort(), ids.flatMap((id) => [`images/${id}/selfie.jpg`, `images/${id}/result.jpg`]).sort());
  const state = await PgState.open(url);
  assert.deepEqual(await state.account(now), account);
  assert.deepEqual(account, { creditsRemaining: 8, creditsReserved: 0, trialCreditsRemaining: 0, trialExpiresAt: account.trialExpiresAt });
  assert.ok(account.trialExpiresAt);
  await state.close();

  // The archive's ledger loses its first lines (a bad restore): the balances its state carries over no longer add up.
  await unmark(dataDir);
  const ledgerFile = join(dataDir, 'archive', 'ledger.jsonl');
  await writeFile(ledgerFile, (await readFile(ledgerFile, 'utf8')).split('\n').slice(2).join('\n'));
  const other = await newDatabase();
  await assert.rejects(migrateShop({ dataDir, database: other, now }), (error: Error) => {
    assert.ok(error instanceof ShopMoveRefused);
    assert.match(error.message, /does not add up to the balances its state carries over .*Restore the archive/);
    return true;
  });
  assert.ok(empty(await rowCounts(other)));
});

test('fittingroom migrate runs as a command, prints what it verified, and refuses a second run', { skip }, async (t) => {
  const s = await theShop(t);
  await unmark(s.dataDir);
  const url = await newDatabase();
  const run = () =>
    spawnSync(process.execPath, ['--import', 'tsx', CLI, 'migrate', '--data-dir', s.dataDir, '--database', url], {
      encoding: 'utf8',
      timeout: 120_000,
    });
  const first = run();
  assert.equal(first.status, 0, first.stderr + first.stdout);
  for (const line of first.stdout.trim().split('\n')) t.diagnostic(line);
  assert.match(first.stdout, new RegExp(`Moved the shop ${s.state.installation!.id} in [0-9.]+ s; images in database`));
  assert.match(first.stdout, /try-ons +4 complete|try-ons +1 pending, 4 complete/);
  assert.match(first.stdout, /ledger entries +\d+ \(last seq \d+\)/);
  assert.match(first.stdout, /account +\d+ credits remaining/);
  assert.match(first.stdout, /Not copied: 1 GUI session/);
  const second = run();
  assert.equal(second.status, 1);
  assert.match(second.stderr, /^fittingroom: .* was already moved to PostgreSQL/);
  assert.deepEqual((await rowCounts(url)).shop_migrations, 1);
});
