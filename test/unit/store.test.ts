import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { ApiError } from '../../server/kernel/errors.ts';
import { DataDirLockedError, Store } from '../../server/store/db.ts';
import { DurableJsonFile } from '../../server/store/durable-json-adapter.ts';
import type { State } from '../../server/store/schema.ts';

async function dir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'fittingroom-store-'));
}

test('a mutation resolves only once it is on disk, and the file is complete JSON', async () => {
  const dataDir = await dir();
  const store = await Store.open(dataDir);
  const result = await store.mutate((state) => {
    state.installation = { id: 'inst_1', createdAt: 'now' };
    return 'done';
  });
  assert.equal(result, 'done');
  const onDisk = JSON.parse(await readFile(join(dataDir, 'state.json'), 'utf8')) as State;
  assert.deepEqual(onDisk.installation, { id: 'inst_1', createdAt: 'now' });
  assert.deepEqual(
    (await readdir(dataDir)).filter((name) => name.endsWith('.tmp')),
    [],
    'no temporary files are left',
  );
  await store.close();
});

test('concurrent mutations are all applied, in order, with fewer writes than mutations (group commit)', async () => {
  const dataDir = await dir();
  let writes = 0;
  const file = new DurableJsonFile<State>(join(dataDir, 'state.json'));
  const counting = { read: () => file.read(), write: (data: State) => (writes++, file.write(data)) };
  const store = await Store.open(dataDir, { adapter: counting });
  const results = await Promise.all(
    Array.from({ length: 200 }, (_, i) =>
      store.mutate((state) => {
        state.keys.push({ id: `k${i}`, name: 'n', scope: 'standard', hash: String(i), prefix: 'p', createdAt: '', lineageId: `k${i}` });
        return state.keys.length;
      }),
    ),
  );
  assert.deepEqual(
    results,
    Array.from({ length: 200 }, (_, i) => i + 1),
  );
  assert.ok(writes < 200, `${writes} writes for 200 mutations`);
  await store.close();
  const reopened = await Store.open(dataDir);
  assert.deepEqual(
    reopened.state.keys.map((k) => k.id),
    Array.from({ length: 200 }, (_, i) => `k${i}`),
  );
  await reopened.close();
});

test('readers see a change only once its write is durable, never while it is in flight', async () => {
  const dataDir = await dir();
  const file = new DurableJsonFile<State>(join(dataDir, 'state.json'));
  let release = () => {};
  const gated = {
    read: () => file.read(),
    write: (data: State) => {
      const written = file.write(data);
      return new Promise<void>((resolve, reject) => (release = () => written.then(resolve, reject)));
    },
  };
  const store = await Store.open(dataDir, { adapter: gated });
  const change = store.mutate((state) => void (state.installation = { id: 'inst_1', createdAt: 'now' }));
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(store.state.installation, null, 'the change is not visible while its write is in flight');
  const during = store.mutate((state) => state.installation?.id);
  assert.equal(store.state.installation, null);
  release();
  await change;
  assert.deepEqual(store.state.installation, { id: 'inst_1', createdAt: 'now' });
  await new Promise((resolve) => setImmediate(resolve));
  release();
  assert.equal(await during, 'inst_1', 'mutations themselves see the changes before them');
  await store.close();
});

test('a mutation that throws changes nothing and is not written', async () => {
  const dataDir = await dir();
  const store = await Store.open(dataDir);
  await assert.rejects(
    store.mutate(() => {
      throw new Error('refused');
    }),
    /refused/,
  );
  assert.equal(store.state.installation, null);
  await store.close();
});

test('a failed write rejects every unacknowledged mutation and restores the last durable state', async () => {
  const dataDir = await dir();
  const file = new DurableJsonFile<State>(join(dataDir, 'state.json'));
  let failNext = false;
  const flaky = {
    read: () => file.read(),
    write: async (data: State) => {
      if (failNext) {
        failNext = false;
        throw new Error('disk full');
      }
      return file.write(data);
    },
  };
  const store = await Store.open(dataDir, { adapter: flaky });
  await store.mutate((state) => void (state.installation = { id: 'kept', createdAt: '' }));
  failNext = true;
  const lost = store.mutate((state) => void (state.installation = { id: 'lost', createdAt: '' }));
  await assert.rejects(lost, (error: ApiError) => error.code === 'storage_unavailable' && (error.cause as Error).message === 'disk full');
  assert.deepEqual(store.state.installation, { id: 'kept', createdAt: '' });
  await store.mutate(
    (state) => void state.keys.push({ id: 'after', name: 'n', scope: 'admin', hash: 'h', prefix: 'p', createdAt: '', lineageId: 'after' }),
  );
  const onDisk = JSON.parse(await readFile(join(dataDir, 'state.json'), 'utf8')) as State;
  assert.equal(onDisk.installation?.id, 'kept');
  assert.deepEqual(
    onDisk.keys.map((k) => k.id),
    ['after'],
  );
  await store.close();
});

test('temporary files that a crash left mid-write are removed when the store opens', async () => {
  const dataDir = await dir();
  await writeFile(join(dataDir, '.state.json.0123456789ab.tmp'), '{"half');
  await writeFile(join(dataDir, 'notes.tmp'), 'not ours');
  const store = await Store.open(dataDir);
  assert.deepEqual(
    (await readdir(dataDir)).filter((name) => name.endsWith('.tmp')),
    ['notes.tmp'],
  );
  await store.close();
});

test('a data directory is locked while open; a lock left by a dead process is taken over', async () => {
  const dataDir = await dir();
  const store = await Store.open(dataDir);
  await assert.rejects(Store.open(dataDir), DataDirLockedError);
  await store.close();
  await writeFile(join(dataDir, 'lock'), '999999999');
  const again = await Store.open(dataDir);
  assert.equal(await readFile(join(dataDir, 'lock'), 'utf8'), String(process.pid));
  await again.close();
});

test('a state file from a newer version is refused rather than misread', async () => {
  const dataDir = await dir();
  await writeFile(join(dataDir, 'state.json'), JSON.stringify({ version: 99 }));
  await assert.rejects(Store.open(dataDir), /schema version 99/);
  await writeFile(join(dataDir, 'state.json'), '{"version": 1, "trunc');
  await assert.rejects(Store.open(dataDir), SyntaxError);
});
