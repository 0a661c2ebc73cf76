import assert from 'node:assert/strict';
import { test } from 'node:test';
import { composeEngine, startTestApp } from '../helpers/appliance.ts';
import { submission } from '../helpers/inputs.ts';
import { balancesOf } from '../../server/credits/ledger.ts';
import { sweep } from '../../server/jobs/retention.ts';

test('a new installation has 25 trial credits valid for 30 days', async (t) => {
  const before = Date.now();
  const app = await startTestApp(t);
  const account = (await (await app.call('GET', '/api/v1/account')).json()) as Record<string, unknown>;
  assert.equal(account.creditsRemaining, 25);
  assert.equal(account.creditsReserved, 0);
  assert.equal(account.trialCreditsRemaining, 25);
  const expires = Date.parse(account.trialExpiresAt as string);
  assert.ok(Math.abs(expires - before - 30 * 86_400_000) < 60_000);
  const entries = app.appliance.store.state.ledger;
  assert.deepEqual(
    entries.map((e) => [e.type, e.amount, e.lot]),
    [['trial', 25, 'trial']],
  );
});

test('100 parallel submits against 10 credits: exactly 10 accepted, 90 refused with 402', async (t) => {
  const app = await startTestApp(t, { engines: [composeEngine({ delayMs: 60_000 })], config: { trialCredits: 10 } });
  const body = JSON.stringify(await submission());
  const responses = await Promise.all(Array.from({ length: 100 }, () => app.call('POST', '/api/v1/try-on', { body })));
  const statuses = responses.map((r) => r.status);
  assert.equal(statuses.filter((s) => s === 202).length, 10, `statuses: ${JSON.stringify(statuses)}`);
  assert.equal(statuses.filter((s) => s === 402).length, 90);
  for (const refused of responses.filter((r) => r.status === 402)) {
    const problem = (await refused.json()) as { code: string };
    assert.equal(problem.code, 'insufficient_credits');
    assert.equal(refused.headers.get('content-type'), 'application/problem+json; charset=utf-8');
  }
  const state = app.appliance.store.state;
  assert.equal(Object.keys(state.generations).length, 10);
  assert.equal(state.ledger.filter((e) => e.type === 'reserve').length, 10);
  const account = (await (await app.call('GET', '/api/v1/account')).json()) as Record<string, number>;
  assert.equal(account.creditsRemaining, 0);
  assert.equal(account.creditsReserved, 10);
});

test('credits are captured on complete and released on failure and cancel', async (t) => {
  const app = await startTestApp(t, {
    engines: [
      composeEngine({ id: 'ok' }),
      composeEngine({ id: 'bad', fail: 'pose_unsupported' }),
      composeEngine({ id: 'slow', delayMs: 30_000 }),
    ],
  });
  const submit = async (engine: string) =>
    ((await (await app.call('POST', '/api/v1/try-on', { body: await submission({ engine }) })).json()) as { genId: string }).genId;
  const ok = await submit('ok');
  const bad = await submit('bad');
  const slow = await submit('slow');
  await app.call('GET', `/api/v1/try-on/${ok}?wait=20`);
  await app.call('GET', `/api/v1/try-on/${bad}?wait=20`);
  await app.call('POST', `/api/v1/try-on/${slow}/cancel`);
  const ledger = app.appliance.store.state.ledger;
  const outcome = (genId: string) => ledger.filter((e) => e.genId === genId).map((e) => e.type);
  assert.deepEqual(outcome(ok), ['reserve', 'capture']);
  assert.deepEqual(outcome(bad), ['reserve', 'release']);
  assert.deepEqual(outcome(slow), ['reserve', 'release']);
  const account = (await (await app.call('GET', '/api/v1/account')).json()) as Record<string, number>;
  assert.equal(account.creditsRemaining, 24);
  assert.equal(balancesOf(app.appliance.store.state).spent, 1);
});

test('trial credits expire on their date with an expire entry, and then submits get 402', async (t) => {
  let now = Date.now();
  const app = await startTestApp(t, { clock: () => new Date(now), config: { trialCredits: 3 } });
  const first = await app.call('POST', '/api/v1/try-on', { body: await submission() });
  assert.equal(first.status, 202);
  await app.call('GET', `/api/v1/try-on/${((await first.json()) as { genId: string }).genId}?wait=20`);
  now += 31 * 86_400_000;
  const account = (await (await app.call('GET', '/api/v1/account')).json()) as Record<string, number>;
  assert.equal(account.trialCreditsRemaining, 0);
  assert.equal(account.creditsRemaining, 0);
  const refused = await app.call('POST', '/api/v1/try-on', { body: await submission() });
  assert.equal(refused.status, 402);
  const report = await sweep(app.appliance.store, new Date(now), app.appliance.archive);
  assert.equal(report.creditsExpired, 2);
  const expire = app.appliance.store.state.ledger.filter((e) => e.type === 'expire');
  assert.deepEqual(
    expire.map((e) => [e.amount, e.lot]),
    [[2, 'trial']],
  );
  assert.equal((await sweep(app.appliance.store, new Date(now), app.appliance.archive)).creditsExpired, 0, 'expiry is recorded once');
});

test('credit packs are the five packs of the contract', async (t) => {
  const app = await startTestApp(t);
  const packs = (await (await app.call('GET', '/api/v1/credit-packs')).json()) as Array<{
    credits: number;
    priceEur: number;
    perGenerationEur: number;
  }>;
  assert.deepEqual(
    packs.map((p) => [p.credits, p.priceEur, p.perGenerationEur]),
    [
      [1000, 129, 0.129],
      [5000, 595, 0.119],
      [10000, 1090, 0.109],
      [50000, 4750, 0.095],
      [100000, 8500, 0.085],
    ],
  );
});
