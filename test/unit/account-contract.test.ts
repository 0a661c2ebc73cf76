/**
 * One contract, two stores, for who may act and the shop's own records: every test here runs against the lowdb
 * account store (a data directory) and the PostgreSQL one (a throwaway cluster, one database per test). Keys
 * (create, find by hash, revoke, rotate with grace, one successor), the installation (set once), webhook secrets,
 * the shop floor (PIN, throttle, choices), GUI sessions (the GUI's key made once), the catalogue (unique SKU and
 * barcode) and take-home links; races where they matter, and refusals that change nothing.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, describe, test } from 'node:test';
import { ApiError } from '../../server/kernel/errors.ts';
import { newId } from '../../server/kernel/ids.ts';
import { generateKey, hashKey } from '../../server/keys/api-keys.ts';
import { GUI_KEY_NAME, type AccountStore } from '../../server/state/accounts.ts';
import { LowdbAccounts } from '../../server/state/lowdb-accounts.ts';
import { PgAccounts } from '../../server/state/postgres/accounts.ts';
import { Store } from '../../server/store/db.ts';
import type { CatalogueGarment } from '../../server/store/schema.ts';
import { clusterForFile } from '../helpers/pg-cluster.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const t0 = new Date('2026-03-01T09:00:00Z');
const at = (seconds: number) => new Date(t0.getTime() + seconds * 1000);
const HOUR = 3600;

interface Adapter {
  name: string;
  skip: string | false;
  open(): Promise<AccountStore>;
}

const postgres = clusterForFile('accounts');

const adapters: Adapter[] = [
  {
    name: 'lowdb',
    skip: false,
    async open() {
      return new LowdbAccounts(await Store.open(await tempDir('fr-accounts-')));
    },
  },
  {
    name: 'postgres',
    skip: postgres.skip,
    async open() {
      return PgAccounts.open(await postgres.newDatabase());
    },
  },
];

async function rejects(promise: Promise<unknown>, code: string, detail?: RegExp): Promise<ApiError> {
  let caught: ApiError | undefined;
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof ApiError, `an ApiError, not ${String(error)}`);
    assert.equal(error.code, code);
    if (detail) assert.match(error.message, detail);
    caught = error;
    return true;
  });
  return caught!;
}

/** The codes of the refusals among settled outcomes. */
function refusals(outcomes: PromiseSettledResult<unknown>[]): string[] {
  return outcomes
    .filter((o): o is PromiseRejectedResult => o.status === 'rejected')
    .map((o) => (o.reason as ApiError).code ?? String(o.reason));
}

function sessionHash(): string {
  return createHash('sha256').update(randomBytes(32).toString('base64url')).digest('hex');
}

function shareHash(): string {
  return createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64');
}

function pinHash(n: number): string {
  return `scrypt$${Buffer.from(`salt${n}`).toString('base64')}$${Buffer.from(`hash${n}`).toString('base64')}`;
}

function garment(name: string, seconds: number, codes: { sku?: string; barcode?: string } = {}): CatalogueGarment {
  const createdAt = at(seconds);
  const id = newId('gar', createdAt.getTime());
  return {
    id,
    name,
    category: 'top',
    sizes: ['S', 'M'],
    ...codes,
    image: { file: `catalogue/${id}.jpg`, format: 'jpeg', width: 768, height: 1024 },
    createdAt: createdAt.toISOString(),
  };
}

const noWait = () => 0;
/** The GUI's policy (gui/session.ts): 5 free tries, then 30 s doubling up to 5 minutes. */
const guiPolicy = (failures: number) => (failures < 5 ? 0 : Math.min(300_000, 30_000 * 2 ** (failures - 5)));

