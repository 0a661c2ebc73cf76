import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { composeEngine, startTestApp, startTestAppliance, tempDataDir, type TestAppliance } from '../helpers/appliance.ts';
import { submission } from '../helpers/inputs.ts';
import { generateKey } from '../../server/keys/api-keys.ts';
import { accountSummary, balancesOf } from '../../server/credits/ledger.ts';

const KEY = /^fr_live_[0-9A-Za-z]{38}$/;
const REPO_ROOT = resolve(import.meta.dirname, '../..');
const CLI_TIMEOUT_MS = 30_000;
const DAY_MS = 86_400_000;

interface PublicKeyView {
  id: string;
  name: string;
  scope: 'admin' | 'standard';
  prefix: string;
  createdAt: string;
  revokedAt?: string;
  expiresAt?: string;
}

interface CreatedKey extends PublicKeyView {
  key: string;
}

/** A clock that only moves when told to. */
function manualClock(): { clock: () => Date; advance(ms: number): void } {
  let nowMs = Date.now();
  return { clock: () => new Date(nowMs), advance: (ms) => (nowMs += ms) };
}

async function expectProblem(response: Response, status: number, code: string): Promise<{ code: string; requestId: string }> {
  assert.equal(response.status, status);
  assert.equal(response.headers.get('content-type'), 'application/problem+json; charset=utf-8');
  const problem = (await response.json()) as { code: string; requestId: string; status: number };
  assert.equal(problem.code, code);
  assert.equal(problem.status, status);
  assert.match(problem.requestId, /^req_/);
  return problem;
}

async function expectUnauthorized(response: Response): Promise<void> {
  await expectProblem(response, 401, 'unauthorized');
  assert.equal(response.headers.get('www-authenticate'), 'Bearer');
}

async function createKey(app: TestAppliance, name: string, scope: 'admin' | 'standard', key?: string): Promise<CreatedKey> {
  const response = await app.call('POST', '/api/v1/keys', { body: { name, scope }, ...(key === undefined ? {} : { key }) });
  assert.equal(response.status, 201);
  const created = (await response.json()) as CreatedKey;
  assert.match(created.key, KEY);
  return created;
}

async function listKeys(app: TestAppliance, key?: string): Promise<PublicKeyView[]> {
  const response = await app.call('GET', '/api/v1/keys', key === undefined ? {} : { key });
  assert.equal(response.status, 200);
  return (await response.json()) as PublicKeyView[];
}

async function adminKeyId(app: TestAppliance): Promise<string> {
  const admins = (await listKeys(app)).filter((key) => key.scope === 'admin' && !key.revokedAt);
  assert.equal(admins.length, 1);
  return admins[0]!.id;
}

/** The status of an authenticated read with `key`. */
async function statusWith(app: TestAppliance, key: string): Promise<number> {
  const response = await app.call('GET', '/api/v1/account', { key });
  await response.body?.cancel();
  return response.status;
}

async function account(app: TestAppliance): Promise<{ creditsRemaining: number; creditsReserved: number }> {
  return (await (await app.call('GET', '/api/v1/account')).json()) as { creditsRemaining: number; creditsReserved: number };
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Runs the CLI from the repository root; never rejects. */
function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, ['bin/fittingroom.js', ...args], { cwd: REPO_ROOT, timeout: CLI_TIMEOUT_MS }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
      done({ code, stdout, stderr });
    });
  });
}

