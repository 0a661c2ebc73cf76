import assert from 'node:assert/strict';
import { test } from 'node:test';
import { composeEngine, tempDataDir } from '../helpers/appliance.ts';
import { submission } from '../helpers/inputs.ts';
import { assertDurableInvariants, readDurableState } from '../helpers/invariants.ts';
import { startServerProcess, type ServerProcess } from '../helpers/server-process.ts';

async function call(server: ServerProcess, method: string, path: string, body?: string): Promise<Response> {
  const init: RequestInit = { method, headers: { authorization: `Bearer ${server.key}`, 'content-type': 'application/json' } };
  if (body !== undefined) init.body = body;
  return fetch(`${server.url}${path}`, init);
}

async function waitTerminal(server: ServerProcess, genId: string): Promise<Record<string, unknown>> {
  for (let i = 0; i < 30; i++) {
    const status = (await (await call(server, 'GET', `/api/v1/try-on/${genId}?wait=5`)).json()) as Record<string, unknown>;
    if (status.status !== 'pending') return status;
  }
  throw new Error(`${genId} never finished`);
}

test('SIGKILL during a burst of submits loses no acknowledged generation', async (t) => {
  const dataDir = await tempDataDir();
  const engines = [composeEngine({ delayMs: 50 })];
  let server = await startServerProcess(dataDir, engines, ['--trial-credits', '500']);
  t.after(() => server.kill());
  // The spawned server also runs the built-in engines; these submissions name the test engine.
  const body = JSON.stringify(await submission({ engine: 'test-compose' }));
  const acknowledged: string[] = [];
  let sent = 0;
  let killed = false;
  const worker = async () => {
    while (!killed && sent < 400) {
      sent++;
      try {
        const response = await call(server, 'POST', '/api/v1/try-on', body);
        if (response.status === 202) {
          const { genId } = (await response.json()) as { genId: string };
          acknowledged.push(genId);
        } else {
          await response.body?.cancel();
        }
      } catch {
        // The connection died with the server: this submit was never acknowledged.
      }
    }
  };
  const workers = Array.from({ length: 6 }, worker);
  while (acknowledged.length < 25) await new Promise((resolve) => setTimeout(resolve, 5));
  killed = true;
  await server.kill('SIGKILL');
  await Promise.all(workers);
  t.diagnostic(`${acknowledged.length} submits acknowledged of ${sent} sent before SIGKILL`);

  await assertDurableInvariants(dataDir);
  server = await startServerProcess(dataDir, engines);
  for (const genId of acknowledged) {
    const response = await call(server, 'GET', `/api/v1/try-on/${genId}`);
    assert.equal(response.status, 200, `acknowledged ${genId} survives`);
    await response.body?.cancel();
  }
  for (const genId of acknowledged) assert.equal((await waitTerminal(server, genId)).status, 'complete');
  // Submits committed just before the kill whose 202 never arrived exist too; they must finish as well.
  for (const genId of Object.keys((await readDurableState(dataDir)).generations)) await waitTerminal(server, genId);
  await server.kill('SIGTERM');
  await assertDurableInvariants(dataDir);
  const state = await readDurableState(dataDir);
  assert.ok(
    Object.values(state.generations).every((g) => g.status === 'complete'),
    'nothing stays pending',
  );
});

test('a generation running when the process dies is run again, and fails with its credit released after 3 attempts', async (t) => {
  const dataDir = await tempDataDir();
  const slow = [composeEngine({ delayMs: 60_000 })];
  let server = await startServerProcess(dataDir, slow);
  t.after(() => server.kill());
  const accepted = await call(server, 'POST', '/api/v1/try-on', JSON.stringify(await submission({ engine: 'test-compose' })));
  const { genId } = (await accepted.json()) as { genId: string };
  for (let attempt = 1; attempt <= 3; attempt++) {
    for (;;) {
      const state = await readDurableState(dataDir);
      if (state.generations[genId]!.stage === 'running' && state.generations[genId]!.attempts === attempt) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await server.kill('SIGKILL');
    server = await startServerProcess(dataDir, slow);
  }
  const status = await waitTerminal(server, genId);
  assert.equal(status.status, 'failed');
  assert.equal((status.error as { code: string }).code, 'engine_failed');
  assert.equal(status.creditCharged, false);
  assert.equal(status.creditsRemaining, 25);
  await server.kill('SIGTERM');
  await assertDurableInvariants(dataDir);
});

test('after a crash mid-run the generation completes on restart, counting the lost attempt', async (t) => {
  const dataDir = await tempDataDir();
  let server = await startServerProcess(dataDir, [composeEngine({ delayMs: 60_000 })]);
  t.after(() => server.kill());
  const { genId } = (await (
    await call(server, 'POST', '/api/v1/try-on', JSON.stringify(await submission({ engine: 'test-compose' })))
  ).json()) as { genId: string };
  while ((await readDurableState(dataDir)).generations[genId]!.stage !== 'running') await new Promise((resolve) => setTimeout(resolve, 20));
  await server.kill('SIGKILL');
  server = await startServerProcess(dataDir, [composeEngine({ delayMs: 10 })]);
  const status = await waitTerminal(server, genId);
  assert.equal(status.status, 'complete');
  assert.equal(status.attempts, 2);
  assert.equal(status.creditCharged, true);
  await server.kill('SIGTERM');
  await assertDurableInvariants(dataDir);
});

test('SIGTERM puts a running generation back in the queue without spending an attempt', async (t) => {
  const dataDir = await tempDataDir();
  let server = await startServerProcess(dataDir, [composeEngine({ delayMs: 60_000 })]);
  t.after(() => server.kill());
  const { genId } = (await (
    await call(server, 'POST', '/api/v1/try-on', JSON.stringify(await submission({ engine: 'test-compose' })))
  ).json()) as { genId: string };
  while ((await readDurableState(dataDir)).generations[genId]!.stage !== 'running') await new Promise((resolve) => setTimeout(resolve, 20));
  await server.kill('SIGTERM');
  const stopped = (await readDurableState(dataDir)).generations[genId]!;
  assert.deepEqual([stopped.status, stopped.stage, stopped.attempts], ['pending', 'queued', 0]);
  server = await startServerProcess(dataDir, [composeEngine({ delayMs: 10 })]);
  const status = await waitTerminal(server, genId);
  assert.equal(status.status, 'complete');
  assert.equal(status.attempts, 1);
  await server.kill('SIGTERM');
});
