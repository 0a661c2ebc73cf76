import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { composeEngine, startTestApp, startTestAppliance, tempDataDir, type TestAppliance } from '../helpers/appliance.ts';
import { submission } from '../helpers/inputs.ts';
import { generateIssuerKey, mintVoucher, type MintOptions } from '../../server/vouchers/voucher.ts';

const issuer = generateIssuerKey();
const mint = (options: MintOptions) => mintVoucher(issuer.privateKeyPem, options);

function start(t: Parameters<typeof startTestAppliance>[0], config: Parameters<typeof startTestAppliance>[1] = {}) {
  return startTestAppliance(t, { ...config, config: { trustedIssuerKeys: [issuer.publicKey], ...config.config } });
}

const redeem = (app: TestAppliance, voucher: unknown, key?: string) =>
  app.call('POST', '/api/v1/credits/redeem', key === undefined ? { body: { voucher } } : { body: { voucher }, key });

async function standardKey(app: TestAppliance): Promise<string> {
  const created = await app.call('POST', '/api/v1/keys', { body: { name: 'till', scope: 'standard' } });
  return ((await created.json()) as { key: string }).key;
}

test('a voucher adds its credits to the paid lot with one redeem entry, once', async (t) => {
  const app = await start(t);
  const voucher = mint({ credits: 1000 });
  const first = await redeem(app, voucher);
  assert.equal(first.status, 200);
  const body = (await first.json()) as { voucherId: string; creditsAdded: number; creditsRemaining: number };
  assert.equal(body.creditsAdded, 1000);
  assert.equal(body.creditsRemaining, 1025);
  const state = app.appliance.store.state;
  const redeems = state.ledger.filter((e) => e.type === 'redeem');
  assert.deepEqual(
    redeems.map((e) => [e.amount, e.lot]),
    [[1000, 'paid']],
  );
  assert.deepEqual(Object.keys(state.vouchers), [body.voucherId]);
  assert.equal(state.vouchers[body.voucherId]!.credits, 1000);
  assert.equal(state.vouchers[body.voucherId]!.keyId, state.keys[0]!.id);

  const again = await redeem(app, voucher);
  assert.equal(again.status, 409);
  const problem = (await again.json()) as { code: string; detail: string };
  assert.equal(problem.code, 'conflict');
  assert.match(problem.detail, /already redeemed/);
  assert.equal(app.appliance.store.state.ledger.filter((e) => e.type === 'redeem').length, 1);
  const account = (await (await app.call('GET', '/api/v1/account')).json()) as Record<string, number>;
  assert.equal(account.creditsRemaining, 1025);
  assert.equal(account.trialCreditsRemaining, 25);
});

test('20 parallel redemptions of one voucher: exactly one succeeds', async (t) => {
  const app = await start(t);
  const voucher = mint({ credits: 5000 });
  const responses = await Promise.all(Array.from({ length: 20 }, () => redeem(app, voucher)));
  const statuses = responses.map((r) => r.status).sort();
  assert.deepEqual(statuses, [200, ...Array<number>(19).fill(409)]);
  assert.equal(app.appliance.store.state.ledger.filter((e) => e.type === 'redeem').length, 1);
  const account = (await (await app.call('GET', '/api/v1/account')).json()) as Record<string, number>;
  assert.equal(account.creditsRemaining, 5025);
});

test('refused vouchers answer 422 naming the reason, and change nothing', async (t) => {
  const app = await start(t);
  const installId = app.appliance.store.state.installation!.id;
  const good = mint({ credits: 1000 });
  const [prefix, keyId, payload, signature] = good.split('.') as [string, string, string, string];
  const inflated = Buffer.from(Buffer.from(payload, 'base64url').toString().replace('1000', '9000')).toString('base64url');
  const untrusted = mintVoucher(generateIssuerKey().privateKeyPem, { credits: 1000 });
  const cases: Array<[unknown, RegExp]> = [
    [[prefix, keyId, inflated, signature].join('.'), /signature does not match/],
    [untrusted, /does not trust/],
    [mint({ credits: 1000, expiresAt: new Date(Date.now() - 1000) }), /expired/],
    [
      mint({ credits: 1000, installId: 'inst_SOMEWHEREELSE' }),
      new RegExp(`bound to installation inst_SOMEWHEREELSE; this installation is ${installId}`),
    ],
    ['not a voucher', /is not a voucher/],
    ['x'.repeat(100_000), /longer than/],
    [undefined, /is required/],
    [42, /is required/],
  ];
  const before = JSON.stringify(app.appliance.store.state.ledger);
  for (const [voucher, pattern] of cases) {
    const response = await redeem(app, voucher);
    assert.equal(response.status, 422, String(voucher).slice(0, 50));
    const problem = (await response.json()) as { code: string; errors: Array<{ field: string; message: string }> };
    assert.equal(problem.code, 'validation_failed');
    assert.equal(problem.errors.length, 1);
    assert.equal(problem.errors[0]!.field, 'voucher');
    assert.match(problem.errors[0]!.message, pattern);
  }
  assert.equal(JSON.stringify(app.appliance.store.state.ledger), before);
  assert.deepEqual(app.appliance.store.state.vouchers, {});
  assert.equal(((await redeem(app, mint({ credits: 7, installId })).then((r) => r.json())) as { creditsAdded: number }).creditsAdded, 7);
});

