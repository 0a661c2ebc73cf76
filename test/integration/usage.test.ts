import assert from 'node:assert/strict';
import { test } from 'node:test';
import { composeEngine, startTestApp, type TestAppliance } from '../helpers/appliance.ts';
import { submission } from '../helpers/inputs.ts';
import { generateIssuerKey, mintVoucher } from '../../server/vouchers/voucher.ts';
import type { LedgerEntry } from '../../server/store/schema.ts';
import type { UsageReport } from '../../server/credits/usage.ts';
import { sweep } from '../../server/jobs/retention.ts';

const issuer = generateIssuerKey();

async function wholeLedger(app: TestAppliance): Promise<LedgerEntry[]> {
  const entries: LedgerEntry[] = [];
  let cursor: string | null = null;
  do {
    const query: string = cursor === null ? '?limit=3' : `?limit=3&cursor=${cursor}`;
    const page = (await (await app.call('GET', `/api/v1/ledger${query}`)).json()) as { data: LedgerEntry[]; nextCursor: string | null };
    entries.push(...page.data);
    cursor = page.nextCursor;
  } while (cursor !== null);
  return entries;
}

const usage = async (app: TestAppliance, query = '') => (await (await app.call('GET', `/api/v1/usage${query}`)).json()) as UsageReport;

test('usage totals equal the ledger and the generations after a mixed workload', async (t) => {
  const app = await startTestApp(t, {
    engines: [
      composeEngine({ id: 'ok' }),
      composeEngine({ id: 'bad', fail: 'pose_unsupported' }),
      composeEngine({ id: 'slow', device: 'slow-device', delayMs: 60_000 }),
    ],
    config: { trialCredits: 2, trustedIssuerKeys: [issuer.publicKey] },
  });
  const submit = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    app.call('POST', '/api/v1/try-on', { body, headers });
  const genId = async (response: Response) => {
    assert.equal(response.status, 202);
    return ((await response.json()) as { genId: string }).genId;
  };

  // Two slow try-ons use up the trial; a third is refused, as is an invalid one.
  const stays = await genId(await submit(await submission({ engine: 'slow' })));
  const canceled = await genId(await submit(await submission({ engine: 'slow' })));
  assert.equal((await submit(await submission({ engine: 'slow' }))).status, 402);
  assert.equal((await submit(await submission({ engine: 'ok', size: 'XXXXL' }))).status, 422);
  assert.equal((await app.call('POST', `/api/v1/try-on/${canceled}/cancel`)).status, 200);
  const redeemed = await app.call('POST', '/api/v1/credits/redeem', {
    body: { voucher: mintVoucher(issuer.privateKeyPem, { credits: 10 }) },
  });
  assert.equal(redeemed.status, 200);

  // An idempotent replay makes no second generation.
  const idempotent = await submission({ engine: 'ok' });
  const completed = await genId(await submit(idempotent, { 'idempotency-key': 'order-1' }));
  const replay = await submit(idempotent, { 'idempotency-key': 'order-1' });
  assert.equal(replay.headers.get('idempotent-replayed'), 'true');
  assert.equal(await genId(replay), completed);
  const failed = await genId(await submit(await submission({ engine: 'bad' })));
  const completedToo = await genId(await submit(await submission({ engine: 'ok' })));
  for (const id of [completed, failed, completedToo]) {
    const status = ((await (await app.call('GET', `/api/v1/try-on/${id}?wait=30`)).json()) as { status: string }).status;
    assert.notEqual(status, 'pending', id);
  }

  const generations = Object.values(app.appliance.store.state.generations);
  assert.equal(generations.length, 5);
  const ledger = await wholeLedger(app);
  assert.deepEqual(
    ledger.map((e) => e.seq),
    ledger.map((_, i) => ledger.length - i),
    'newest first, every entry once',
  );
  const count = (type: LedgerEntry['type']) => ledger.filter((e) => e.type === type).reduce((sum, e) => sum + e.amount, 0);
  const report = await usage(app);
  assert.equal(report.granularity, 'day');
  assert.equal(report.periods.length, 30);
  assert.deepEqual(report.totals, { submitted: 5, completed: 2, failed: 1, canceled: 1, creditsUsed: 2 });
  assert.equal(report.totals.creditsUsed, count('capture'));
  assert.equal(report.totals.submitted, generations.length);
  assert.equal(report.totals.submitted, count('reserve'));
  assert.equal(
    report.totals.completed + report.totals.failed + report.totals.canceled,
    generations.filter((g) => g.status !== 'pending').length,
  );
  assert.equal(report.totals.failed + report.totals.canceled, count('release'));
  const granted = count('trial') + count('redeem');
  const reserved = count('reserve') - count('capture') - count('release');
  assert.deepEqual([granted, reserved], [12, 1]);
  const account = (await (await app.call('GET', '/api/v1/account')).json()) as Record<string, number>;
  assert.equal(account.creditsRemaining, granted - count('capture') - reserved);
  assert.equal(account.creditsReserved, reserved);
  assert.equal(generations.find((g) => g.id === stays)!.status, 'pending');

  // The same totals by hour, over the last day.
  const hourly = await usage(app, '?granularity=hour');
  assert.equal(hourly.periods.length, 24);
  assert.deepEqual(hourly.totals, report.totals);
  const first = generations.map((g) => g.createdAt).sort()[0]!;
  const sliced = await usage(app, `?from=${first}&to=${new Date().toISOString()}&granularity=hour`);
  assert.equal(sliced.from, `${first.slice(0, 13)}:00:00.000Z`);
  assert.ok(sliced.periods.length >= 1 && sliced.periods.length <= 2);
  assert.deepEqual(sliced.totals, report.totals);
  const rows = sliced.periods.filter((row) => row.submitted > 0);
  assert.ok(rows.length >= 1 && rows.length <= 2, 'everything happened within a minute or so');
});