test('missing, malformed, unknown and checksum-broken keys are 401 with WWW-Authenticate; health needs no key', async (t) => {
  const app = await startTestApp(t);
  const admin = app.adminKey;
  assert.match(admin, KEY);
  const last = admin.at(-1)!;
  const brokenChecksum = admin.slice(0, -1) + (last === 'a' ? 'b' : 'a');
  const typoInBody = admin.slice(0, 10) + (admin[10] === 'a' ? 'b' : 'a') + admin.slice(11);
  const cases: Array<[string, Record<string, string>]> = [
    ['no Authorization header', {}],
    ['an empty Bearer', { authorization: 'Bearer ' }],
    ['another scheme', { authorization: `Basic ${Buffer.from(`x:${admin}`).toString('base64')}` }],
    ['the key without a scheme', { authorization: admin }],
    ['a malformed key', { authorization: 'Bearer not-a-key' }],
    ['a truncated key', { authorization: `Bearer ${admin.slice(0, -3)}` }],
    ['a well-formed unknown key', { authorization: `Bearer ${generateKey()}` }],
    ['a key with a broken checksum', { authorization: `Bearer ${brokenChecksum}` }],
    ['a key with a typo', { authorization: `Bearer ${typoInBody}` }],
    ['two keys', { authorization: `Bearer ${admin} ${admin}` }],
  ];
  for (const [label, headers] of cases) {
    for (const [method, path] of [
      ['GET', '/api/v1/account'],
      ['GET', '/api/v1/keys'],
      ['POST', '/api/v1/try-on'],
    ] as const) {
      await t.test(`${label}: ${method} ${path}`, async () => {
        const body = method === 'POST' ? await submission() : undefined;
        await expectUnauthorized(await app.call(method, path, { key: null, headers, ...(body ? { body } : {}) }));
      });
    }
  }
  assert.equal(app.appliance.store.state.ledger.length, 1, 'no unauthenticated submit reserved a credit');

  const health = await app.call('GET', '/api/v1/health', { key: null });
  assert.equal(health.status, 200);
  assert.equal(((await health.json()) as { status: string }).status, 'ok');
  assert.equal(await statusWith(app, admin), 200);
  const lowercase = await app.call('GET', '/api/v1/account', { key: null, headers: { authorization: `bearer ${admin}` } });
  assert.equal(lowercase.status, 200, 'the auth scheme is case-insensitive');
});

test('an admin creates a standard key: shown once, never listed, and limited to its scope', async (t) => {
  const app = await startTestApp(t);
  const created = await createKey(app, 'till 1', 'standard');
  assert.equal(created.name, 'till 1');
  assert.equal(created.scope, 'standard');
  assert.ok(created.key.startsWith(created.prefix), 'the prefix is the start of the key');
  assert.ok(created.prefix.length < 16, 'the prefix reveals only the start');

  const listing = await app.call('GET', '/api/v1/keys');
  const text = await listing.text();
  for (const secret of [created.key, app.adminKey, sha256(created.key), sha256(app.adminKey), created.key.slice(8, 40)]) {
    assert.ok(!text.includes(secret), 'the listing shows no key and no hash');
  }
  const keys = JSON.parse(text) as Array<Record<string, unknown>>;
  assert.deepEqual(keys.map((key) => key.id).sort(), [created.id, await adminKeyId(app)].sort());
  for (const key of keys) {
    assert.equal(key.key, undefined);
    assert.equal(key.hash, undefined);
  }

  const submit = await app.call('POST', '/api/v1/try-on', { key: created.key, body: await submission() });
  assert.equal(submit.status, 202);
  const { genId } = (await submit.json()) as { genId: string };
  const done = await app.call('GET', `/api/v1/try-on/${genId}?wait=20`, { key: created.key });
  assert.equal(((await done.json()) as { status: string }).status, 'complete');
  const own = await app.call('GET', '/api/v1/account', { key: created.key });
  assert.equal(own.status, 200);
  assert.equal(((await own.json()) as { creditsRemaining: number }).creditsRemaining, 24);

  const adminId = await adminKeyId(app);
  for (const [method, path, body] of [
    ['GET', '/api/v1/keys', undefined],
    ['POST', '/api/v1/keys', { name: 'sneaky', scope: 'admin' }],
    ['DELETE', `/api/v1/keys/${adminId}`, undefined],
    ['POST', `/api/v1/keys/${adminId}/rotate`, {}],
    ['POST', `/api/v1/keys/${created.id}/rotate`, {}],
  ] as const) {
    await expectProblem(await app.call(method, path, { key: created.key, ...(body ? { body } : {}) }), 403, 'forbidden');
  }
  assert.equal((await listKeys(app)).length, 2, 'the refused calls created nothing');
  assert.equal(await statusWith(app, app.adminKey), 200, 'the admin key was not revoked');

  for (const body of [{ name: '', scope: 'standard' }, { name: 'x', scope: 'root' }, { scope: 'standard' }, { name: 'a\u0000b' }]) {
    await expectProblem(await app.call('POST', '/api/v1/keys', { body }), 422, 'validation_failed');
  }
  const defaulted = (await (await app.call('POST', '/api/v1/keys', { body: { name: 'no scope given' } })).json()) as CreatedKey;
  assert.equal(defaulted.scope, 'standard');
});

