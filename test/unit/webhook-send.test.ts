import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test, type TestContext } from 'node:test';
import { AddressPolicy } from '../../server/webhooks/address-policy.ts';
import { destinationProblem, sendWebhook, type LookupFn, type SendRequest } from '../../server/webhooks/send.ts';

interface Listener {
  port: number;
  connections: number;
  requests: Array<{ headers: IncomingMessage['headers']; body: string; url: string }>;
}

async function listen(t: TestContext, handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Listener> {
  const listener: Listener = { port: 0, connections: 0, requests: [] };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      listener.requests.push({ headers: req.headers, body, url: req.url ?? '' });
      handler(req, res);
    });
  });
  server.on('connection', () => listener.connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  listener.port = (server.address() as AddressInfo).port;
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return listener;
}

const policy = new AddressPolicy({ allow: [], deny: [] });
const stub =
  (table: Record<string, string[]>): LookupFn =>
  async (host) => {
    const addresses = table[host];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

function request(url: string, extra: Partial<SendRequest> = {}): SendRequest {
  return {
    url,
    headers: { 'content-type': 'application/json', 'webhook-id': 'evt_1' },
    body: '{"a":1}',
    timeoutMs: 2000,
    policy,
    lookup: stub({}),
    signal: new AbortController().signal,
    ...extra,
  };
}

test('a host name is resolved once and the vetted address is dialled, with the URL host in Host', async (t) => {
  const sink = await listen(t, (_req, res) => res.writeHead(204).end());
  const outcome = await sendWebhook(request(`http://hooks.test:${sink.port}/in?x=1`, { lookup: stub({ 'hooks.test': ['127.0.0.1'] }) }));
  assert.deepEqual(outcome, { status: 204 });
  assert.equal(sink.requests.length, 1);
  assert.equal(sink.requests[0]!.headers.host, `hooks.test:${sink.port}`);
  assert.equal(sink.requests[0]!.url, '/in?x=1');
  assert.equal(sink.requests[0]!.body, '{"a":1}');
  assert.equal(sink.requests[0]!.headers['webhook-id'], 'evt_1');
});

test('a name that resolves to a metadata address among others is refused without any connection', async (t) => {
  const sink = await listen(t, (_req, res) => res.writeHead(200).end());
  const lookup = stub({ 'mixed.test': ['127.0.0.1', '169.254.169.254'], 'meta.test': ['::ffff:169.254.169.254'] });
  assert.deepEqual(await sendWebhook(request(`http://mixed.test:${sink.port}/`, { lookup })), { error: 'destination-not-allowed' });
  assert.deepEqual(await sendWebhook(request(`http://meta.test:${sink.port}/`, { lookup })), { error: 'destination-not-allowed' });
  assert.deepEqual(await sendWebhook(request(`http://[fd00:ec2::254]:${sink.port}/`)), { error: 'destination-not-allowed' });
  const denied = new AddressPolicy({ allow: [], deny: ['127.0.0.0/8'] });
  assert.deepEqual(await sendWebhook(request(`http://127.0.0.1:${sink.port}/`, { policy: denied })), { error: 'destination-not-allowed' });
  assert.equal(sink.connections, 0);
});

test('redirects are answered, not followed', async (t) => {
  const target = await listen(t, (_req, res) => res.writeHead(200).end());
  const sink = await listen(t, (_req, res) => res.writeHead(302, { location: `http://127.0.0.1:${target.port}/` }).end());
  assert.deepEqual(await sendWebhook(request(`http://127.0.0.1:${sink.port}/`)), { status: 302 });
  assert.equal(target.connections, 0);
});

test('a receiver that never answers times out; a huge body is cut at the cap; DNS and connection failures are named', async (t) => {
  const silent = await listen(t, () => undefined);
  const started = performance.now();
  assert.deepEqual(await sendWebhook(request(`http://127.0.0.1:${silent.port}/`, { timeoutMs: 200 })), { error: 'timeout' });
  assert.ok(performance.now() - started < 5000);

  const chunk = Buffer.alloc(64 * 1024, 'x');
  const huge = await listen(t, (_req, res) => {
    res.writeHead(200);
    const write = () => {
      while (res.write(chunk));
      if (!res.destroyed) res.once('drain', write);
    };
    write();
  });
  assert.deepEqual(await sendWebhook(request(`http://127.0.0.1:${huge.port}/`)), { status: 200 });

  assert.deepEqual(await sendWebhook(request('http://nowhere.test/')), { error: 'dns-failed' });
  assert.deepEqual(await sendWebhook(request('http://127.0.0.1:1/')), { error: 'connection-failed' });

  const controller = new AbortController();
  const pending = sendWebhook(request(`http://127.0.0.1:${silent.port}/`, { signal: controller.signal }));
  controller.abort();
  assert.deepEqual(await pending, { error: 'aborted' });
});

test('every resolved address is tried until one connects: localhost as ::1 first, the receiver on 127.0.0.1', async (t) => {
  const sink = await listen(t, (_req, res) => res.writeHead(204).end());
  const lookup = stub({ 'receiver.local': ['::1', '127.0.0.1'] });
  const outcome = await sendWebhook(request(`http://receiver.local:${sink.port}/hook`, { lookup }));
  assert.deepEqual(outcome, { status: 204 });
  assert.equal(sink.requests.length, 1, 'delivered once');
});

test('at submit, metadata names and names resolving to refused addresses are refused; others and unresolvable names pass', async () => {
  const lookup = stub({ 'sneaky.example': ['10.0.0.5', '169.254.169.254'], 'till.local': ['192.168.1.20'] });
  const refused = [
    'http://metadata.google.internal/computeMetadata/v1/',
    'http://METADATA.GOOGLE.INTERNAL./',
    'http://[::ffff:169.254.169.254]/',
    'http://[::ffff:a9fe:a9fe]/latest',
    'http://sneaky.example/hook',
  ];
  for (const url of refused) assert.match((await destinationProblem(url, policy, lookup)) ?? '', /may not reach/, url);
  for (const url of ['http://till.local/hook', 'http://127.0.0.1:9000/', 'http://not-resolving.example/'])
    assert.equal(await destinationProblem(url, policy, lookup), null, url);
  const lanOnly = new AddressPolicy({ allow: ['192.168.0.0/16'], deny: [] });
  assert.match((await destinationProblem('http://127.0.0.1:9000/', lanOnly, lookup)) ?? '', /may not reach/, 'the allow list applies');
});
