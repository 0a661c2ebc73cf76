/**
 * What strangers can hold open: connections per address and overall, a stalled request body, and bounded waits
 * per key. With each cap hit, the appliance keeps serving its own clients: a try-on still goes through.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { test } from 'node:test';
import { composeEngine, startTestAppliance, until, type TestAppliance } from '../helpers/appliance.ts';
import { submission } from '../helpers/inputs.ts';

/** Opens a raw connection from `localAddress` (another loopback address stands for another machine). */
function open(app: TestAppliance, localAddress: string): Promise<{ socket: Socket; closed: Promise<string> }> {
  const { port } = new URL(app.url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: Number(port), localAddress });
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
    const closed = new Promise<string>((done) => socket.once('close', () => done(received)));
    socket.once('connect', () => resolve({ socket, closed }));
    socket.once('error', reject);
  });
}

async function tryOnCompletes(app: TestAppliance): Promise<void> {
  const response = await app.call('POST', '/api/v1/try-on', { body: await submission() });
  assert.equal(response.status, 202);
  const { genId } = (await response.json()) as { genId: string };
  const done = (await (await app.call('GET', `/api/v1/try-on/${genId}?wait=20`)).json()) as { status: string };
  assert.equal(done.status, 'complete');
}

test('one address cannot hold more than its share of connections; the appliance keeps serving', async (t) => {
  const app = await startTestAppliance(t, { config: { maxConnectionsPerAddress: 10 } });
  // Half-open requests: headers never finished.
  const strangers = await Promise.all(Array.from({ length: 25 }, () => open(app, '127.0.0.2')));
  for (const { socket } of strangers) socket.write('POST /api/v1/try-on HTTP/1.1\r\nHost: 127.0.0.1\r\n');
  const outcomes = await Promise.all(
    strangers.map(({ closed }) => Promise.race([closed.then(() => 'closed'), new Promise((done) => setTimeout(() => done('open'), 500))])),
  );
  assert.equal(outcomes.filter((outcome) => outcome === 'open').length, 10, 'ten held, the rest closed at once');
  await tryOnCompletes(app);
  for (const { socket } of strangers) socket.destroy();
});

test('a request body that stops arriving is cut off with 408, and the connection closed', async (t) => {
  const app = await startTestAppliance(t, { config: { bodyIdleTimeoutMs: 300 } });
  const { socket, closed } = await open(app, '127.0.0.3');
  socket.write(
    `POST /api/v1/try-on HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${app.adminKey}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"selfie":"`,
  );
  const reply = await closed;
  assert.match(reply, /^HTTP\/1\.1 408 /);
  assert.match(reply, /"code":"request_timeout"/);
  await tryOnCompletes(app);
});

test('waits past the per-key cap are answered at once with the current status; other keys still wait', async (t) => {
  const app = await startTestAppliance(t, {
    engines: [composeEngine({ delayMs: 60_000 })],
    config: { maxWaitersPerKey: 3 },
  });
  const { genId } = (await (await app.call('POST', '/api/v1/try-on', { body: await submission() })).json()) as { genId: string };
  const gone = new AbortController();
  const held = Array.from({ length: 3 }, () =>
    fetch(`${app.url}/api/v1/try-on/${genId}?wait=30`, { headers: { authorization: `Bearer ${app.adminKey}` }, signal: gone.signal }).catch(
      () => null,
    ),
  );
  let settled = 0;
  for (const request of held) void request.then(() => settled++);
  await until(() => app.appliance.notifier.waiting() === 3, 'the three within the cap wait');
  const over = await app.call('GET', `/api/v1/try-on/${genId}?wait=30`);
  assert.equal(over.status, 200);
  assert.equal(((await over.json()) as { status: string }).status, 'pending');
  assert.equal(over.headers.get('retry-after'), '1');
  assert.equal(settled, 0, 'the three within the cap are still waiting');
  gone.abort();
  await Promise.all(held);
});