test('revocation is immediate, the last admin key cannot be revoked, and unknown ids are 404', async (t) => {
  const app = await startTestApp(t);
  const firstAdminId = await adminKeyId(app);
  const standard = await createKey(app, 'kiosk', 'standard');
  assert.equal(await statusWith(app, standard.key), 200);
  const revoked = await app.call('DELETE', `/api/v1/keys/${standard.id}`);
  assert.equal(revoked.status, 204);
  await expectUnauthorized(await app.call('GET', '/api/v1/account', { key: standard.key }));
  await expectUnauthorized(await app.call('POST', '/api/v1/try-on', { key: standard.key, body: await submission() }));
  const listed = (await listKeys(app)).find((key) => key.id === standard.id);
  assert.ok(listed?.revokedAt, 'the listing shows when it was revoked');
  assert.equal((await app.call('DELETE', `/api/v1/keys/${standard.id}`)).status, 204, 'revoking twice is harmless');
  await expectProblem(await app.call('POST', `/api/v1/keys/${standard.id}/rotate`, { body: {} }), 409, 'conflict');

  await expectProblem(await app.call('DELETE', `/api/v1/keys/${firstAdminId}`), 409, 'conflict');
  assert.equal(await statusWith(app, app.adminKey), 200, 'the last admin key still works');

  const second = await createKey(app, 'second admin', 'admin');
  assert.equal((await app.call('DELETE', `/api/v1/keys/${firstAdminId}`, { key: second.key })).status, 204);
  await expectUnauthorized(await app.call('GET', '/api/v1/keys'));
  await expectProblem(await app.call('DELETE', `/api/v1/keys/${second.id}`, { key: second.key }), 409, 'conflict');
  assert.equal((await listKeys(app, second.key)).filter((key) => key.scope === 'admin' && !key.revokedAt).length, 1);

  for (const id of ['key_01M00000000000000000000000', 'nope', '..%2Fstate.json']) {
    await expectProblem(await app.call('DELETE', `/api/v1/keys/${id}`, { key: second.key }), 404, 'not_found');
    await expectProblem(await app.call('POST', `/api/v1/keys/${id}/rotate`, { key: second.key, body: {} }), 404, 'not_found');
  }
  assert.equal(app.appliance.store.state.ledger.length, 1, 'no credit moved');
});

