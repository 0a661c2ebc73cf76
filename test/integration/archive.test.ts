import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { appendFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { archiveCold, sweep } from '../../server/jobs/retention.ts';
import { Archive } from '../../server/store/archive.ts';
import { composeEngine, startTestAppliance, tempDataDir, type TestAppliance } from '../helpers/appliance.ts';
import { submission } from '../helpers/inputs.ts';
import { assertDurableInvariants } from '../helpers/invariants.ts';

async function submitAndFinish(app: TestAppliance, engine = 'test-compose'): Promise<string> {
  const { genId } = (await (await app.call('POST', '/api/v1/try-on', { body: await submission({ engine }) })).json()) as { genId: string };
  if (engine === 'test-compose') await app.call('GET', `/api/v1/try-on/${genId}?wait=20`);
  return genId;
}

// 'slow' runs on a device of its own, so it never holds up the fast engine.
const engines = [composeEngine(), composeEngine({ id: 'slow', device: 'other', delayMs: 60_000 })];

test('finished generations and their ledger entries move to the archive and stay readable', async (t) => {
  const app = await startTestAppliance(t, { engines, config: { archiveMinEntries: 1 } });
  const [a, b, c] = [await submitAndFinish(app), await submitAndFinish(app), await submitAndFinish(app)];
  const pending = await submitAndFinish(app, 'slow');
  for (const id of [a, b]) assert.equal((await app.call('DELETE', `/api/v1/try-on/${id}`)).status, 204);
  const before = await (await app.call('GET', '/api/v1/account')).json();

  const report = await sweep(app.appliance.store, new Date(), app.appliance.archive, 1);
  assert.equal(report.archived, 3, 'a, b and c are finished; only the pending one stays');
  const state = app.appliance.store.state;
  assert.deepEqual(Object.keys(state.generations), [pending]);
  assert.equal(state.ledgerBase?.throughSeq, 7, 'trial, then reserve and capture of a, b and c');
  assert.deepEqual(
    state.ledger.map((e) => e.type),
    ['reserve'],
  );
  assert.deepEqual(await (await app.call('GET', '/api/v1/account')).json(), before, 'balances carry over');

  const archived = (await (await app.call('GET', `/api/v1/try-on/${a}`)).json()) as Record<string, unknown>;
  assert.deepEqual([archived.status, archived.erased, archived.creditCharged], ['complete', true, true]);
  assert.equal((await app.call('GET', `/api/v1/try-on/${a}?wait=5`)).status, 200);
  assert.equal((await app.call('GET', `/api/v1/try-on/${a}/image`)).status, 404);
  assert.equal((await app.call('POST', `/api/v1/try-on/${a}/cancel`)).status, 409);
  assert.equal((await app.call('DELETE', `/api/v1/try-on/${a}`)).status, 204);

  // c moved with its image; erasing it appends its erased version to the archive.
  assert.equal((await app.call('GET', `/api/v1/try-on/${c}/image`)).status, 200);
  assert.equal((await app.call('DELETE', `/api/v1/try-on/${c}`)).status, 204);
  assert.equal((await app.call('GET', `/api/v1/try-on/${c}/image`)).status, 404);
  const erased = (await (await app.call('GET', `/api/v1/try-on/${c}`)).json()) as Record<string, unknown>;
  assert.deepEqual([erased.status, erased.erased, erased.creditCharged], ['complete', true, true]);
  assert.ok(!existsSync(join(app.dataDir, 'images', c)), 'its files are gone');
  const reopened = await Archive.open(app.dataDir);
  assert.equal(reopened.generation(c)?.erased, true, 'the erased version is what a restart reads');

  const page1 = (await (await app.call('GET', '/api/v1/try-on?limit=3')).json()) as { data: Array<{ genId: string }>; nextCursor: string };
  assert.deepEqual(
    page1.data.map((g) => g.genId),
    [pending, c, b],
  );
  const page2 = (await (await app.call('GET', `/api/v1/try-on?limit=3&cursor=${page1.nextCursor}`)).json()) as {
    data: Array<{ genId: string }>;
    nextCursor: string | null;
  };
  assert.deepEqual(
    page2.data.map((g) => g.genId),
    [a],
  );
  assert.equal(page2.nextCursor, null);
  const completed = (await (await app.call('GET', '/api/v1/try-on?status=complete')).json()) as { data: Array<{ genId: string }> };
  assert.deepEqual(
    completed.data.map((g) => g.genId),
    [c, b, a],
  );

  const next = await submitAndFinish(app);
  assert.deepEqual(
    app.appliance.store.state.ledger.slice(-2).map((e) => e.seq),
    [9, 10],
    'sequence numbers continue after the archived ones',
  );
  assert.ok(next);
});

test('nothing moves until a batch is large enough', async (t) => {
  const app = await startTestAppliance(t, { engines });
  const a = await submitAndFinish(app);
  await app.call('DELETE', `/api/v1/try-on/${a}`);
  assert.equal((await sweep(app.appliance.store, new Date(), app.appliance.archive, 1000)).archived, 0);
  assert.ok(app.appliance.store.state.generations[a]);
});

test('the archive survives a restart, and a crash between archiving and the state commit duplicates nothing', async (t) => {
  const dataDir = await tempDataDir();
  const first = await startTestAppliance(t, { dataDir, engines });
  const ids = [await submitAndFinish(first), await submitAndFinish(first)];
  for (const id of ids) await first.call('DELETE', `/api/v1/try-on/${id}`);
  // The first half of a move, as if the process died before the state commit.
  const state = first.appliance.store.state;
  await first.appliance.archive.append(
    ids.map((id) => state.generations[id]!),
    state.ledger.slice(0, 5),
  );
  await first.appliance.close();
  await assertDurableInvariants(dataDir);

  const second = await startTestAppliance(t, { dataDir, engines, config: { archiveMinEntries: 1 } });
  assert.equal(Object.keys(second.appliance.store.state.generations).length, 0, 'the start-up sweep finished the move');
  const archivedLines = (await readFile(join(dataDir, 'archive', 'generations.jsonl'), 'utf8')).trim().split('\n');
  assert.equal(archivedLines.length, 2, 'no record archived twice');
  const ledgerLines = (await readFile(join(dataDir, 'archive', 'ledger.jsonl'), 'utf8')).trim().split('\n');
  assert.equal(ledgerLines.length, 5);
  for (const id of ids) assert.equal((await second.call('GET', `/api/v1/try-on/${id}`, { key: first.adminKey })).status, 200);
  const account = (await (await second.call('GET', '/api/v1/account', { key: first.adminKey })).json()) as { creditsRemaining: number };
  assert.equal(account.creditsRemaining, 23);
});

test('a torn last line in an archive file (a crash mid-append) is ignored', async () => {
  const dataDir = await tempDataDir();
  const archive = await Archive.open(dataDir);
  await archive.append([], [{ id: 'le_1', seq: 1, type: 'trial', amount: 5, lot: 'trial', at: new Date().toISOString() }]);
  await appendFile(join(dataDir, 'archive', 'ledger.jsonl'), '{"id":"le_2","se');
  const reopened = await Archive.open(dataDir);
  assert.deepEqual(
    reopened.ledgerEntries().map((e) => e.seq),
    [1],
  );
});

test('archiveCold never splits a reservation from its resolution', async (t) => {
  const app = await startTestAppliance(t, { engines });
  const slow = await submitAndFinish(app, 'slow');
  const done = await submitAndFinish(app);
  // Ledger: trial, reserve(slow), reserve(done), capture(done); slow is still pending.
  assert.equal(await archiveCold(app.appliance.store, app.appliance.archive, 1), 0, 'the prefix stops at the first pending generation');
  assert.ok(app.appliance.store.state.generations[done], 'done waits for the one before it');
  await app.call('POST', `/api/v1/try-on/${slow}/cancel`);
  assert.equal(await archiveCold(app.appliance.store, app.appliance.archive, 1), 2);
  assert.equal(app.appliance.store.state.ledger.length, 0);
  assert.deepEqual(app.appliance.store.state.ledgerBase?.lots.trial, { available: 24, reserved: 0 });
});

test('a record erased between the two steps of a move stays in the state and moves, erased, next time', async (t) => {
  const app = await startTestAppliance(t, { engines });
  const id = await submitAndFinish(app);
  const { store, archive } = app.appliance;
  // The first step of a move, then an erasure in the state before the second.
  await archive.append([store.state.generations[id]!], []);
  assert.equal((await app.call('DELETE', `/api/v1/try-on/${id}`)).status, 204);
  assert.equal(await archiveCold(store, archive, 1), 1);
  assert.equal(store.state.generations[id], undefined);
  assert.equal(archive.generation(id)?.erased, true, 'the archive holds the erased version');
  const lines = (await readFile(join(app.dataDir, 'archive', 'generations.jsonl'), 'utf8')).trim().split('\n');
  assert.equal(lines.length, 2, 'the first version, then the erased one');
});

test('images of a moved try-on still expire with retention', async (t) => {
  const app = await startTestAppliance(t, { engines });
  const id = await submitAndFinish(app);
  const { store, archive } = app.appliance;
  assert.equal(await archiveCold(store, archive, 1), 1);
  const week = new Date(Date.now() + 8 * 86_400_000);
  const report = await sweep(store, week, archive, 1);
  assert.equal(report.imagesExpired, 1);
  assert.equal(archive.generation(id)?.erased, true);
  assert.ok(!existsSync(join(app.dataDir, 'images', id)));
  assert.equal((await app.call('GET', `/api/v1/try-on/${id}/image`)).status, 404);
});

test('a standard key lists only its own try-ons among the moved ones, newest first', async (t) => {
  const app = await startTestAppliance(t, { engines });
  const created = await app.call('POST', '/api/v1/keys', { body: { name: 'till', scope: 'standard' } });
  const till = ((await created.json()) as { key: string }).key;
  const submit = async (key?: string) => {
    const response = await app.call('POST', '/api/v1/try-on', { body: await submission(), ...(key ? { key } : {}) });
    const { genId } = (await response.json()) as { genId: string };
    await app.call('GET', `/api/v1/try-on/${genId}?wait=20`);
    return genId;
  };
  const [a, other, b] = [await submit(till), await submit(), await submit(till)];
  assert.equal(await archiveCold(app.appliance.store, app.appliance.archive, 1), 3);
  const list = async (key: string, query = '') =>
    ((await (await app.call('GET', `/api/v1/try-on${query}`, { key })).json()) as { data: Array<{ genId: string }> }).data.map(
      (g) => g.genId,
    );
  assert.deepEqual(await list(till), [b, a]);
  assert.deepEqual(await list(till, '?status=complete&limit=1'), [b]);
  assert.deepEqual(await list(app.adminKey), [b, other, a]);
});