for (const adapter of adapters) {
  describe(`account contract: ${adapter.name}`, { skip: adapter.skip }, () => {
    let store: AccountStore;
    const opened: AccountStore[] = [];
    after(() => Promise.all(opened.map((each) => each.close())));
    const fresh = async () => {
      store = await adapter.open();
      opened.push(store);
      return store;
    };

    test('the installation is set once, with the first admin key, even when many first starts race', async () => {
      await fresh();
      assert.equal(await store.installation(), null);
      const secrets = Array.from({ length: 6 }, () => generateKey());
      const outcomes = await Promise.all(secrets.map((secret, i) => store.install(at(i), secret)));
      assert.equal(outcomes.filter((outcome) => outcome.created).length, 1);
      const winner = outcomes.find((outcome) => outcome.created)!.installation;
      assert.match(winner.id, /^inst_[0-9A-Z]{26}$/);
      for (const outcome of outcomes) assert.deepEqual(outcome.installation, winner);
      assert.deepEqual(await store.installation(), winner);

      const keys = await store.keys();
      assert.equal(keys.length, 1, 'one first admin key');
      assert.equal(keys[0]!.name, 'first admin key');
      assert.equal(keys[0]!.scope, 'admin');
      const stored = secrets.filter((secret) => keys[0]!.hash === hashKey(secret));
      assert.equal(stored.length, 1, 'the winner’s key is the one stored');
      assert.equal((await store.activeKeyByHash(hashKey(stored[0]!), at(10)))?.id, keys[0]!.id);

      const again = await store.install(at(100), generateKey());
      assert.deepEqual(again, { installation: winner, created: false });
      assert.equal((await store.keys()).length, 1);
    });

    test('keys: created with only their hash, listed oldest first, found active by hash', async () => {
      await fresh();
      const admin = await store.createKey('till', 'admin', at(0));
      const kiosk = await store.createKey('kiosk', 'standard', at(1));
      assert.match(admin.key, /^fr_live_[0-9A-Za-z]{38}$/);
      assert.deepEqual(admin.record, {
        id: admin.record.id,
        name: 'till',
        scope: 'admin',
        hash: hashKey(admin.key),
        prefix: admin.key.slice(0, 12),
        createdAt: at(0).toISOString(),
        lineageId: admin.record.id,
      });
      assert.ok(!JSON.stringify(await store.keys()).includes(admin.key), 'the key itself is never stored');
      assert.deepEqual(await store.keys(), [admin.record, kiosk.record]);
      assert.deepEqual(await store.key(kiosk.record.id), kiosk.record);
      assert.equal(await store.key('key_none'), undefined);
      assert.deepEqual(await store.activeKeyByHash(hashKey(kiosk.key), at(2)), kiosk.record);
      assert.equal(await store.activeKeyByHash(hashKey(generateKey()), at(2)), undefined);

      const given = generateKey();
      const stored = await store.createKey('given', 'standard', at(3), { key: given });
      assert.equal(stored.key, given);
      await rejects(store.createKey('again', 'admin', at(4), { key: given }), 'conflict');
      assert.equal((await store.keys()).length, 3, 'the refused key was not stored');

      const copy = (await store.key(admin.record.id))!;
      copy.name = 'changed';
      assert.equal((await store.key(admin.record.id))!.name, 'till', 'what a store returns is a copy');
    });

    test('revoking: at once, twice is harmless, 404 if unknown, and never the last lasting admin key', async () => {
      await fresh();
      const admin = await store.createKey('till', 'admin', at(0));
      const kiosk = await store.createKey('kiosk', 'standard', at(0));
      await rejects(store.revokeKey('key_none', at(1)), 'not_found');
      await rejects(store.revokeKey(admin.record.id, at(1)), 'conflict', /No other admin key/);
      assert.deepEqual(await store.key(admin.record.id), admin.record, 'a refused revocation changes nothing');

      const revoked = await store.revokeKey(kiosk.record.id, at(2));
      assert.equal(revoked.revokedAt, at(2).toISOString());
      assert.equal(await store.activeKeyByHash(hashKey(kiosk.key), at(2)), undefined);
      assert.deepEqual(await store.revokeKey(kiosk.record.id, at(3)), revoked, 'revoking again keeps the first time');

      // An admin key in its rotation grace does not count as one that remains.
      const rotated = await store.rotateKey(admin.record.id, at(4), HOUR);
      await rejects(store.revokeKey(rotated.record.id, at(5)), 'conflict');
      const second = await store.createKey('office', 'admin', at(6));
      assert.equal((await store.revokeKey(rotated.record.id, at(7))).revokedAt, at(7).toISOString());
      await rejects(store.revokeKey(second.record.id, at(8)), 'conflict');
    });

    test('two admins revoking each other at once: one remains', async () => {
      await fresh();
      const a = await store.createKey('a', 'admin', at(0));
      const b = await store.createKey('b', 'admin', at(0));
      const outcomes = await Promise.allSettled([store.revokeKey(a.record.id, at(1)), store.revokeKey(b.record.id, at(1))]);
      assert.deepEqual(refusals(outcomes), ['conflict']);
      assert.equal((await store.keys()).filter((key) => !key.revokedAt).length, 1);
    });

    test('rotating: a successor in the same lineage; the old key works through its grace; a key is rotated once', async () => {
      await fresh();
      const kiosk = await store.createKey('kiosk', 'standard', at(0));
      await rejects(store.rotateKey('key_none', at(1), 60), 'not_found');
      const rotated = await store.rotateKey(kiosk.record.id, at(10), HOUR);
      assert.notEqual(rotated.key, kiosk.key);
      assert.equal(rotated.record.name, 'kiosk');
      assert.equal(rotated.record.scope, 'standard');
      assert.equal(rotated.record.lineageId, kiosk.record.id);
      assert.equal(rotated.previous.id, kiosk.record.id);
      assert.equal(rotated.previous.rotatedTo, rotated.record.id);
      assert.equal(rotated.previous.expiresAt, at(10 + HOUR).toISOString());
      assert.deepEqual(await store.key(kiosk.record.id), rotated.previous);
      assert.ok(await store.activeKeyByHash(hashKey(kiosk.key), at(9 + HOUR)), 'the old key works in its grace');
      assert.equal(await store.activeKeyByHash(hashKey(kiosk.key), at(10 + HOUR)), undefined, 'and not after it');
      assert.ok(await store.activeKeyByHash(hashKey(rotated.key), at(10 + HOUR)));

      await rejects(store.rotateKey(kiosk.record.id, at(20), 60), 'conflict', /already rotated/);
      assert.deepEqual(await store.key(kiosk.record.id), rotated.previous, 'a refused rotation changes nothing');
      assert.equal((await store.keys()).length, 2);

      const third = await store.rotateKey(rotated.record.id, at(30), 0);
      assert.equal(third.record.lineageId, kiosk.record.id, 'one lineage through every rotation');
      assert.equal(await store.activeKeyByHash(hashKey(rotated.key), at(30)), undefined, 'grace 0 ends the old key at once');
      await rejects(store.rotateKey(rotated.record.id, at(31), 60), 'conflict');

      const gone = await store.createKey('gone', 'standard', at(40));
      await store.revokeKey(gone.record.id, at(41));
      await rejects(store.rotateKey(gone.record.id, at(42), 60), 'conflict', /revoked or expired/);
    });

    test('concurrent rotations of one key: one wins, the others change nothing', async () => {
      await fresh();
      const kiosk = await store.createKey('kiosk', 'standard', at(0));
      const outcomes = await Promise.allSettled(Array.from({ length: 6 }, () => store.rotateKey(kiosk.record.id, at(1), HOUR)));
      const won = outcomes.filter((outcome) => outcome.status === 'fulfilled');
      assert.equal(won.length, 1);
      assert.deepEqual(refusals(outcomes), Array(5).fill('conflict'));
      const keys = await store.keys();
      assert.equal(keys.length, 2, 'one successor');
      assert.equal(keys.find((key) => key.id === kiosk.record.id)!.rotatedTo, keys[1]!.id);
    });

    test('webhook secrets: made once however many ask, rotated with the old one signing through the overlap', async () => {
      await fresh();
      assert.deepEqual(await store.signingSecrets(at(0)), []);
      const made = await Promise.all(Array.from({ length: 6 }, () => store.webhookSecret(at(0))));
      assert.match(made[0]!.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
      for (const secret of made) assert.deepEqual(secret, made[0]);
      assert.deepEqual(await store.webhookSecretView(at(1)), { secret: made[0]!.secret });
      assert.deepEqual(await store.signingSecrets(at(1)), [made[0]!.secret]);

      const view = await store.rotateWebhookSecret(at(10), 2);
      assert.notEqual(view.secret, made[0]!.secret);
      assert.deepEqual(view, { secret: view.secret, previousSecret: made[0]!.secret, previousExpiresAt: at(10 + 2 * HOUR).toISOString() });
      assert.deepEqual(await store.webhookSecretView(at(11)), view);
      assert.deepEqual((await store.webhookSecret(at(11))).secret, view.secret);
      assert.deepEqual(await store.signingSecrets(at(11)), [view.secret, made[0]!.secret]);
      assert.deepEqual(await store.signingSecrets(at(10 + 2 * HOUR)), [view.secret], 'the old one stops after the overlap');
      assert.deepEqual(await store.webhookSecretView(at(10 + 2 * HOUR)), { secret: view.secret });

      // A second rotation inside the overlap: the first secret stops at once, one previous secret at most.
      const next = await store.rotateWebhookSecret(at(20), 2);
      assert.equal(next.previousSecret, view.secret);
      assert.deepEqual(await store.signingSecrets(at(21)), [next.secret, view.secret]);

      const raced = await Promise.all([store.rotateWebhookSecret(at(30), 1), store.rotateWebhookSecret(at(30), 1)]);
      const signing = await store.signingSecrets(at(31));
      assert.equal(signing.length, 2, 'one current and one previous, whatever the race');
      assert.ok(raced.some((one) => one.secret === signing[0]));
    });

    test('the shop floor: the PIN, the choices, and the PIN throttle counted without losing a failure', async () => {
      await fresh();
      assert.deepEqual(await store.shopFloor(), {
        pinHash: null,
        guiKeyId: null,
        eraseOnNewCustomer: false,
        autoCapture: false,
        pinThrottle: null,
      });
      await store.setPin(pinHash(1));
      await store.setChoices({ autoCapture: true });
      await store.setChoices({ eraseOnNewCustomer: true });
      await store.setChoices({ autoCapture: false });
      const floor = await store.shopFloor();
      assert.equal(floor.pinHash, pinHash(1));
      assert.equal(floor.eraseOnNewCustomer, true);
      assert.equal(floor.autoCapture, false);

      for (let n = 1; n <= 4; n++) assert.deepEqual(await store.pinFailed(at(n), guiPolicy), { failures: n, blockedUntil: null });
      assert.deepEqual(await store.pinFailed(at(5), guiPolicy), { failures: 5, blockedUntil: at(35).toISOString() });
      assert.deepEqual(await store.pinFailed(at(40), guiPolicy), { failures: 6, blockedUntil: at(100).toISOString() });
      assert.deepEqual((await store.shopFloor()).pinThrottle, { failures: 6, blockedUntil: at(100).toISOString() });
      await store.pinSucceeded();
      assert.equal((await store.shopFloor()).pinThrottle, null);
      await store.pinSucceeded();

      await Promise.all(Array.from({ length: 12 }, () => store.pinFailed(at(200), noWait)));
      assert.deepEqual((await store.shopFloor()).pinThrottle, { failures: 12, blockedUntil: null }, 'no failure lost in a race');
    });

    test('sessions: started for a live admin key, found live by token hash, ended one by one or all of a key', async () => {
      await fresh();
      const admin = await store.createKey('till', 'admin', at(0));
      const other = await store.createKey('office', 'admin', at(0));
      const kiosk = await store.createKey('kiosk', 'standard', at(0));
      const hash = sessionHash();
      const started = await store.startSession({ hash, via: 'key', keyId: admin.record.id, expiresAt: at(12 * HOUR) }, at(1));
      assert.match(started.session.id, /^ses_/);
      assert.deepEqual(started.session, {
        id: started.session.id,
        hash,
        keyId: admin.record.id,
        via: 'key',
        createdAt: at(1).toISOString(),
        expiresAt: at(12 * HOUR).toISOString(),
      });
      assert.deepEqual(started.key, admin.record);
      assert.deepEqual(await store.liveSession(hash, at(2)), started);
      assert.equal(await store.liveSession(hash, at(12 * HOUR)), undefined, 'not once it expires');
      assert.equal(await store.liveSession(sessionHash(), at(2)), undefined);

      await rejects(
        store.startSession({ hash: sessionHash(), via: 'key', keyId: kiosk.record.id, expiresAt: at(HOUR) }, at(1)),
        'forbidden',
      );
      await rejects(store.startSession({ hash: sessionHash(), via: 'key', keyId: 'key_none', expiresAt: at(HOUR) }, at(1)), 'unauthorized');
      await rejects(store.startSession({ hash, via: 'key', keyId: other.record.id, expiresAt: at(HOUR) }, at(1)), 'conflict');
      await assert.rejects(
        store.startSession(
          { hash: sessionHash(), via: 'key', keyId: admin.record.id, expiresAt: at(HOUR), newPinHash: pinHash(2) },
          at(HOUR),
        ),
        /must end after it starts/,
      );

      // A session's key revoked: the session is no longer live.
      const second = await store.startSession({ hash: sessionHash(), via: 'key', keyId: other.record.id, expiresAt: at(HOUR) }, at(3));
      await store.revokeKey(other.record.id, at(4));
      assert.equal(await store.liveSession(second.session.hash, at(5)), undefined);
      await rejects(
        store.startSession({ hash: sessionHash(), via: 'key', keyId: other.record.id, expiresAt: at(HOUR) }, at(5)),
        'unauthorized',
      );

      const more = await store.startSession({ hash: sessionHash(), via: 'key', keyId: admin.record.id, expiresAt: at(HOUR) }, at(6));
      assert.equal(await store.endSession(more.session.id), true);
      assert.equal(await store.endSession(more.session.id), false);
      assert.equal(await store.liveSession(more.session.hash, at(7)), undefined);
      await store.startSession({ hash: sessionHash(), via: 'key', keyId: admin.record.id, expiresAt: at(HOUR) }, at(8));
      assert.equal(await store.endSessionsOf(admin.record.id), 2);
      assert.equal(await store.liveSession(hash, at(9)), undefined);
      assert.equal(await store.endSessionsOf(admin.record.id), 0);
      assert.equal((await store.shopFloor()).pinHash, null, 'refused sign-ins set no PIN');
    });

    test('a PIN chosen at a key sign-in is set with the session', async () => {
      await fresh();
      const admin = await store.createKey('till', 'admin', at(0));
      await store.startSession(
        { hash: sessionHash(), via: 'key', keyId: admin.record.id, expiresAt: at(HOUR), newPinHash: pinHash(7) },
        at(1),
      );
      assert.equal((await store.shopFloor()).pinHash, pinHash(7));
    });

    test('PIN and shell sessions act as the GUI’s own key: made once under a race, made again once retired', async () => {
      await fresh();
      await store.createKey('till', 'admin', at(0));
      const started = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          store.startSession({ hash: sessionHash(), via: i % 2 ? 'pin' : 'shell', keyId: null, expiresAt: at(HOUR) }, at(1)),
        ),
      );
      const guiKeyId = (await store.shopFloor()).guiKeyId;
      assert.ok(guiKeyId);
      for (const { session, key } of started) {
        assert.equal(session.keyId, guiKeyId);
        assert.equal(key.name, GUI_KEY_NAME);
        assert.equal(key.scope, 'admin');
      }
      assert.equal((await store.keys()).length, 2, 'one GUI key for all of them');

      // Rotated (so retiring), the GUI's key is replaced at the next PIN sign-in; revoked, likewise.
      await store.rotateKey(guiKeyId, at(2), HOUR);
      const next = await store.startSession({ hash: sessionHash(), via: 'pin', keyId: null, expiresAt: at(HOUR) }, at(3));
      assert.notEqual(next.key.id, guiKeyId);
      assert.equal((await store.shopFloor()).guiKeyId, next.key.id);
      await store.revokeKey(next.key.id, at(4));
      const again = await store.startSession({ hash: sessionHash(), via: 'pin', keyId: null, expiresAt: at(HOUR) }, at(5));
      assert.notEqual(again.key.id, next.key.id);
      assert.equal((await store.keys()).filter((key) => key.name === GUI_KEY_NAME).length, 4);
    });

    test('the catalogue: added, listed newest first, changed, removed; SKU and barcode unique regardless of case', async () => {
      await fresh();
      const shirt = await store.addGarment(garment('Shirt', 1, { sku: 'SH-1', barcode: '4006381333931' }));
      const coat = await store.addGarment(garment('Coat', 3, { sku: 'CO-1' }));
      const scarf = await store.addGarment(garment('Scarf', 2, { sku: '' }));
      assert.equal(scarf.sku, undefined, 'an empty SKU is none');
      assert.deepEqual(
        (await store.garments()).map((g) => g.name),
        ['Coat', 'Scarf', 'Shirt'],
      );
      assert.deepEqual(await store.garment(shirt.id), shirt);
      assert.equal(await store.garment('gar_none'), undefined);

      const taken = await rejects(store.addGarment(garment('Other', 4, { sku: 'sh-1', barcode: '4006381333931' })), 'validation_failed');
      assert.deepEqual(taken.errors, [
        { field: 'sku', message: 'is already that of “Shirt”' },
        { field: 'barcode', message: 'is already that of “Shirt”' },
      ]);
      await store.addGarment(garment('Étole', 4, { sku: 'ÉT-1' }));
      await rejects(store.addGarment(garment('Other', 4, { sku: 'ét-1' })), 'validation_failed', /Étole/);
      await rejects(store.addGarment({ ...garment('Twin', 4), id: shirt.id }), 'conflict');
      assert.equal((await store.garments()).length, 4, 'refused garments are not added');

      const changed = await store.updateGarment(coat.id, (g) => {
        g.name = 'Long coat';
        g.sizes = ['L'];
        g.barcode = '123';
      });
      assert.deepEqual(changed.before, coat);
      assert.deepEqual(changed.after, { ...coat, name: 'Long coat', sizes: ['L'], barcode: '123' });
      assert.deepEqual(await store.garment(coat.id), changed.after);

      await rejects(
        store.updateGarment(coat.id, (g) => {
          g.name = 'Not kept';
          g.sku = 'Sh-1';
        }),
        'validation_failed',
        /sku: is already that of “Shirt”/,
      );
      await rejects(
        store.updateGarment(coat.id, (g) => {
          g.name = 'Not kept either';
          throw new ApiError('conflict', 'the change refuses itself');
        }),
        'conflict',
      );
      assert.deepEqual(await store.garment(coat.id), changed.after, 'refused changes change nothing');
      await rejects(
        store.updateGarment('gar_none', () => undefined),
        'not_found',
      );
      const sameCode = await store.updateGarment(shirt.id, (g) => {
        g.sku = 'sh-1';
      });
      assert.equal(sameCode.after.sku, 'sh-1', 'a garment may change the case of its own code');
      const cleared = await store.updateGarment(shirt.id, (g) => {
        g.sku = '';
        delete g.barcode;
      });
      assert.equal(cleared.after.sku, undefined);

      assert.deepEqual(await store.removeGarment(coat.id), changed.after);
      await rejects(store.removeGarment(coat.id), 'not_found');
      assert.ok(await store.addGarment(garment('New coat', 5, { sku: 'co-1', barcode: '123' })), 'a removed garment’s codes are free');
      assert.ok(await store.addGarment(garment('New shirt', 6, { sku: 'SH-1' })), 'so are cleared ones');
    });

    test('concurrent catalogue adds with one SKU: one wins, the others are refused', async () => {
      await fresh();
      const outcomes = await Promise.allSettled(
        Array.from({ length: 6 }, (_, i) => store.addGarment(garment(`Shirt ${i}`, i, { sku: `RACE-${i % 2 ? 'a' : 'A'}` }))),
      );
      assert.equal(outcomes.filter((outcome) => outcome.status === 'fulfilled').length, 1);
      assert.deepEqual(refusals(outcomes), Array(5).fill('validation_failed'));
      assert.equal((await store.garments()).length, 1);

      const [a, b] = await Promise.all([store.addGarment(garment('A', 10)), store.addGarment(garment('B', 11))]);
      const edits = await Promise.allSettled([
        store.updateGarment(a.id, (g) => void (g.barcode = 'BC-9')),
        store.updateGarment(b.id, (g) => void (g.barcode = 'bc-9')),
      ]);
      assert.deepEqual(refusals(edits), ['validation_failed']);
      assert.equal((await store.garments()).filter((g) => g.barcode).length, 1);
    });

    test('take-home links: one per try-on, valid until they expire, replaced by a newer one, removed', async () => {
      await fresh();
      const genA = newId('gen', t0.getTime());
      const genB = newId('gen', t0.getTime());
      const first = await store.createShare(genA, shareHash(), at(HOUR), at(0));
      assert.deepEqual(await store.share(genA, at(1)), first);
      assert.equal(await store.share(genA, at(HOUR)), undefined, 'expired');
      assert.equal(await store.share(genB, at(1)), undefined);

      const newer = await store.createShare(genA, shareHash(), at(30), at(2));
      assert.deepEqual(await store.share(genA, at(3)), newer, 'a newer link replaces the older one');
      assert.notEqual(newer.hash, first.hash);

      const other = await store.createShare(genB, shareHash(), at(HOUR), at(3));
      assert.equal(await store.removeShare(genB), true);
      assert.equal(await store.removeShare(genB), false);
      assert.equal(await store.share(genB, at(4)), undefined);
      assert.ok(other);
    });
  });
}