test('rotation: both keys work during the grace, graceSeconds 0 ends the old one at once, the 24 h default expires', async (t) => {
  const time = manualClock();
  const app = await startTestApp(t, { clock: time.clock });
  const standard = await createKey(app, 'app', 'standard');

  const rotated = await app.call('POST', `/api/v1/keys/${standard.id}/rotate`);
  assert.equal(rotated.status, 201);
  const next = (await rotated.json()) as CreatedKey & { previous: PublicKeyView };
  assert.match(next.key, KEY);
  assert.notEqual(next.key, standard.key);
  assert.notEqual(next.id, standard.id);
  assert.equal(next.scope, 'standard');
  assert.equal(next.name, 'app');
  assert.equal(next.previous.id, standard.id);
  assert.equal(Date.parse(next.previous.expiresAt!), time.clock().getTime() + DAY_MS);
  assert.equal(await statusWith(app, standard.key), 200, 'the old key works during the grace');
  assert.equal(await statusWith(app, next.key), 200, 'the new key works at once');

  time.advance(DAY_MS - 1000);
  assert.equal(await statusWith(app, standard.key), 200, 'the old key works 1 s before the grace ends');
  time.advance(2000);
  await expectUnauthorized(await app.call('GET', '/api/v1/account', { key: standard.key }));
  assert.equal(await statusWith(app, next.key), 200, 'the new key outlives the grace');

  const immediate = await app.call('POST', `/api/v1/keys/${next.id}/rotate`, { body: { graceSeconds: 0 } });
  assert.equal(immediate.status, 201);
  const third = (await immediate.json()) as CreatedKey;
  await expectUnauthorized(await app.call('GET', '/api/v1/account', { key: next.key }));
  assert.equal(await statusWith(app, third.key), 200);

  for (const graceSeconds of [-1, 1.5, '60', 30 * 86_400 + 1]) {
    await expectProblem(await app.call('POST', `/api/v1/keys/${third.id}/rotate`, { body: { graceSeconds } }), 422, 'validation_failed');
  }
  assert.equal(await statusWith(app, third.key), 200, 'a refused rotation changes nothing');

  const adminRotation = await app.call('POST', `/api/v1/keys/${await adminKeyId(app)}/rotate`, { body: { graceSeconds: 0 } });
  assert.equal(adminRotation.status, 201);
  const newAdmin = (await adminRotation.json()) as CreatedKey;
  assert.equal(newAdmin.scope, 'admin');
  await expectUnauthorized(await app.call('GET', '/api/v1/keys'));
  assert.equal((await listKeys(app, newAdmin.key)).length, 5);
});

test('revoking the successor of a rotated admin key is refused while the old key only lives out its grace', async (t) => {
  const time = manualClock();
  const app = await startTestApp(t, { clock: time.clock });
  const rotated = (await (await app.call('POST', `/api/v1/keys/${await adminKeyId(app)}/rotate`)).json()) as CreatedKey;
  const revoke = await app.call('DELETE', `/api/v1/keys/${rotated.id}`);
  time.advance(DAY_MS + 1000);
  const oldStatus = await statusWith(app, app.adminKey);
  const newStatus = (await app.call('GET', '/api/v1/keys', { key: rotated.key })).status;
  assert.ok(
    oldStatus === 200 || newStatus === 200,
    `revoking the successor answered ${revoke.status}; 24 h later the old admin key gets ${oldStatus} and the successor ${newStatus}: no admin key is left`,
  );
});

