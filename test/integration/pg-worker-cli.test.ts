/**
 * `fittingroom worker --database …` as a real process on a throwaway PostgreSQL cluster: it announces itself with
 * its engines, takes try-ons whose inputs are in the shop's image store (the database, or a shared directory),
 * runs them in its engine host processes, stores the results there and settles them; SIGTERM retires it. A worker
 * without a database, and a database that cannot be reached, are refused in words.
 */
import assert from 'node:assert/strict';
import { fork, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import sharp from 'sharp';
import { newId } from '../../server/kernel/ids.ts';
import { DirectoryImageStore, type ImageStore } from '../../server/state/images.ts';
import { PgState } from '../../server/state/postgres/gateway.ts';
import { PgImageStore } from '../../server/state/postgres/images.ts';
import { PgJobQueue } from '../../server/state/postgres/jobs.ts';
import { composeEngine } from '../helpers/appliance.ts';
import { validJpeg } from '../helpers/hostile-images.ts';
import { plainParams } from '../helpers/inputs.ts';
import { clusterForFile } from '../helpers/pg-cluster.ts';

const CLI = resolve(import.meta.dirname, '../../server/cli.ts');
const { skip, newDatabase } = clusterForFile('worker_cli');

function startWorkerProcess(args: string[]) {
  const child = fork(CLI, ['worker', '--builtin-engines', 'false', ...args], {
    env: { ...process.env, FITTINGROOM_ENGINES: JSON.stringify([composeEngine({ id: 'compose', delayMs: 50 })]) },
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  const ready = new Promise<{ id: string; engines: string[] }>((resolveReady, reject) => {
    child.once('message', (message) => resolveReady(message as { id: string; engines: string[] }));
    void exited.then((code) => reject(new Error(`the worker exited (${code}) before it was ready: ${output}`)));
  });
  return { child, ready, exited, output: () => output };
}

/** Three try-ons submitted with their inputs in `images`; their ids. */
async function submitThree(state: PgState, images: ImageStore): Promise<string[]> {
  await state.redeemVoucher({ id: `v_${newId('x')}`, credits: 3, issuedAt: new Date().toISOString() }, 'key_1', new Date());
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const id = newId('gen');
    const selfie = await images.put(id, 'selfie', await validJpeg(384, 512), { format: 'jpeg', width: 384, height: 512 });
    const item = await images.put(id, 'item-0', await validJpeg(300, 400), { format: 'jpeg', width: 300, height: 400 });
    const params = plainParams({ outputFormat: 'png' });
    await state.submit({ id, keyId: 'key_1', engine: 'compose', params, inputs: { selfie, items: [item] }, retentionDays: 7 }, new Date());
    ids.push(id);
  }
  return ids;
}

async function waitUntilSettled(state: PgState, ids: string[]): Promise<void> {
  for (let tries = 0; tries < 600; tries++) {
    const records = await Promise.all(ids.map((id) => state.generation(id)));
    if (records.every((record) => record?.status !== 'pending')) return;
    await sleep(50);
  }
  throw new Error('the try-ons were not settled within 30 s');
}

for (const where of ['database', 'shared directory'] as const) {
  test(`a worker process runs try-ons with images in the ${where}`, { skip }, async () => {
    const url = await newDatabase();
    const state = await PgState.open(url);
    const dir = where === 'shared directory' ? await mkdtemp(join(tmpdir(), 'fr-shared-images-')) : null;
    const images = dir ? new DirectoryImageStore(dir) : new PgImageStore(state.db);
    const worker = startWorkerProcess(['--database', url, ...(dir ? ['--images-dir', dir] : [])]);
    try {
      const { id, engines } = await worker.ready;
      assert.deepEqual(engines, ['compose']);
      const fleet = await new PgJobQueue(state.db).fleet(new Date(), 60);
      assert.deepEqual(
        fleet.map((member) => [member.id, member.engines, member.pid]),
        [[id, ['compose'], worker.child.pid]],
      );

      const ids = await submitThree(state, images);
      await waitUntilSettled(state, ids);
      for (const genId of ids) {
        const record = (await state.generation(genId))!;
        assert.equal(record.status, 'complete', JSON.stringify(record.error));
        assert.equal(record.credit, 'captured');
        assert.equal(record.attempts, 1);
        const result = await images.get(record.result!);
        const meta = await sharp(result).metadata();
        assert.equal(meta.format, 'png');
        assert.deepEqual([meta.width, meta.height, record.result!.width, record.result!.height], [384, 512, 384, 512]);
      }
      assert.deepEqual(await state.account(new Date()), {
        creditsRemaining: 0,
        creditsReserved: 0,
        trialCreditsRemaining: 0,
        trialExpiresAt: null,
      });

      worker.child.kill('SIGTERM');
      assert.equal(await worker.exited, 0, worker.output());
      assert.deepEqual(await new PgJobQueue(state.db).fleet(new Date(), 60), [], 'a stopped worker leaves the fleet');
    } finally {
      worker.child.kill('SIGKILL');
      await state.close();
      if (dir) await rm(dir, { recursive: true, force: true });
    }
  });
}

test('a worker without a database, and serve with a database it cannot reach, are refused in words', { skip }, () => {
  const worker = spawnSync(process.execPath, ['--import', 'tsx', CLI, 'worker'], {
    encoding: 'utf8',
    env: { ...process.env, FITTINGROOM_DATABASE_URL: '' },
  });
  assert.equal(worker.status, 1);
  assert.match(worker.stderr, /a worker needs --database postgres:\/\/… \(or FITTINGROOM_DATABASE_URL\)/);
  const serve = spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      CLI,
      'serve',
      '--database',
      'postgresql://shop:s3cret@nowhere.invalid/x',
      '--port',
      '0',
      '--builtin-engines',
      'false',
    ],
    { encoding: 'utf8' },
  );
  assert.equal(serve.status, 1);
  assert.match(serve.stderr, /^fittingroom: the database postgresql:\/\/shop:\*\*\*@nowhere\.invalid\/x could not be opened: /);
  assert.doesNotMatch(serve.stderr, /s3cret/, 'the password is not printed');
});
