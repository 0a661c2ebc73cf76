/**
 * The state-size benchmark (`npm run bench:state`): does an appliance with a long history answer as fast as a new
 * one? For each history size it seeds a data directory with that many finished try-ons (through the store and the
 * real state functions, as an appliance that ran them would have written them), starts the appliance in a child
 * process, and measures submit latency (100 sequential, after 10 warm-up, with the API bench's two ~1 MiB JPEGs on
 * an engine that completes at once, so finished try-ons keep moving) while a second client polls `/health` every
 * 25 ms to catch stalls of the event loop. Prints a table and a JSON line.
 *
 * Flags: `--sizes 0,30000` (history sizes, default 0,10000,30000).
 */
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { BenchClient } from './helpers/http-client.ts';
import { makeBenchImages } from './helpers/inputs.ts';
import { benchEngines, startServerChild } from './helpers/server-process.ts';
import { summarize, type LatencySummary } from './helpers/stats.ts';
import { newId } from '../server/kernel/ids.ts';
import { completeGeneration, createGeneration } from '../server/jobs/generations.ts';
import { Store } from '../server/store/db.ts';

const WARMUP = 10;
const SUBMITS = 100;
const HEALTH_EVERY_MS = 25;
const TARGETS = { submitRatio: 1.5, healthStallMs: 100 };

interface Row {
  finished: number;
  /** The first start on the seeded directory (moving the history out of the state included). */
  startMs: number;
  /** A second start, once the history has moved. */
  restartMs: number;
  stateBytesAfterStart: number;
  archiveBytes: number;
  submit: LatencySummary;
  health: LatencySummary;
}

function sizesArg(): number[] {
  const at = process.argv.indexOf('--sizes');
  if (at < 0) return [0, 10_000, 30_000];
  return process.argv[at + 1]!.split(',').map(Number);
}

async function bytesOf(path: string): Promise<number> {
  try {
    const entry = await stat(path);
    if (!entry.isDirectory()) return entry.size;
    let total = 0;
    for (const name of await readdir(path)) total += await bytesOf(join(path, name));
    return total;
  } catch {
    return 0;
  }
}

/** A data directory whose appliance finished `count` try-ons over the last six days, and its admin key. */
async function seed(count: number, body: Buffer): Promise<{ dataDir: string; adminKey: string }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'fittingroom-bench-state-'));
  const first = await startServerChild({ engines: benchEngines(0), dataDir });
  const client = new BenchClient(first.url, first.adminKey);
  // One real try-on gives the records their shape (params, image references).
  const { data } = await client.json<{ genId: string }>('POST', '/api/v1/try-on', 202, body);
  await client.json('GET', `/api/v1/try-on/${data.genId}?wait=30`, 200);
  client.close();
  await first.close();
  const store = await Store.open(dataDir);
  const model = store.state.generations[data.genId]!;
  const start = Date.now() - 6 * 86_400_000;
  await store.mutate((state) => {
    for (let i = 0; i < count; i++) {
      const at = new Date(start + Math.floor((i * 6 * 86_400_000) / Math.max(1, count)));
      const id = newId('gen', at.getTime());
      createGeneration(
        state,
        { id, keyId: model.keyId, engine: model.engine, params: model.params, inputs: model.inputs!, retentionDays: 7 },
        at,
      );
      completeGeneration(state, id, model.result!, new Date(at.getTime() + 800));
    }
  });
  await store.close();
  return { dataDir, adminKey: first.adminKey };
}

async function measure(count: number, body: Buffer): Promise<Row> {
  const { dataDir, adminKey } = await seed(count, body);
  const started = performance.now();
  const server = await startServerChild({ engines: benchEngines(0), dataDir, adminKey });
  const startMs = performance.now() - started;
  const stateBytesAfterStart = await bytesOf(join(dataDir, 'state.json'));
  const archiveBytes = await bytesOf(join(dataDir, 'archive'));
  const client = new BenchClient(server.url, server.adminKey);
  const poller = new BenchClient(server.url, server.adminKey);
  const health: number[] = [];
  let polling = true;
  const polls = (async () => {
    while (polling) {
      health.push((await poller.send('GET', '/api/v1/health')).ms);
      await sleep(HEALTH_EVERY_MS);
    }
  })();
  const samples: number[] = [];
  try {
    for (let i = 0; i < WARMUP + SUBMITS; i++) {
      const { ms } = await client.json('POST', '/api/v1/try-on', 202, body);
      if (i >= WARMUP) samples.push(ms);
    }
  } finally {
    polling = false;
    await polls;
    client.close();
    poller.close();
    await server.close();
  }
  const restarted = performance.now();
  await (await startServerChild({ engines: benchEngines(0), dataDir, adminKey })).close();
  const restartMs = performance.now() - restarted;
  await rm(dataDir, { recursive: true, force: true });
  return {
    finished: count,
    startMs: Math.round(startMs),
    restartMs: Math.round(restartMs),
    stateBytesAfterStart,
    archiveBytes,
    submit: summarize(samples),
    health: summarize(health),
  };
}

async function main(): Promise<void> {
  const { selfie, item } = await makeBenchImages();
  const body = Buffer.from(
    JSON.stringify({ selfie: selfie.bytes.toString('base64'), items: [item.bytes.toString('base64')], size: 'M', engine: 'fast' }),
  );
  console.log(`machine: ${cpus().length} cores, ${cpus()[0]?.model.trim()}, node ${process.version}`);
  const rows: Row[] = [];
  for (const count of sizesArg()) {
    rows.push(await measure(count, body));
    const row = rows[rows.length - 1]!;
    console.log(`${count} finished: submit p50 ${row.submit.p50} ms, /health max ${row.health.max} ms`);
  }
  const empty = rows.find((row) => row.finished === 0);
  console.log(
    '\n| finished try-ons | start (ms) | state.json after start | archive | submit p50 / p90 (ms) | vs empty | /health p50 / p99 / max (ms) |',
  );
  console.log('|---|---|---|---|---|---|---|');
  for (const row of rows) {
    const ratio = empty ? (row.submit.p50 / empty.submit.p50).toFixed(2) : 'n/a';
    const mb = (bytes: number) => `${(bytes / 1e6).toFixed(2)} MB`;
    console.log(
      `| ${row.finished} | ${row.startMs} / ${row.restartMs} | ${mb(row.stateBytesAfterStart)} | ${mb(row.archiveBytes)} | ${row.submit.p50} / ${row.submit.p90} | ${ratio}× | ${row.health.p50} / ${row.health.p99} / ${row.health.max} |`,
    );
  }
  console.log(`targets: submit p50 within ${TARGETS.submitRatio}× of empty; no /health reply over ${TARGETS.healthStallMs} ms`);
  console.log(`BENCH_STATE_JSON ${JSON.stringify({ date: new Date().toISOString(), rows })}`);
}

await main();