test('an appliance that trusts no issuer refuses every voucher', async (t) => {
  const app = await startTestApp(t);
  const response = await redeem(app, mint({ credits: 1000 }));
  assert.equal(response.status, 422);
  assert.match(((await response.json()) as { detail: string }).detail, /trusts no voucher issuer/);
});

test('redeem and the ledger need an admin key; usage does not', async (t) => {
  const app = await start(t);
  const key = await standardKey(app);
  const refused = await redeem(app, mint({ credits: 1000 }), key);
  assert.equal(refused.status, 403);
  assert.equal(((await refused.json()) as { code: string }).code, 'forbidden');
  assert.equal((await app.call('GET', '/api/v1/ledger', { key })).status, 403);
  assert.equal((await app.call('GET', '/api/v1/usage', { key })).status, 200);
  assert.equal((await app.call('GET', '/api/v1/usage', { key: null })).status, 401);
  assert.deepEqual(app.appliance.store.state.vouchers, {});
});

test('trial credits are spent before redeemed ones', async (t) => {
  const app = await start(t, { engines: [composeEngine({ delayMs: 60_000 })], config: { trialCredits: 2 } });
  assert.equal((await redeem(app, mint({ credits: 10 }))).status, 200);
  const lots: string[] = [];
  for (let i = 0; i < 3; i++) {
    const response = await app.call('POST', '/api/v1/try-on', { body: await submission() });
    assert.equal(response.status, 202);
    const { genId } = (await response.json()) as { genId: string };
    lots.push(app.appliance.store.state.ledger.find((e) => e.type === 'reserve' && e.genId === genId)!.lot);
  }
  assert.deepEqual(lots, ['trial', 'trial', 'paid']);
  const account = (await (await app.call('GET', '/api/v1/account')).json()) as Record<string, number>;
  assert.deepEqual(account, {
    creditsRemaining: 9,
    creditsReserved: 3,
    trialCreditsRemaining: 0,
    trialExpiresAt: account.trialExpiresAt,
  });
});

test('the ledger lists every entry newest first, page by page', async (t) => {
  const app = await start(t, { engines: [composeEngine({ delayMs: 60_000 })] });
  await redeem(app, mint({ credits: 1000 }));
  for (let i = 0; i < 4; i++) assert.equal((await app.call('POST', '/api/v1/try-on', { body: await submission() })).status, 202);
  const seen: Array<{ seq: number; type: string }> = [];
  let cursor: string | null = null;
  do {
    const query: string = cursor === null ? '?limit=2' : `?limit=2&cursor=${cursor}`;
    const page = (await (await app.call('GET', `/api/v1/ledger${query}`)).json()) as {
      data: Array<{ seq: number; type: string }>;
      nextCursor: string | null;
    };
    assert.ok(page.data.length <= 2);
    seen.push(...page.data);
    cursor = page.nextCursor;
  } while (cursor !== null);
  assert.deepEqual(
    seen.map((e) => [e.seq, e.type]),
    [
      [6, 'reserve'],
      [5, 'reserve'],
      [4, 'reserve'],
      [3, 'reserve'],
      [2, 'redeem'],
      [1, 'trial'],
    ],
  );
  const all = (await (await app.call('GET', '/api/v1/ledger')).json()) as { data: unknown[]; nextCursor: string | null };
  assert.equal(all.data.length, 6);
  assert.equal(all.nextCursor, null);
  for (const query of ['?limit=0', '?limit=501', '?limit=x', '?cursor=abc', '?cursor=0']) {
    const response = await app.call('GET', `/api/v1/ledger${query}`);
    assert.equal(response.status, 400, query);
    assert.equal(((await response.json()) as { code: string }).code, 'invalid_request');
  }
});

test('a state file restored from an older copy cannot credit a voucher twice; a lost journal line is rebuilt at start', async (t) => {
  const dataDir = await tempDataDir();
  const first = await start(t, { dataDir });
  const installId = first.appliance.store.state.installation!.id;
  const older = await readFile(join(dataDir, 'state.json'));
  const voucher = mint({ credits: 100, installId });
  const redeem = (app: TestAppliance) => app.call('POST', '/api/v1/credits/redeem', { body: { voucher }, key: first.adminKey });
  assert.equal((await redeem(first)).status, 200);
  await first.appliance.close();

  await writeFile(join(dataDir, 'state.json'), older);
  const restored = await start(t, { dataDir });
  const again = await redeem(restored);
  assert.equal(again.status, 409);
  assert.match(((await again.json()) as { detail: string }).detail, /already redeemed on this installation/);
  const account = (await (await restored.call('GET', '/api/v1/account', { key: first.adminKey })).json()) as { creditsRemaining: number };
  assert.equal(account.creditsRemaining, 25, 'the restored state holds only the trial credits');
  await restored.appliance.close();

  // A crash between the state's write and the journal's: the state's redemption is journalled at the next start.
  const second = mint({ credits: 50, installId });
  const third = await start(t, { dataDir });
  assert.equal((await third.call('POST', '/api/v1/credits/redeem', { body: { voucher: second }, key: first.adminKey })).status, 200);
  await third.appliance.close();
  const journal = join(dataDir, 'vouchers-redeemed.jsonl');
  await writeFile(journal, (await readFile(journal, 'utf8')).split('\n')[0] + '\n');
  await start(t, { dataDir });
  assert.equal((await readFile(journal, 'utf8')).trim().split('\n').length, 2);
});
