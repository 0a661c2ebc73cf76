/**
 * The worker-fleet benchmark (`npm run bench:pg-workers`, issue 16): throughput of 1, 2 and 4 worker processes
 * sharing one PostgreSQL database (a throwaway cluster on this machine), each a WorkerLoop claiming one try-on at a
 * time and running a test job of fixed length (a sleep: nothing CPU-bound, so the fleet's cost is the claims,
 * renewals and settles). For each fleet size and run: a fresh database with `perWorker × workers` try-ons submitted,
 * the workers started and connected, then all told to go at once; the time is from go to the last settle. Medians of
 * the runs, the ratio to one worker, and the busiest worker's time per try-on beyond the job itself (the claim, the
 * settle, and the start-up after go spread over its try-ons). Prints a table and a JSON line.
 *
 * Flags: `--workers 1,2,4`, `--runs 3`, `--job-ms 200`, `--per-worker 30`.
 */
import { cpus } from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { median } from './helpers/stats.ts';
import { PgState } from '../server/state/postgres/gateway.ts';
import { postgresSkip, startPgCluster } from '../test/helpers/pg-cluster.ts';
import { startPgProcess, testGeneration, type PgProcess } from '../test/helpers/pg-worker-process.ts';

const { values } = parseArgs({
  options: {
    workers: { type: 'string', default: '1,2,4' },
    runs: { type: 'string', default: '3' },
    'job-ms': { type: 'string', default: '200' },
    'per-worker': { type: 'string', default: '30' },
  },
});
const FLEETS = values.workers.split(',').map(Number);
const RUNS = Number(values.runs);
const JOB_MS = Number(values['job-ms']);
const PER_WORKER = Number(values['per-worker']);

interface Row {
  workers: number;
  tryOns: number;
  /** Try-ons a second, one per run. */
  runs: number[];
  median: number;
  ratio: number;
  /** The most try-ons one worker ran, median of the runs (the fleet ends with its busiest worker). */
  busiest: number;
  /** The busiest worker's time per try-on beyond the job's own JOB_MS, in ms (median of the runs). */
  overheadMs: number;
}

interface Run {
  perSecond: number;
  busiest: number;
  overheadMs: number;
}

async function once(url: string, workers: number): Promise<Run> {
  const tryOns = workers * PER_WORKER;
  const state = await PgState.open(url);
  await state.redeemVoucher({ id: 'v_bench', credits: tryOns, issuedAt: new Date().toISOString() }, 'key_bench', new Date());
  for (let i = 0; i < tryOns; i++) await state.submit(testGeneration(`gen_${String(i).padStart(5, '0')}`), new Date());
  const fleet: PgProcess[] = Array.from({ length: workers }, (_, k) =>
    startPgProcess(['worker', url, '--id', `w${k + 1}`, '--job-ms', String(JOB_MS), '--lease', '10', '--concurrency', '1', '--wait-go']),
  );
  try {
    await Promise.all(fleet.map((worker) => worker.waitFor('ready')));
    let settled = 0;
    const done = new Promise<void>((resolve) => {
      for (const worker of fleet)
        worker.onEvent((event) => {
          if (event.type === 'settled' && ++settled === tryOns) resolve();
        });
    });
    const start = performance.now();
    for (const worker of fleet) worker.child.stdin!.write('go\n');
    await done;
    const seconds = (performance.now() - start) / 1000;
    for (const worker of fleet) worker.child.kill('SIGTERM');
    for (const worker of fleet) if ((await worker.exited) !== 0) throw new Error(`a worker failed: ${worker.stderr()}`);
    const { creditsReserved } = await state.account(new Date());
    if (creditsReserved !== 0) throw new Error(`${creditsReserved} credits still reserved`);
    const busiest = Math.max(...fleet.map((worker) => worker.events.filter((event) => event.type === 'settled').length));
    return { perSecond: tryOns / seconds, busiest, overheadMs: (seconds * 1000) / busiest - JOB_MS };
  } finally {
    for (const worker of fleet) if (worker.child.exitCode === null) worker.child.kill('SIGKILL');
    await state.close();
  }
}

async function main(): Promise<void> {
  const skip = postgresSkip();
  if (skip) throw new Error(skip);
  const cluster = await startPgCluster();
  const rows: Row[] = [];
  try {
    let database = 0;
    for (const workers of FLEETS) {
      const runs: Run[] = [];
      for (let run = 0; run < RUNS; run++) {
        const result = await once(await cluster.createDatabase(`bench_${++database}`), workers);
        runs.push(result);
        console.error(`${workers} worker(s), run ${run + 1}: ${result.perSecond.toFixed(2)} try-ons/s, busiest ran ${result.busiest}`);
      }
      const mid = median(runs.map((run) => run.perSecond));
      rows.push({
        workers,
        tryOns: workers * PER_WORKER,
        runs: runs.map((run) => run.perSecond),
        median: mid,
        ratio: rows[0] ? mid / rows[0].median : 1,
        busiest: median(runs.map((run) => run.busiest)),
        overheadMs: median(runs.map((run) => run.overheadMs)),
      });
    }
  } finally {
    await cluster.stop();
  }
  const ideal = 1000 / JOB_MS;
  console.log(`\nWorker fleet on one PostgreSQL, a ${JOB_MS} ms test job, one try-on at a time per worker; ${cpus().length} cores`);
  console.log(
    '| workers | try-ons a run | try-ons/s (runs) | median | vs 1 worker | ideal | busiest worker ran | its time per try-on beyond the job |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  for (const row of rows) {
    const runs = row.runs.map((value) => value.toFixed(2)).join(', ');
    console.log(
      `| ${row.workers} | ${row.tryOns} | ${runs} | ${row.median.toFixed(2)} | ${row.ratio.toFixed(2)}× | ${(ideal * row.workers).toFixed(2)} | ${row.busiest} | ${row.overheadMs.toFixed(1)} ms |`,
    );
  }
  console.log(JSON.stringify({ bench: 'pg-workers', jobMs: JOB_MS, perWorker: PER_WORKER, cores: cpus().length, rows }));
}

await main();
