import assert from 'node:assert/strict';
import { test } from 'node:test';
import { composeEngine, startTestApp, startTestAppliance, tempDataDir } from '../helpers/appliance.ts';
import { submission } from '../helpers/inputs.ts';

test('20 parallel submits sharing one Idempotency-Key make one generation', async (t) => {
  const app = await startTestApp(t, { engines: [composeEngine({ delayMs: 30_000 })] });
  const body = JSON.stringify(await submission());
  const responses = await Promise.all(
    Array.from({ length: 20 }, () => app.call('POST', '/api/v1/try-on', { body, headers: { 'idempotency-key': 'order-42' } })),
  );
  const texts = await Promise.all(responses.map((r) => r.text()));
  const accepted = responses.map((r, i) => [r.status, texts[i]!] as const).filter(([status]) => status === 202);
  const inUse = responses.filter((r) => r.status === 409);
  assert.equal(accepted.length + inUse.length, 20, JSON.stringify(responses.map((r) => r.status)));
  assert.ok(accepted.length >= 1);
  assert.equal(new Set(accepted.map(([, text]) => text)).size, 1, 'every 202 carries the same body');
  for (const r of inUse) assert.equal(r.headers.get('retry-after'), '1');
  assert.equal(Object.keys(app.appliance.store.state.generations).length, 1);
  assert.equal(app.appliance.store.state.ledger.filter((e) => e.type === 'reserve').length, 1);

  const replay = await app.call('POST', '/api/v1/try-on', { body, headers: { 'idempotency-key': 'order-42' } });
  assert.equal(replay.status, 202);
  assert.equal(replay.headers.get('idempotent-replayed'), 'true');
  assert.equal(await replay.text(), accepted[0]![1], 'the replay is byte for byte');
  assert.equal(replay.headers.get('location'), JSON.parse(accepted[0]![1]).statusUrl);
});

test('the same key with a different request is 422; images compare by content, not encoding', async (t) => {
  const app = await startTestApp(t, { engines: [composeEngine({ delayMs: 30_000 })] });
  const body = await submission();
  const first = await app.call('POST', '/api/v1/try-on', { body, headers: { 'idempotency-key': 'k1' } });
  assert.equal(first.status, 202);
  const reused = await app.call('POST', '/api/v1/try-on', { body: { ...body, size: 'L' }, headers: { 'idempotency-key': 'k1' } });
  assert.equal(reused.status, 422);
  assert.equal(((await reused.json()) as { code: string }).code, 'idempotency_key_reused');
  const asDataUrl = { ...body, selfie: `data:image/jpeg;base64,${body.selfie as string}` };
  const same = await app.call('POST', '/api/v1/try-on', { body: asDataUrl, headers: { 'idempotency-key': 'k1' } });
  assert.equal(same.status, 202);
  assert.equal(same.headers.get('idempotent-replayed'), 'true');
  assert.equal(Object.keys(app.appliance.store.state.generations).length, 1);
});

test('an invalid Idempotency-Key is 400 and executes nothing', async (t) => {
  const app = await startTestApp(t);
  for (const key of ['', 'x'.repeat(256), 'has space', 'tab\there', 'ünïcode']) {
    const response = await app
      .call('POST', '/api/v1/try-on', { body: await submission(), headers: { 'idempotency-key': key } })
      .catch(() => null);
    if (response === null) continue; // fetch refuses some header values itself
    assert.equal(response.status, 400, JSON.stringify(key));
    assert.equal(((await response.json()) as { code: string }).code, 'idempotency_key_invalid');
  }
  assert.equal(Object.keys(app.appliance.store.state.generations).length, 0);
});

test('rejected requests are not remembered: a 402 can be retried with the same key after a top-up', async (t) => {
  const app = await startTestApp(t, { engines: [composeEngine({ delayMs: 30_000 })], config: { trialCredits: 0 } });
  const body = await submission();
  const broke = await app.call('POST', '/api/v1/try-on', { body, headers: { 'idempotency-key': 'retry-me' } });
  assert.equal(broke.status, 402);
  const invalid = await app.call('POST', '/api/v1/try-on', { body: { ...body, size: 'huge' }, headers: { 'idempotency-key': 'retry-me' } });
  assert.equal(invalid.status, 422);
  assert.equal(((await invalid.json()) as { code: string }).code, 'validation_failed');
  await app.appliance.store.mutate((state) => {
    const seq = state.ledger.length + 1;
    state.ledger.push({
      id: `le_test_${seq}`,
      seq,
      type: 'adjust',
      amount: 5,
      lot: 'paid',
      at: new Date().toISOString(),
      note: 'test top-up',
    });
  });
  const retried = await app.call('POST', '/api/v1/try-on', { body, headers: { 'idempotency-key': 'retry-me' } });
  assert.equal(retried.status, 202);
  assert.equal(retried.headers.get('idempotent-replayed'), null);
});

test('keys are scoped to the API key that used them', async (t) => {
  const app = await startTestApp(t, { engines: [composeEngine({ delayMs: 30_000 })] });
  const created = (await (await app.call('POST', '/api/v1/keys', { body: { name: 'kiosk', scope: 'standard' } })).json()) as {
    key: string;
  };
  const body = await submission();
  const a = await app.call('POST', '/api/v1/try-on', { body, headers: { 'idempotency-key': 'shared' } });
  const b = await app.call('POST', '/api/v1/try-on', { body, headers: { 'idempotency-key': 'shared' }, key: created.key });
  assert.equal(a.status, 202);
  assert.equal(b.status, 202);
  assert.equal(b.headers.get('idempotent-replayed'), null);
  assert.equal(Object.keys(app.appliance.store.state.generations).length, 2);
});

test('a stored reply survives a restart and is replayed even when the engine is gone', async (t) => {
  const dataDir = await tempDataDir();
  const body = await submission();
  const first = await startTestAppliance(t, { dataDir, engines: [composeEngine({ delayMs: 30_000 })] });
  const accepted = await first.call('POST', '/api/v1/try-on', { body, headers: { 'idempotency-key': 'restart-1' } });
  assert.equal(accepted.status, 202);
  const text = await accepted.text();
  await first.appliance.close();

  const second = await startTestAppliance(t, { dataDir, engines: [] });
  const replay = await second.call('POST', '/api/v1/try-on', { body, headers: { 'idempotency-key': 'restart-1' }, key: first.adminKey });
  assert.equal(replay.status, 202);
  assert.equal(replay.headers.get('idempotent-replayed'), 'true');
  assert.equal(await replay.text(), text);
  const fresh = await second.call('POST', '/api/v1/try-on', { body, headers: { 'idempotency-key': 'restart-2' }, key: first.adminKey });
  assert.equal(fresh.status, 503);
});
