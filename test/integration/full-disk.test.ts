/**
 * A full disk on a real (small) filesystem: submits answer 503 storage_unavailable and change nothing, work whose
 * write failed stays in memory and finishes by itself once space is freed, and no temporary file is left behind.
 * The filesystem is a tmpfs with a size limit that the test mounts, which needs root; elsewhere the test skips.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, open, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test, type TestContext } from 'node:test';
import { startTestAppliance } from '../helpers/appliance.ts';
import { submission } from '../helpers/inputs.ts';

const GATED_ENGINE = resolve(import.meta.dirname, '../helpers/engines/gated-engine.ts');

/** Mounts a tmpfs of `megabytes` for this test; null where mounting is not allowed. */
async function smallFilesystem(t: TestContext, megabytes: number): Promise<string | null> {
  const dir = await mkdtemp(join(tmpdir(), 'fittingroom-small-fs-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${megabytes}m,mode=0700`, 'tmpfs', dir], { stdio: 'ignore' });
  } catch {
    await rm(dir, { recursive: true, force: true });
    return null;
  }
  t.after(async () => {
    execFileSync('umount', ['-l', dir]);
    await rm(dir, { recursive: true, force: true });
  });
  return dir;
}

/** Writes to `path` until the filesystem refuses another byte. */
async function fill(path: string): Promise<void> {
  const handle = await open(path, 'w');
  try {
    for (const size of [1 << 20, 1 << 12, 1]) {
      const chunk = Buffer.alloc(size, 7);
      for (;;) {
        try {
          await handle.write(chunk);
          await handle.sync();
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
          break;
        }
      }
    }
  } finally {
    await handle.close();
  }
}

/** Temporary files anywhere under `dir`. */
async function tempFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true });
  return entries.filter((name) => name.endsWith('.tmp'));
}

async function statusOf(call: (method: string, path: string) => Promise<Response>, genId: string): Promise<string> {
  return ((await (await call('GET', `/api/v1/try-on/${genId}`)).json()) as { status: string }).status;
}

test('a full disk answers 503 storage_unavailable, strands no try-on, and leaves no temporary files', async (t) => {
  const mount = await smallFilesystem(t, 24);
  if (!mount) {
    t.skip('mounting a tmpfs needs root');
    return;
  }
  // A subtest, so that the appliance is closed and its ledger checked before the filesystem goes.
  await t.test('on a 24 MB tmpfs', (st) => fullDisk(st, mount));
});

async function fullDisk(t: TestContext, mount: string): Promise<void> {
  const gate = join(await mkdtemp(join(tmpdir(), 'fittingroom-gate-')), 'open');
  const dataDir = join(mount, 'data');
  const { call } = await startTestAppliance(t, {
    dataDir,
    engines: [{ module: GATED_ENGINE, options: { gate }, concurrency: 1 }],
    config: { trialCredits: 10 },
  });
  const body = await submission({ engine: 'test-gated' });
  const genIds: string[] = [];
  for (let i = 0; i < 4; i++) {
    const response = await call('POST', '/api/v1/try-on', { body });
    assert.equal(response.status, 202);
    genIds.push(((await response.json()) as { genId: string }).genId);
  }
  const before = (await (await call('GET', '/api/v1/account')).json()) as { creditsRemaining: number };

  await fill(join(mount, 'filler'));
  const refused = await call('POST', '/api/v1/try-on', { body });
  assert.equal(refused.status, 503);
  assert.equal(refused.headers.get('content-type'), 'application/problem+json; charset=utf-8');
  assert.ok(Number(refused.headers.get('retry-after')) >= 1, 'Retry-After says when to try again');
  assert.equal(((await refused.json()) as { code: string }).code, 'storage_unavailable');
  const after = (await (await call('GET', '/api/v1/account')).json()) as { creditsRemaining: number };
  assert.equal(after.creditsRemaining, before.creditsRemaining, 'the refused submit reserved nothing');
  const listed = (await (await call('GET', '/api/v1/try-on?limit=100')).json()) as { data: unknown[] };
  assert.equal(listed.data.length, 4, 'the refused submit left no try-on');

  // Every try-on now needs a write the disk refuses: the first its result, the others their start.
  await writeFile(gate, '');
  await new Promise((resolve) => setTimeout(resolve, 1500));
  for (const genId of genIds) assert.equal(await statusOf(call, genId), 'pending', `${genId} waits for the disk`);
  assert.deepEqual(await tempFiles(dataDir), [], 'failed writes leave no temporary files');

  await rm(join(mount, 'filler'));
  const freed = Date.now();
  for (const genId of genIds) {
    const status = ((await (await call('GET', `/api/v1/try-on/${genId}?wait=20`)).json()) as { status: string }).status;
    assert.equal(status, 'complete', `${genId} finishes once space is free, with no restart`);
  }
  t.diagnostic(`all 4 try-ons complete ${Date.now() - freed} ms after space was freed`);
  const charged = (await (await call('GET', '/api/v1/account')).json()) as { creditsRemaining: number };
  assert.equal(charged.creditsRemaining, before.creditsRemaining, 'each captured once, nothing more reserved');
  assert.deepEqual(await tempFiles(dataDir), []);
}
