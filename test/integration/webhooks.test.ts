/**
 * Signed webhooks (contract 2.9) against real local receivers: signatures
 * checked with the client's verifyWebhook, retries, restarts, the address
 * policy at connect time, 410, redirects, secret rotation and redelivery.
 */
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { verifyWebhook } from '../../client/verify-webhook.ts';
import type { WebhookPayload } from '../../client/types.ts';
import type { State } from '../../server/store/schema.ts';
import type { LookupFn } from '../../server/webhooks/send.ts';
import { composeEngine, startTestApp, startTestAppliance, type TestAppliance } from '../helpers/appliance.ts';
import { submission } from '../helpers/inputs.ts';

/** Bounds for waits on a loaded machine; polls return as soon as the condition holds. */
const DEADLINE_MS = 20_000;
const TINY_SCHEDULE = { webhookRetrySeconds: [0.05, 0.1, 0.2] };

interface Hit {
  headers: IncomingHttpHeaders;
  body: string;
  /** What the receiver answered (null: nothing). */
  status: number | null;
}

interface Receiver {
  url: string;
  port: number;
  hits: Hit[];
  connections: number;
  /** Resolves once `count` requests have arrived. */
  waitForHits(count: number): Promise<Hit[]>;
}

/** A real HTTP receiver on 127.0.0.1; `respond` gives the status (and headers) for the n-th request (0-based). */
async function startReceiver(
  t: TestContext,
  respond: (n: number) => number | { status: number; headers?: Record<string, string> } | null = () => 200,
): Promise<Receiver> {
  const waiters: Array<() => void> = [];
  const receiver: Receiver = {
    url: '',
    port: 0,
    hits: [],
    connections: 0,
    waitForHits(count) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${receiver.hits.length} of ${count} webhooks arrived in time`)), DEADLINE_MS);
        const check = () => {
          if (receiver.hits.length < count) return false;
          clearTimeout(timer);
          resolve(receiver.hits.slice());
          return true;
        };
        const wait = () => {
          if (!check()) waiters.push(wait);
        };
        wait();
      });
    },
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const answer = respond(receiver.hits.length);
      const { status, headers } = typeof answer === 'number' ? { status: answer, headers: {} } : (answer ?? { status: null });
      receiver.hits.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), status });
      if (status !== null) res.writeHead(status, headers).end();
      for (const wake of waiters.splice(0)) wake();
    });
  });
  server.on('connection', () => receiver.connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}/hooks/fittingroom`;
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return receiver;
}

interface Delivery {
  eventId: string;
  type: string;
  url: string;
  state: 'pending' | 'delivered' | 'failed' | 'gone';
  attempts: Array<{ at: string; status?: number; error?: string; durationMs: number }>;
  nextAttemptAt: string | null;
}

async function submit(app: TestAppliance, extra: Record<string, unknown>): Promise<string> {
  const response = await app.call('POST', '/api/v1/try-on', { body: await submission(extra) });
  assert.equal(response.status, 202);
  return ((await response.json()) as { genId: string }).genId;
}

async function deliveries(app: TestAppliance, genId: string, key?: string): Promise<Delivery[]> {
  const response = await app.call('GET', `/api/v1/try-on/${genId}/webhook-deliveries`, key === undefined ? {} : { key });
  assert.equal(response.status, 200);
  return ((await response.json()) as { data: Delivery[] }).data;
}

/** Polls the deliveries of a try-on until `done` holds (bounded by the deadline). */
async function deliveryWhen(app: TestAppliance, genId: string, done: (d: Delivery) => boolean, key?: string): Promise<Delivery> {
  const until = Date.now() + DEADLINE_MS;
  let last: Delivery[] = [];
  while (Date.now() < until) {
    last = await deliveries(app, genId, key);
    if (last[0] && done(last[0])) return last[0];
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`the delivery of ${genId} did not get there in time: ${JSON.stringify(last)}`);
}

async function secretOf(app: TestAppliance, key?: string): Promise<string> {
  const response = await app.call('GET', '/api/v1/webhooks/secret', key === undefined ? {} : { key });
  return ((await response.json()) as { secret: string }).secret;
}

const verified = (hit: Hit, secret: string): WebhookPayload => verifyWebhook(hit.headers, hit.body, secret);

test('a completed try-on sends one signed webhook with absolute URLs and no image bytes', async (t) => {
  const receiver = await startReceiver(t);
  const app = await startTestApp(t, { config: TINY_SCHEDULE });
  const genId = await submit(app, { webhookUrl: receiver.url });
  const [hit] = await receiver.waitForHits(1);
  const payload = verified(hit!, await secretOf(app));
  assert.equal(payload.type, 'try_on.completed');
  assert.match(payload.id, /^evt_[0-9A-Z]{26}$/);
  assert.equal(hit!.headers['webhook-id'], payload.id);
  assert.equal(hit!.headers['content-type'], 'application/json');
  assert.match(hit!.headers['user-agent'] ?? '', /^fittingroom-webhooks\/\d+\.\d+\.\d+/);
  assert.match(String(hit!.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]+=*$/);
  assert.deepEqual(payload.data, {
    genId,
    status: 'complete',
    statusUrl: `${app.url}/api/v1/try-on/${genId}`,
    imageUrl: `${app.url}/api/v1/try-on/${genId}/image`,
    creditsRemaining: 24,
  });
  assert.ok(hit!.body.length < 2000, `a thin payload (${hit!.body.length} bytes)`);

  const delivery = await deliveryWhen(app, genId, (d) => d.state === 'delivered');
  assert.equal(delivery.eventId, payload.id);
  assert.equal(delivery.type, 'try_on.completed');
  assert.equal(delivery.url, receiver.url);
  assert.equal(delivery.nextAttemptAt, null);
  assert.deepEqual(
    delivery.attempts.map((a) => a.status),
    [200],
  );
  assert.equal(receiver.hits.length, 1, 'exactly one POST');

  const plain = await submit(app, {});
  await app.call('GET', `/api/v1/try-on/${plain}?wait=10`);
  assert.deepEqual(await deliveries(app, plain), [], 'no webhookUrl, no deliveries');
  assert.equal((await app.call('GET', '/api/v1/try-on/gen_01M00000000000000000000000/webhook-deliveries')).status, 404);
});

test('failed and canceled (by DELETE) try-ons send try_on.failed with the error and try_on.canceled', async (t) => {
  const receiver = await startReceiver(t);
  const app = await startTestApp(t, {
    config: TINY_SCHEDULE,
    engines: [composeEngine({ id: 'failing', fail: 'no_person_detected' }), composeEngine({ id: 'slow', device: 'slow', delayMs: 30_000 })],
  });
  const failed = await submit(app, { engine: 'failing', webhookUrl: receiver.url });
  const slow = await submit(app, { engine: 'slow', webhookUrl: receiver.url });
  assert.equal((await app.call('DELETE', `/api/v1/try-on/${slow}`)).status, 204);
  const secret = await secretOf(app);
  const payloads = (await receiver.waitForHits(2)).map((hit) => verified(hit, secret));
  const byGen = new Map(payloads.map((payload) => [payload.data.genId, payload]));
  assert.equal(byGen.get(failed)?.type, 'try_on.failed');
  assert.equal(byGen.get(failed)?.data.status, 'failed');
  assert.equal(byGen.get(failed)?.data.error?.code, 'no_person_detected');
  assert.equal(byGen.get(failed)?.data.imageUrl, undefined);
  assert.equal(byGen.get(slow)?.type, 'try_on.canceled');
  assert.equal(byGen.get(slow)?.data.status, 'canceled');
});

test('a receiver failing twice gets the same event three times: same id and body, later timestamps, then one success', async (t) => {
  const receiver = await startReceiver(t, (n) => (n < 2 ? 500 : 200));
  // Timestamps are whole seconds: retries more than a second apart make them strictly increase.
  const app = await startTestApp(t, { config: { webhookRetrySeconds: [1.3, 1.3, 1.3] } });
  const genId = await submit(app, { webhookUrl: receiver.url });
  const hits = await receiver.waitForHits(3);
  const secret = await secretOf(app);
  for (const hit of hits) verified(hit, secret);
  assert.equal(new Set(hits.map((hit) => hit.headers['webhook-id'])).size, 1);
  assert.equal(new Set(hits.map((hit) => hit.body)).size, 1);
  const stamps = hits.map((hit) => Number(hit.headers['webhook-timestamp']));
  assert.ok(stamps[0]! < stamps[1]! && stamps[1]! < stamps[2]!, `timestamps ${stamps.join(', ')}`);
  const delivery = await deliveryWhen(app, genId, (d) => d.state === 'delivered');
  assert.deepEqual(
    delivery.attempts.map((a) => a.status),
    [500, 500, 200],
  );
  assert.equal(delivery.eventId, hits[0]!.headers['webhook-id']);
  assert.equal(receiver.hits.length, 3);
});

test('a delivery survives a restart: the new appliance sends the pending event once, with the same id', async (t) => {
  let up = false;
  const receiver = await startReceiver(t, () => (up ? 200 : 500));
  const schedule = { webhookRetrySeconds: [1, 1, 1] };
  const first = await startTestAppliance(t, { config: schedule });
  const genId = await submit(first, { webhookUrl: receiver.url });
  const [failed] = await receiver.waitForHits(1);
  await deliveryWhen(first, genId, (d) => d.attempts.length === 1);
  await first.appliance.close();
  up = true;

  const second = await startTestAppliance(t, { dataDir: first.dataDir, config: schedule });
  const delivery = await deliveryWhen(second, genId, (d) => d.state === 'delivered', first.adminKey);
  const secret = await secretOf(second, first.adminKey);
  for (const hit of receiver.hits) {
    assert.equal(hit.headers['webhook-id'], failed!.headers['webhook-id']);
    assert.equal(hit.body, failed!.body);
    verified(hit, secret);
  }
  assert.deepEqual(receiver.hits.filter((hit) => hit.status === 200).length, 1, 'delivered once');
  assert.equal(delivery.attempts.at(-1)?.status, 200);
  assert.equal(delivery.attempts[0]?.status, 500);
});

test('an attempt cut off by a stop is made again after the restart, with the same id', async (t) => {
  let answer = false;
  const receiver = await startReceiver(t, () => (answer ? 204 : null));
  const first = await startTestAppliance(t, { config: TINY_SCHEDULE });
  const genId = await submit(first, { webhookUrl: receiver.url });
  const [cut] = await receiver.waitForHits(1);
  await first.appliance.close();
  answer = true;
  const second = await startTestAppliance(t, { dataDir: first.dataDir, config: TINY_SCHEDULE });
  const hits = await receiver.waitForHits(2);
  assert.equal(hits[1]!.headers['webhook-id'], cut!.headers['webhook-id']);
  const delivery = await deliveryWhen(second, genId, (d) => d.state === 'delivered', first.adminKey);
  assert.deepEqual(
    delivery.attempts.map((a) => a.status),
    [204],
    'the attempt in flight at the stop was not recorded',
  );
});

test('a try-on given up at recovery sends try_on.failed', async (t) => {
  const receiver = await startReceiver(t);
  const first = await startTestAppliance(t, { config: TINY_SCHEDULE, engines: [composeEngine({ delayMs: 30_000 })] });
  const genId = await submit(first, { webhookUrl: receiver.url });
  await first.appliance.close();
  // As if the appliance had died during this try-on's last allowed attempt.
  const path = join(first.dataDir, 'state.json');
  const state = JSON.parse(await readFile(path, 'utf8')) as State;
  Object.assign(state.generations[genId]!, { stage: 'running', attempts: 3 });
  await writeFile(path, JSON.stringify(state));

  const second = await startTestAppliance(t, { dataDir: first.dataDir, config: TINY_SCHEDULE });
  const [hit] = await receiver.waitForHits(1);
  const payload = verified(hit!, await secretOf(second, first.adminKey));
  assert.equal(payload.type, 'try_on.failed');
  assert.equal(payload.data.genId, genId);
  assert.equal(payload.data.error?.code, 'engine_failed');
});

test('the terminal state and its outbox event are in the same durable write', async (t) => {
  const receiver = await startReceiver(t, () => null);
  const app = await startTestApp(t, { config: TINY_SCHEDULE });
  const genId = await submit(app, { webhookUrl: receiver.url });
  const status = (await (await app.call('GET', `/api/v1/try-on/${genId}?wait=10`)).json()) as { status: string };
  assert.equal(status.status, 'complete');
  const state = JSON.parse(await readFile(join(app.dataDir, 'state.json'), 'utf8')) as State;
  const record = state.generations[genId]!;
  assert.equal(record.status, 'complete');
  const event = state.webhookEvents[record.webhookEventId!];
  assert.ok(event, 'the event is on disk with the terminal state');
  assert.equal(event.genId, genId);
  assert.equal(event.type, 'try_on.completed');
  assert.equal(Object.values(state.webhookEvents).filter((e) => e.genId === genId).length, 1);
});

test('hosts that resolve to a metadata address are refused at submit, and at delivery if they change (DNS rebinding)', async (t) => {
  const listener = await startReceiver(t);
  const asked = new Map<string, number>();
  const lookup: LookupFn = async (host) => {
    asked.set(host, (asked.get(host) ?? 0) + 1);
    const table: Record<string, string[]> = {
      'metadata.test': ['169.254.169.254'],
      'mixed.test': ['127.0.0.1', '169.254.169.254'],
      'good.test': ['127.0.0.1'],
      // Harmless when the submit asks, metadata when the delivery does.
      'rebinding.test': asked.get(host) === 1 ? ['127.0.0.1'] : ['169.254.169.254'],
    };
    return (table[host] ?? []).map((address) => ({ address, family: 4 }));
  };
  const app = await startTestApp(t, { config: TINY_SCHEDULE, webhookLookup: lookup });
  const before = await (await app.call('GET', '/api/v1/account')).json();
  for (const host of ['metadata.test', 'mixed.test', '[::ffff:169.254.169.254]']) {
    const response = await app.call('POST', '/api/v1/try-on', {
      body: await submission({ webhookUrl: `http://${host}:${listener.port}/` }),
    });
    assert.equal(response.status, 422, host);
    assert.deepEqual(
      ((await response.json()) as { errors: Array<{ field: string }> }).errors.map((error) => error.field),
      ['webhookUrl'],
    );
  }
  assert.deepEqual(await (await app.call('GET', '/api/v1/account')).json(), before, 'no credit was reserved for them');

  const rebound = await submit(app, { webhookUrl: `http://rebinding.test:${listener.port}/` });
  const delivery = await deliveryWhen(app, rebound, (d) => d.state !== 'pending');
  assert.equal(delivery.state, 'failed');
  assert.deepEqual(
    delivery.attempts.map((a) => a.error),
    ['destination-not-allowed'],
    'refused once, never retried',
  );
  assert.equal(listener.connections, 0, 'the loopback listener the names would otherwise reach saw nothing');

  const good = await submit(app, { webhookUrl: `http://good.test:${listener.port}/` });
  await deliveryWhen(app, good, (d) => d.state === 'delivered');
  assert.equal(listener.hits[0]?.headers.host, `good.test:${listener.port}`);

  const literal = await app.call('POST', '/api/v1/try-on', {
    body: await submission({ webhookUrl: 'http://169.254.169.254/latest/meta-data/' }),
  });
  assert.equal(literal.status, 422);
  const problem = (await literal.json()) as { errors: Array<{ field: string }> };
  assert.deepEqual(
    problem.errors.map((e) => e.field),
    ['webhookUrl'],
  );
});

test('a receiver answering 410 is never called again; the delivery is gone', async (t) => {
  const receiver = await startReceiver(t, () => 410);
  const app = await startTestApp(t, { config: TINY_SCHEDULE });
  const genId = await submit(app, { webhookUrl: receiver.url });
  const delivery = await deliveryWhen(app, genId, (d) => d.state !== 'pending');
  assert.equal(delivery.state, 'gone');
  assert.equal(delivery.nextAttemptAt, null);
  // Longer than the whole schedule (0.35 s + 20 %): a retry would have come by now.
  await new Promise((resolve) => setTimeout(resolve, 800));
  assert.equal(receiver.hits.length, 1);
});

test('a redirect is a failed attempt and is not followed', async (t) => {
  const target = await startReceiver(t);
  const redirecting = await startReceiver(t, () => ({ status: 302, headers: { location: target.url } }));
  const app = await startTestApp(t, { config: TINY_SCHEDULE });
  const genId = await submit(app, { webhookUrl: redirecting.url });
  const delivery = await deliveryWhen(app, genId, (d) => d.state !== 'pending');
  assert.equal(delivery.state, 'failed');
  assert.deepEqual(
    delivery.attempts.map((a) => a.status),
    [302, 302, 302, 302],
    'the first attempt and three retries',
  );
  assert.equal(redirecting.hits.length, 4);
  assert.equal(target.connections, 0);
});

test('during a secret rotation both signatures are sent and either secret verifies; the secret is for admins', async (t) => {
  const receiver = await startReceiver(t);
  const app = await startTestApp(t, { config: TINY_SCHEDULE });
  const old = await secretOf(app);
  assert.match(old, /^whsec_[A-Za-z0-9+/]+=*$/);
  assert.equal(await secretOf(app), old, 'stable until rotated');
  const rotated = await app.call('POST', '/api/v1/webhooks/secret/rotate');
  assert.equal(rotated.status, 200);
  const view = (await rotated.json()) as { secret: string; previousSecret: string; previousExpiresAt: string };
  assert.notEqual(view.secret, old);
  assert.equal(view.previousSecret, old);
  const overlapMs = Date.parse(view.previousExpiresAt) - Date.now();
  assert.ok(overlapMs > 23.9 * 3_600_000 && overlapMs <= 24 * 3_600_000, `overlap ${overlapMs} ms`);
  assert.deepEqual((await (await app.call('GET', '/api/v1/webhooks/secret')).json()) as object, view);

  await submit(app, { webhookUrl: receiver.url });
  const [hit] = await receiver.waitForHits(1);
  assert.equal(String(hit!.headers['webhook-signature']).split(' ').length, 2);
  assert.equal(verified(hit!, old).id, verified(hit!, view.secret).id);

  const created = await app.call('POST', '/api/v1/keys', { body: { name: 'shop app', scope: 'standard' } });
  const standard = ((await created.json()) as { key: string }).key;
  assert.equal((await app.call('GET', '/api/v1/webhooks/secret', { key: standard })).status, 403);
  assert.equal((await app.call('POST', '/api/v1/webhooks/secret/rotate', { key: standard })).status, 403);
});

test('redelivery sends the same event again with a new timestamp and signature; refused while pending or without a webhook', async (t) => {
  const receiver = await startReceiver(t);
  const app = await startTestApp(t, {
    config: TINY_SCHEDULE,
    engines: [composeEngine(), composeEngine({ id: 'slow', device: 'slow', delayMs: 30_000 })],
  });
  // A standard key may redeliver the events of its own try-ons.
  const created = await app.call('POST', '/api/v1/keys', { body: { name: 'shop app', scope: 'standard' } });
  const standard = ((await created.json()) as { key: string }).key;
  const submitted = await app.call('POST', '/api/v1/try-on', { body: await submission({ webhookUrl: receiver.url }), key: standard });
  const { genId } = (await submitted.json()) as { genId: string };
  const [first] = await receiver.waitForHits(1);
  await deliveryWhen(app, genId, (d) => d.state === 'delivered', standard);
  // Timestamps are whole seconds: wait for the next one so that the signature must differ.
  const sentAt = Number(first!.headers['webhook-timestamp']);
  while (Math.floor(Date.now() / 1000) <= sentAt) await new Promise((resolve) => setTimeout(resolve, 25));

  const again = await app.call('POST', `/api/v1/try-on/${genId}/webhook-deliveries/redeliver`, { key: standard });
  assert.equal(again.status, 202);
  assert.equal(((await again.json()) as Delivery).state, 'pending');
  const [, second] = await receiver.waitForHits(2);
  assert.equal(second!.headers['webhook-id'], first!.headers['webhook-id']);
  assert.equal(second!.body, first!.body);
  assert.ok(Number(second!.headers['webhook-timestamp']) > sentAt);
  assert.notEqual(second!.headers['webhook-signature'], first!.headers['webhook-signature']);
  verified(second!, await secretOf(app));
  const delivery = await deliveryWhen(app, genId, (d) => d.state === 'delivered' && d.attempts.length === 2, standard);
  assert.deepEqual(
    delivery.attempts.map((a) => a.status),
    [200, 200],
  );

  const pending = await submit(app, { engine: 'slow', webhookUrl: receiver.url });
  assert.equal((await app.call('POST', `/api/v1/try-on/${pending}/webhook-deliveries/redeliver`)).status, 409);
  await app.call('POST', `/api/v1/try-on/${pending}/cancel`);
  const plain = await submit(app, {});
  await app.call('GET', `/api/v1/try-on/${plain}?wait=10`);
  assert.equal((await app.call('POST', `/api/v1/try-on/${plain}/webhook-deliveries/redeliver`)).status, 409);
  assert.equal((await app.call('POST', '/api/v1/try-on/gen_01M00000000000000000000000/webhook-deliveries/redeliver')).status, 404);
});
