/**
 * Several nodes on one PostgreSQL database (issue 16): two real API processes (`serve --database`, no engines of
 * their own), three worker processes, each a WorkerLoop running a test job of fixed length two at a time, and two
 * HTTP clients submitting 500 try-ons, one to each API. One worker is SIGKILLed mid-job. Every acknowledged try-on
 * (a 202) must end exactly once (complete, or failed after three attempts), its credit captured or released exactly
 * once, and the books must balance.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { PgState } from '../../server/state/postgres/gateway.ts';
import { PgJobQueue } from '../../server/state/postgres/jobs.ts';
import { clusterForFile } from '../helpers/pg-cluster.ts';
import { startPgProcess, type PgProcess } from '../helpers/pg-worker-process.ts';
import { startServerProcess, type ServerProcess } from '../helpers/server-process.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const CREDITS = 520;
const PER_SUBMITTER = 250;
const JOB_MS = 60;
const LEASE_SECONDS = 2;
/** The killed worker has settled this many before it dies, so that the others are busy too. */
const KILL_AFTER_SETTLED = 15;
/** How long the 500 try-ons may take to end, after the last submit. */
const DRAIN_TIMEOUT_MS = 45_000;

const { skip, newDatabase } = clusterForFile('workers');

test('500 try-ons over two API processes and three workers, one SIGKILLed mid-job: each ends once, charged once', { skip }, async (t) => {
  // Its own hooks, so that they run before the file's hook stops the cluster: the children first, then the pool.
  const children: PgProcess[] = [];
  t.after(async () => {
    for (const child of children) if (child.child.exitCode === null && child.child.signalCode === null) child.child.kill('SIGKILL');
    await Promise.all(children.map((child) => child.exited));
  });
  const url = await newDatabase();
  const state = await PgState.open(url);
  t.after(() => state.close());
  // The first API process installs the shop (its trial credits too); the second joins it.
  const apis: ServerProcess[] = [];
  t.after(() => Promise.all(apis.map((api) => api.kill('SIGTERM'))));
  apis.push(await startServerProcess(await tempDir('fr-api-'), [], ['--database', url]));
  apis.push(await startServerProcess(await tempDir('fr-api-'), [], ['--database', url]));
  const key = apis[0]!.key;
  await state.redeemVoucher({ id: 'v_fleet', credits: CREDITS, issuedAt: new Date().toISOString() }, 'key_bench', new Date());
  const credits = (await state.account(new Date())).creditsRemaining;

  const workerArgs = (id: string) => [
    'worker',
    url,
    '--id',
    id,
    '--job-ms',
    String(JOB_MS),
    '--lease',
    String(LEASE_SECONDS),
    '--concurrency',
    '2',
  ];
  const workers = ['w1', 'w2', 'w3'].map((id) => startPgProcess(workerArgs(id)));
  children.push(...workers);
  await Promise.all(workers.map((worker) => worker.waitFor('started')));
  const [victim, ...survivors] = workers as [PgProcess, PgProcess, PgProcess];

  // Killed right after it reports a claim: the job has just started its 60 ms.
  let settled = 0;
  const killed = new Promise<void>((done) =>
    victim.onEvent((event) => {
      if (event.type === 'settled') settled++;
      else if (event.type === 'claimed' && settled >= KILL_AFTER_SETTLED && victim.child.signalCode === null) {
        victim.child.kill('SIGKILL');
        done();
      }
    }),
  );

  const submitters = apis.map((api, i) =>
    startPgProcess(['submit-http', api.url, '--key', key, '--prefix', `s${i + 1}`, '--count', String(PER_SUBMITTER)]),
  );
  children.push(...submitters);
  for (const submitter of submitters) assert.equal(await submitter.exited, 0, submitter.stderr());
  await killed;
  await victim.exited;
  const acknowledged = submitters.flatMap((submitter) =>
    submitter.events.filter((event) => event.type === 'submitted').map((event) => event.id!),
  );
  assert.equal(acknowledged.length, 2 * PER_SUBMITTER);

  const deadline = Date.now() + DRAIN_TIMEOUT_MS;
  for (;;) {
    const { rows } = await state.db.query<{ pending: number }>(
      `SELECT count(*)::integer AS pending FROM generations WHERE status = 'pending'`,
    );
    if (rows[0]!.pending === 0) break;
    assert.ok(Date.now() < deadline, `${rows[0]!.pending} try-ons still pending`);
    await sleep(100);
  }
  for (const worker of survivors) worker.child.kill('SIGTERM');
  for (const worker of survivors) assert.equal(await worker.exited, 0, worker.stderr());

  // Every acknowledged try-on is terminal: complete, or failed after its attempts.
  const { rows: generations } = await state.db.query<{
    id: string;
    status: string;
    attempts: number;
    code: string | null;
    file: string | null;
  }>(
    `SELECT id, status, (record ->> 'attempts')::integer AS attempts, record -> 'error' ->> 'code' AS code,
       record -> 'result' ->> 'file' AS file FROM generations`,
  );
  assert.deepEqual(generations.map((row) => row.id).sort(), [...acknowledged].sort());
  for (const row of generations) {
    if (row.status === 'failed')
      assert.ok(row.attempts >= 3 && row.code === 'engine_failed', `${row.id} failed early: ${JSON.stringify(row)}`);
    else assert.equal(row.status, 'complete', `${row.id} is ${row.status}`);
  }

  // Each one's credit reserved once and captured (complete) or released (failed) once.
  const { rows: entries } = await state.db.query<{ gen_id: string; types: string[] }>(
    'SELECT gen_id, array_agg(type ORDER BY seq) AS types FROM ledger WHERE gen_id IS NOT NULL GROUP BY gen_id',
  );
  const ledger = new Map(entries.map((row) => [row.gen_id, row.types]));
  assert.equal(ledger.size, acknowledged.length);
  let captures = 0;
  for (const row of generations) {
    const expected = row.status === 'complete' ? ['reserve', 'capture'] : ['reserve', 'release'];
    assert.deepEqual(ledger.get(row.id), expected, row.id);
    if (row.status === 'complete') captures++;
  }
  const account = await state.account(new Date());
  assert.equal(account.creditsReserved, 0);
  assert.equal(account.creditsRemaining, credits - captures);

  // No worker settled a try-on another one settled; the killed worker's jobs were run again by the others.
  const settledBy = new Map<string, number>();
  for (const worker of workers)
    for (const event of worker.events) if (event.type === 'settled') settledBy.set(event.id!, (settledBy.get(event.id!) ?? 0) + 1);
  for (const [id, times] of settledBy) assert.equal(times, 1, `${id} reported settled ${times} times`);
  assert.ok(settledBy.size >= acknowledged.length - 2, 'only the killed worker may have died between commit and report');

  const claimedByVictim = new Set(victim.events.filter((event) => event.type === 'claimed').map((event) => event.id!));
  for (const event of victim.events) if (event.type === 'settled') claimedByVictim.delete(event.id!);
  assert.ok(claimedByVictim.size >= 1, 'the victim died holding a try-on');
  const byId = new Map(generations.map((row) => [row.id, row]));
  let rerun = 0;
  for (const id of claimedByVictim) {
    const row = byId.get(id)!;
    if (row.file?.endsWith('-w1.jpg')) continue; // committed, then killed before it could say so
    assert.equal(row.attempts, 2, `${id} was claimed again after its lease ran out`);
    assert.match(row.file ?? '', /-w[23]\.jpg$/);
    rerun++;
  }
  assert.ok(rerun >= 1, 'at least one of the killed worker’s try-ons was run again');

  const fleet = await new PgJobQueue(state.db).fleet(new Date(), 60);
  assert.deepEqual(
    fleet.map((member) => member.id),
    ['w1'],
    'the two stopped workers retired; the killed one is only aging out',
  );
  console.log(
    `pg-workers: ${acknowledged.length} try-ons, ${captures} captured, ${claimedByVictim.size} held by the killed worker (${rerun} run again)`,
  );
});