test('usage of a period with no activity is all zeros, and bad queries are 400', async (t) => {
  const app = await startTestApp(t);
  const empty = await usage(app, '?from=2020-01-01&to=2020-02-01');
  assert.equal(empty.periods.length, 31);
  assert.deepEqual(empty.totals, { submitted: 0, completed: 0, failed: 0, canceled: 0, creditsUsed: 0 });
  for (const query of [
    '?granularity=week',
    '?from=soon',
    '?from=2026-02-01&to=2026-01-01',
    '?from=2020-01-01&to=2022-01-01',
    '?from=a&from=b',
  ]) {
    const response = await app.call('GET', `/api/v1/usage${query}`);
    assert.equal(response.status, 400, query);
    assert.equal(((await response.json()) as { code: string }).code, 'invalid_request');
  }
});

test('usage and the ledger span the archive: the same numbers before and after finished records move', async (t) => {
  const app = await startTestApp(t, {
    engines: [composeEngine(), composeEngine({ id: 'slow', device: 'other', delayMs: 60_000 })],
    config: { archiveMinEntries: 1, trustedIssuerKeys: [issuer.publicKey] },
  });
  const redeemed = await app.call('POST', '/api/v1/credits/redeem', {
    body: { voucher: mintVoucher(issuer.privateKeyPem, { credits: 100 }) },
  });
  assert.equal(redeemed.status, 200);
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const { genId } = (await (await app.call('POST', '/api/v1/try-on', { body: await submission() })).json()) as { genId: string };
    await app.call('GET', `/api/v1/try-on/${genId}?wait=20`);
    ids.push(genId);
  }
  assert.equal((await app.call('POST', '/api/v1/try-on', { body: await submission({ engine: 'slow' }) })).status, 202);
  for (const id of ids.slice(0, 2)) assert.equal((await app.call('DELETE', `/api/v1/try-on/${id}`)).status, 204);
  const before = { usage: await usage(app), ledger: await wholeLedger(app) };
  assert.equal((await sweep(app.appliance.store, new Date(), app.appliance.archive, 1)).archived, 3, 'every finished try-on moves');
  assert.ok(app.appliance.store.state.ledgerBase!.throughSeq >= 8, 'trial, redeem and three try-ons are archived');
  assert.deepEqual(await usage(app), before.usage);
  assert.deepEqual(await wholeLedger(app), before.ledger);
  assert.deepEqual(before.usage.totals, { submitted: 4, completed: 3, failed: 0, canceled: 0, creditsUsed: 3 });
});
