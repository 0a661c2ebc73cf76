import assert from 'node:assert/strict';
import { test } from 'node:test';
import sharp from 'sharp';
import { Webhook } from 'standardwebhooks';
import { FittingroomClient, FittingroomError, verifyWebhook, WebhookSignatureError } from '../../client/index.ts';
import { composeEngine, startTestApp } from '../helpers/appliance.ts';
import { validJpeg } from '../helpers/hostile-images.ts';

test('an app submits with the client, waits across several bounds, and downloads the result', async (t) => {
  const app = await startTestApp(t, { engines: [composeEngine({ delayMs: 2500 })], config: { waitDefaultSeconds: 1 } });
  const client = new FittingroomClient({ baseUrl: `${app.url}/`, apiKey: app.adminKey });
  const selfie = await validJpeg(384, 512);
  const shirt = await validJpeg(300, 400);
  const accepted = await client.submit({ selfie, items: [shirt], size: 'M', outputFormat: 'png' }, { idempotencyKey: 'client-1' });
  assert.equal(accepted.status, 'pending');
  const again = await client.submit({ selfie, items: [shirt], size: 'M', outputFormat: 'png' }, { idempotencyKey: 'client-1' });
  assert.equal(again.genId, accepted.genId, 'a retried submit with the same key is the same try-on');

  const done = await client.waitFor(accepted.genId, { timeoutMs: 30_000 });
  assert.equal(done.status, 'complete');
  assert.equal(done.creditCharged, true);
  const { bytes, contentType } = await client.image(accepted.genId);
  assert.equal(contentType, 'image/png');
  assert.equal((await sharp(bytes).metadata()).width, 384);
  assert.equal((await client.account()).creditsRemaining, 24);
  assert.equal((await client.engines())[0]!.id, 'test-compose');
  await client.erase(accepted.genId);
  assert.equal((await client.get(accepted.genId)).erased, true);
});

test('errors come back as FittingroomError with the problem code', async (t) => {
  const app = await startTestApp(t, { engines: [composeEngine({ delayMs: 30_000 })] });
  const client = new FittingroomClient({ baseUrl: app.url, apiKey: app.adminKey });
  await assert.rejects(client.get('gen_01M00000000000000000000000'), (error: unknown) => {
    assert.ok(error instanceof FittingroomError);
    assert.equal(error.status, 404);
    assert.equal(error.code, 'not_found');
    assert.match(error.problem!.requestId, /^req_/);
    return true;
  });
  await assert.rejects(
    client.submit({ selfie: 'x', items: ['y'], size: 'XXXXL' }),
    (error: unknown) => error instanceof FittingroomError && error.code === 'validation_failed',
  );
  const bad = new FittingroomClient({ baseUrl: app.url, apiKey: 'fr_live_nope' });
  await assert.rejects(bad.account(), (error: unknown) => error instanceof FittingroomError && error.status === 401);
  const { genId } = await client.submit({ selfie: await validJpeg(300, 300), items: [await validJpeg(300, 300)], size: 'S' });
  assert.equal((await client.cancel(genId)).status, 'canceled');
});

test('waitFor rides out a network failure and a 503 with Retry-After', async (t) => {
  const app = await startTestApp(t);
  const real = new FittingroomClient({ baseUrl: app.url, apiKey: app.adminKey });
  const { genId } = await real.submit({ selfie: await validJpeg(300, 300), items: [await validJpeg(300, 300)], size: 'S' });
  let calls = 0;
  const flaky: typeof fetch = async (input, init) => {
    calls++;
    if (calls === 1) throw new TypeError('fetch failed');
    if (calls === 2)
      return new Response('{"code":"queue_full"}', {
        status: 503,
        headers: { 'retry-after': '1', 'content-type': 'application/problem+json' },
      });
    return fetch(input, init);
  };
  const client = new FittingroomClient({ baseUrl: app.url, apiKey: app.adminKey, fetch: flaky });
  const done = await client.waitFor(genId, { timeoutMs: 30_000 });
  assert.equal(done.status, 'complete');
  assert.ok(calls >= 3);
});

test('verifyWebhook accepts a genuine delivery and refuses a tampered one', () => {
  const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
  const body = JSON.stringify({
    id: 'evt_1',
    type: 'try_on.completed',
    createdAt: new Date().toISOString(),
    data: { genId: 'gen_1', status: 'complete', statusUrl: 'x', creditsRemaining: 3 },
  });
  const timestamp = new Date();
  const signature = new Webhook(secret).sign('evt_1', timestamp, body);
  const headers = {
    'webhook-id': 'evt_1',
    'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
    'webhook-signature': signature,
  };
  assert.equal(verifyWebhook(headers, body, secret).data.genId, 'gen_1');
  assert.equal(verifyWebhook(new Headers(headers), Buffer.from(body), secret).type, 'try_on.completed');
  assert.throws(() => verifyWebhook(headers, body.replace('3', '4'), secret), WebhookSignatureError);
  assert.throws(() => verifyWebhook({ ...headers, 'webhook-id': 'evt_2' }, body, secret), WebhookSignatureError);
  assert.throws(() => verifyWebhook({ 'webhook-id': 'evt_1' }, body, secret), /webhook-timestamp header is missing/);
  const old = String(Math.floor(timestamp.getTime() / 1000) - 600);
  assert.throws(() => verifyWebhook({ ...headers, 'webhook-timestamp': old }, body, secret), WebhookSignatureError);
});

test('usage and the ledger through the client', async (t) => {
  const app = await startTestApp(t);
  const client = new FittingroomClient({ baseUrl: app.url, apiKey: app.adminKey });
  const { genId } = await client.submit({ selfie: await validJpeg(300, 300), items: [await validJpeg(300, 300)], size: 'S' });
  await client.waitFor(genId, { timeoutMs: 30_000 });
  const usage = await client.usage({ granularity: 'hour', from: new Date(Date.now() - 3_600_000) });
  assert.equal(usage.totals.submitted, 1);
  assert.equal(usage.totals.creditsUsed, 1);
  const page = await client.ledger({ limit: 2 });
  assert.deepEqual(
    page.data.map((entry) => entry.type),
    ['capture', 'reserve'],
  );
  const rest = await client.ledger({ cursor: page.nextCursor!, limit: 2 });
  assert.deepEqual(
    rest.data.map((entry) => entry.type),
    ['trial'],
  );
  assert.equal(rest.nextCursor, null);
});
