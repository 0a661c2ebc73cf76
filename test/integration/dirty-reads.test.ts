/**
 * Nothing is visible before it is durable: a reply replayed for an Idempotency-Key, or a status a poller saw, must
 * survive a SIGKILL that lands the moment after it was shown. Each scenario kills a real appliance process 30 times.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { composeEngine, tempDataDir } from '../helpers/appliance.ts';
import { submission } from '../helpers/inputs.ts';
import { assertDurableInvariants } from '../helpers/invariants.ts';
import { startServerProcess, type ServerProcess } from '../helpers/server-process.ts';

const ROUNDS = 30;
/** Appliances killed side by side, ROUNDS / LANES rounds each. */
const LANES = 3;

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

/** Runs `rounds` rounds on each of `LANES` appliances at once (each its own data directory and child process). */
async function inLanes(t: TestContext, round: (server: () => ServerProcess, restart: () => Promise<void>, index: number) => Promise<void>) {
  const engines = [composeEngine({ delayMs: 60_000 })];
  // Every lane runs to its end or its own failure (none is left starting servers after the test), then the
  // first failure is reported.
  const lanes = await Promise.allSettled(
    Array.from({ length: LANES }, async (_, lane) => {
      const dataDir = await tempDataDir();
      let server = await startServerProcess(dataDir, engines, ['--trial-credits', String(ROUNDS + 5)]);
      t.after(() => server.kill());
      const restart = async () => {
        await server.kill('SIGKILL');
        server = await startServerProcess(dataDir, engines);
      };
      for (let i = 0; i < ROUNDS / LANES; i++) await round(() => server, restart, lane * (ROUNDS / LANES) + i);
      await server.kill('SIGTERM');
      await assertDurableInvariants(dataDir);
    }),
  );
  for (const lane of lanes) if (lane.status === 'rejected') throw lane.reason;
}

test(`a replayed Idempotency-Key reply names a try-on that survives SIGKILL (${ROUNDS} rounds)`, async (t) => {
  const body = JSON.stringify(await submission({ engine: 'test-compose' }));
  let replayed = 0;
  await inLanes(t, async (server, restart, round) => {
    const key = `round-${round}`;
    const first = call(server(), 'POST', '/api/v1/try-on', { body, key }).catch(() => null);
    // The first reply a second request gets replayed is shown to a client: it must already be on disk.
    const genId = await hammer(async () => {
      const response = await call(server(), 'POST', '/api/v1/try-on', { body, key });
      const reply = (await response.json()) as { genId?: string };
      return response.headers.get('idempotent-replayed') === 'true' ? reply.genId : undefined;
    });
    await restart();
    await first;
    if (!genId) return;
    replayed++;
    const response = await call(server(), 'GET', `/api/v1/try-on/${genId}`);
    await response.body?.cancel();
    assert.equal(response.status, 200, `round ${round}: the replayed ${genId} exists after the restart`);
  });
  t.diagnostic(`${replayed} of ${ROUNDS} rounds replayed a reply before the kill`);
  assert.ok(replayed >= ROUNDS / 2, 'most rounds saw a replay');
});

test(`a cancel a poller saw stays canceled and uncharged after SIGKILL (${ROUNDS} rounds)`, async (t) => {
  const body = JSON.stringify(await submission({ engine: 'test-compose' }));
  let seen = 0;
  // assertDurableInvariants, at the end of each lane, checks every reservation: a canceled try-on released, never captured.
  await inLanes(t, async (server, restart, round) => {
    const accepted = await call(server(), 'POST', '/api/v1/try-on', { body });
    const { genId } = (await accepted.json()) as { genId: string };
    const cancel = call(server(), 'POST', `/api/v1/try-on/${genId}/cancel`).catch(() => null);
    const status = await hammer(async () => {
      const response = await call(server(), 'GET', `/api/v1/try-on/${genId}`);
      const { status } = (await response.json()) as { status: string };
      return status === 'canceled' ? status : undefined;
    });
    await restart();
    await cancel;
    if (status) {
      seen++;
      const record = (await (await call(server(), 'GET', `/api/v1/try-on/${genId}`)).json()) as { status: string };
      assert.equal(record.status, 'canceled', `round ${round}: ${genId} was shown canceled before the kill`);
    } else {
      // The kill beat the cancel: the try-on is pending again; cancel it so it cannot hold the engine.
      await (await call(server(), 'POST', `/api/v1/try-on/${genId}/cancel`)).body?.cancel();
    }
  });
  t.diagnostic(`${seen} of ${ROUNDS} rounds showed canceled before the kill`);
  assert.ok(seen >= ROUNDS / 2, 'most rounds saw the cancel');
});