test('rate limit: the 4th submit in a minute is 429 with Retry-After, per key, moves no credit, and refills', async (t) => {
  const time = manualClock();
  const app = await startTestApp(t, { clock: time.clock, config: { submitsPerMinute: 3 } });
  const other = await createKey(app, 'other till', 'standard');
  const body = await submission();
  const genIds: string[] = [];
  for (let i = 0; i < 3; i++) {
    const response = await app.call('POST', '/api/v1/try-on', { body });
    assert.equal(response.status, 202, `submit ${i + 1}`);
    genIds.push(((await response.json()) as { genId: string }).genId);
  }
  // The first submits may complete meanwhile (captures); only reservations tell whether the refused one moved a credit.
  const reserves = () => app.appliance.store.state.ledger.filter((entry) => entry.type === 'reserve').length;
  const reservesBefore = reserves();

  const limited = await app.call('POST', '/api/v1/try-on', { body });
  await expectProblem(limited, 429, 'rate_limited');
  const retryAfter = Number(limited.headers.get('retry-after'));
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After: ${limited.headers.get('retry-after')}`);
  assert.equal(reserves(), reservesBefore, 'the refused submit reserved no credit');
  assert.equal(Object.keys(app.appliance.store.state.generations).length, 3);
  // One synchronous read of the state: a job may capture between two awaits.
  const now = accountSummary(app.appliance.store.state, time.clock());
  assert.equal(now.creditsRemaining + now.creditsReserved, 25 - balancesOf(app.appliance.store.state).spent);

  assert.equal((await app.call('GET', '/api/v1/account')).status, 200, 'reads are not rate limited');
  const otherSubmit = await app.call('POST', '/api/v1/try-on', { key: other.key, body });
  assert.equal(otherSubmit.status, 202, 'another key has its own bucket');
  genIds.push(((await otherSubmit.json()) as { genId: string }).genId);

  const rotated = (await (await app.call('POST', `/api/v1/keys/${await adminKeyId(app)}/rotate`, { body: {} })).json()) as CreatedKey;
  await expectProblem(await app.call('POST', '/api/v1/try-on', { key: rotated.key, body }), 429, 'rate_limited');

  time.advance(60_000);
  const refilled = await app.call('POST', '/api/v1/try-on', { body });
  assert.equal(refilled.status, 202, 'a minute later the bucket is full again');
  genIds.push(((await refilled.json()) as { genId: string }).genId);
  for (const genId of genIds) {
    const done = await app.call('GET', `/api/v1/try-on/${genId}?wait=20`);
    assert.equal(((await done.json()) as { status: string }).status, 'complete');
  }
  assert.equal((await account(app)).creditsRemaining, 25 - genIds.length);
});

test('the CLI manages keys offline, its keys work in the appliance, and it refuses a data directory in use', async (t) => {
  const dataDir = await tempDataDir();
  const created = await cli(['keys', 'create', '--name', 'ops laptop', '--scope', 'admin', '--data-dir', dataDir]);
  assert.equal(created.code, 0, created.stderr);
  const cliKey = /fr_live_[0-9A-Za-z]+/.exec(created.stdout)?.[0];
  assert.ok(cliKey, created.stdout);
  assert.match(cliKey, KEY);
  const till = await cli(['keys', 'create', '--name', 'till', '--data-dir', dataDir]);
  assert.equal(till.code, 0, till.stderr);
  const tillKey = /fr_live_[0-9A-Za-z]+/.exec(till.stdout)?.[0];
  assert.ok(tillKey);

  const listed = await cli(['keys', 'list', '--json', '--data-dir', dataDir]);
  assert.equal(listed.code, 0, listed.stderr);
  assert.ok(!listed.stdout.includes(cliKey) && !listed.stdout.includes(sha256(cliKey)), 'the listing shows no key and no hash');
  const keys = JSON.parse(listed.stdout) as PublicKeyView[];
  assert.deepEqual(
    keys.map((key) => [key.name, key.scope]),
    [
      ['ops laptop', 'admin'],
      ['till', 'standard'],
    ],
  );
  for (const key of keys) assert.equal((key as unknown as Record<string, unknown>).hash, undefined);
  const tillId = keys[1]!.id;

  const revoked = await cli(['keys', 'revoke', tillId, '--data-dir', dataDir]);
  assert.equal(revoked.code, 0, revoked.stderr);
  const unknown = await cli(['keys', 'revoke', 'key_01M00000000000000000000000', '--data-dir', dataDir]);
  assert.notEqual(unknown.code, 0);
  assert.match(unknown.stderr, /no API key/);
  const badScope = await cli(['keys', 'create', '--name', 'x', '--scope', 'root', '--data-dir', dataDir]);
  assert.notEqual(badScope.code, 0);

  await t.test('while an appliance holds the directory', async (t2) => {
    const app = await startTestAppliance(t2, { dataDir });
    assert.equal(await statusWith(app, cliKey), 200, 'a key made by the CLI authenticates');
    const viaApi = await listKeys(app, cliKey);
    assert.ok(viaApi.find((key) => key.id === tillId)?.revokedAt, 'the CLI revocation is seen');
    await expectUnauthorized(await app.call('GET', '/api/v1/account', { key: tillKey }));

    const countBefore = app.appliance.store.state.keys.length;
    for (const args of [
      ['keys', 'list', '--json'],
      ['keys', 'create', '--name', 'intruder', '--scope', 'admin'],
      ['keys', 'revoke', keys[0]!.id],
    ]) {
      const refused = await cli([...args, '--data-dir', dataDir]);
      assert.notEqual(refused.code, 0, `${args.join(' ')} must be refused`);
      assert.match(refused.stderr, /in use/, refused.stderr);
      assert.equal(refused.stdout, '');
    }
    assert.equal(app.appliance.store.state.keys.length, countBefore);
    assert.equal(await statusWith(app, cliKey), 200, 'the refused revoke did nothing');
    const state = JSON.parse(await readFile(join(dataDir, 'state.json'), 'utf8')) as { keys: unknown[] };
    assert.equal(state.keys.length, countBefore, 'nothing was written behind the appliance');
  });

  const afterwards = await cli(['keys', 'list', '--json', '--data-dir', dataDir]);
  assert.equal(afterwards.code, 0, `the lock is released when the appliance stops: ${afterwards.stderr}`);
  assert.equal((JSON.parse(afterwards.stdout) as unknown[]).length, 3, 'the two CLI keys and the first admin key');
});

test('the first start writes first-admin-key (0600); a second start makes no other admin key', async (t) => {
  const dataDir = await tempDataDir();
  const path = join(dataDir, 'first-admin-key');
  let firstKey = '';
  await t.test('first start', async (t2) => {
    const app = await startTestApp(t2, { dataDir });
    firstKey = app.adminKey;
    assert.match(firstKey, KEY);
    assert.equal((await stat(path)).mode & 0o777, 0o600);
    assert.equal((await readFile(path, 'utf8')).trim(), firstKey);
    assert.equal(await statusWith(app, firstKey), 200);
  });
  await t.test('second start', async (t2) => {
    const app = await startTestApp(t2, { dataDir });
    assert.equal(app.appliance.firstAdminKey, null);
    assert.equal((await readFile(path, 'utf8')).trim(), firstKey, 'the file is not rewritten');
    assert.equal((await stat(path)).mode & 0o777, 0o600);
    const keys = await listKeys(app, firstKey);
    assert.equal(keys.length, 1);
    assert.equal(keys[0]!.scope, 'admin');
    assert.deepEqual(
      app.appliance.store.state.ledger.map((entry) => entry.type),
      ['trial'],
      'no second trial grant',
    );
    const summary = (await (await app.call('GET', '/api/v1/account', { key: firstKey })).json()) as { creditsRemaining: number };
    assert.equal(summary.creditsRemaining, 25);
  });
});

test('a standard key sees, cancels and erases only its own try-ons (and its rotated successor does too); admin sees all', async (t) => {
  const app = await startTestApp(t, { engines: [composeEngine({ delayMs: 60_000 })] });
  const shop = await createKey(app, 'shop', 'standard');
  const other = await createKey(app, 'other', 'standard');
  const submitted = await app.call('POST', '/api/v1/try-on', { body: await submission(), key: shop.key });
  const { genId } = (await submitted.json()) as { genId: string };
  const listed = async (key: string) =>
    ((await (await app.call('GET', '/api/v1/try-on', { key })).json()) as { data: Array<{ genId: string }> }).data.map((g) => g.genId);

  for (const [method, path] of [
    ['GET', `/api/v1/try-on/${genId}`],
    ['GET', `/api/v1/try-on/${genId}?wait=1`],
    ['GET', `/api/v1/try-on/${genId}/image`],
    ['GET', `/api/v1/try-on/${genId}/webhook-deliveries`],
    ['POST', `/api/v1/try-on/${genId}/webhook-deliveries/redeliver`],
    ['POST', `/api/v1/try-on/${genId}/cancel`],
    ['DELETE', `/api/v1/try-on/${genId}`],
  ] as const) {
    await expectProblem(await app.call(method, path, { key: other.key }), 404, 'not_found');
  }
  assert.deepEqual(await listed(other.key), [], 'another key lists none of them');
  assert.deepEqual(await listed(shop.key), [genId]);
  assert.deepEqual(await listed(app.adminKey), [genId], 'admin sees every try-on');
  assert.equal(((await (await app.call('GET', `/api/v1/try-on/${genId}`)).json()) as { status: string }).status, 'pending', 'not canceled');

  const rotated = (await (await app.call('POST', `/api/v1/keys/${shop.id}/rotate`)).json()) as CreatedKey;
  assert.deepEqual(await listed(rotated.key), [genId], 'a rotated key keeps its lineage');
  assert.equal((await app.call('POST', `/api/v1/try-on/${genId}/cancel`, { key: rotated.key })).status, 200);
});
