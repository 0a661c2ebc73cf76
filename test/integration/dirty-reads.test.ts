/**
 * Nothing is visible before it is durable: a reply replayed for an Idempotency-Key, or a status a poller saw, must
 * survive a SIGKILL that lands the moment after it was shown. Each scenario kills a real appliance process 30 times.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { composeEngine, tempDataDir } from '../helpers/appliance.ts';
import { submission } from '../helpers/inputs.ts';
import { assertDurableInvariants } from '../helpers/invariants.ts';
import { startServerProcess, type ServerProcess } from '../helpers/server-process.ts';

const ROUNDS = 30;

function call(server: ServerProcess, method: string, path: string, init: { body?: string; key?: string } = {}): Promise<Response> {
  const headers: Record<string, string> = { authorization: `Bearer ${server.key}`, 'content-type': 'application/json' };
  if (init.key !== undefined) headers['idempotency-key'] = init.key;
  return fetch(`${server.url}${path}`, { method, headers, ...(init.body === undefined ? {} : { body: init.body }) });
}

/** Calls until `seen` returns a value or the server dies; the value, or undefined if the server went first. */
async function hammer<T>(attempt: () => Promise<T | undefined>): Promise<T | undefined> {
  for (let i = 0; i < 2000; i++) {
    try {
      const value = await attempt();
      if (value !== undefined) return value;
    } catch {
      return undefined;
    }
  }
  throw new Error('never saw what was awaited');
}

test(`a replayed Idempotency-Key reply names a try-on that survives SIGKILL (${ROUNDS} rounds)`, async (t) => {
  const dataDir = await tempDataDir();
  const engines = [composeEngine({ delayMs: 60_000 })];
  const body = JSON.stringify(await submission({ engine: 'test-compose' }));
  const replayed: string[] = [];
  let server = await startServerProcess(dataDir, engines, ['--trial-credits', String(ROUNDS + 5)]);
  t.after(() => server.kill());
  for (let round = 0; round < ROUNDS; round++) {
    const key = `round-${round}`;
    const first = call(server, 'POST', '/api/v1/try-on', { body, key }).catch(() => null);
    // The first reply a second request gets replayed is shown to a client: it must already be on disk.
    const genId = await hammer(async () => {
      const response = await call(server, 'POST', '/api/v1/try-on', { body, key });
      const reply = (await response.json()) as { genId?: string };
      return response.headers.get('idempotent-replayed') === 'true' ? reply.genId : undefined;
    });
    await server.kill('SIGKILL');
    await first;
    if (genId) replayed.push(genId);
    server = await startServerProcess(dataDir, engines);
    if (genId) {
      const response = await call(server, 'GET', `/api/v1/try-on/${genId}`);
      await response.body?.cancel();
      assert.equal(response.status, 200, `round ${round}: the replayed ${genId} exists after the restart`);
    }
  }
  await server.kill('SIGTERM');
  t.diagnostic(`${replayed.length} of ${ROUNDS} rounds replayed a reply before the kill`);
  assert.ok(replayed.length >= ROUNDS / 2, 'most rounds saw a replay');
  await assertDurableInvariants(dataDir);
});

test(`a cancel a poller saw stays canceled and uncharged after SIGKILL (${ROUNDS} rounds)`, async (t) => {
  const dataDir = await tempDataDir();
  const engines = [composeEngine({ delayMs: 60_000 })];
  const body = JSON.stringify(await submission({ engine: 'test-compose' }));
  let seen = 0;
  let server = await startServerProcess(dataDir, engines, ['--trial-credits', String(ROUNDS + 5)]);
  t.after(() => server.kill());
  for (let round = 0; round < ROUNDS; round++) {
    const accepted = await call(server, 'POST', '/api/v1/try-on', { body });
    const { genId } = (await accepted.json()) as { genId: string };
    const cancel = call(server, 'POST', `/api/v1/try-on/${genId}/cancel`).catch(() => null);
    const status = await hammer(async () => {
      const response = await call(server, 'GET', `/api/v1/try-on/${genId}`);
      const { status } = (await response.json()) as { status: string };
      return status === 'canceled' ? status : undefined;
    });
    await server.kill('SIGKILL');
    await cancel;
    server = await startServerProcess(dataDir, engines);
    if (status) {
      seen++;
      const response = await call(server, 'GET', `/api/v1/try-on/${genId}`);
      const record = (await response.json()) as { status: string };
      assert.equal(record.status, 'canceled', `round ${round}: ${genId} was shown canceled before the kill`);
    } else {
      // The kill beat the cancel: the try-on is pending again; cancel it so it cannot hold the engine.
      await (await call(server, 'POST', `/api/v1/try-on/${genId}/cancel`)).body?.cancel();
    }
  }
  await server.kill('SIGTERM');
  t.diagnostic(`${seen} of ${ROUNDS} rounds showed canceled before the kill`);
  assert.ok(seen >= ROUNDS / 2, 'most rounds saw the cancel');
  // assertDurableInvariants checks every reservation: a canceled try-on released, never captured.
  await assertDurableInvariants(dataDir);
});
