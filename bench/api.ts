/**
 * The API benchmark (`npm run bench:api`): submit latency and throughput with
 * two ~1 MiB JPEGs, status latency (pending and complete), and the cost of
 * 500 idle `wait` clients, against the appliance running in a child process
 * on loopback. Ends with a per-stage breakdown of the submit handler.
 *
 * Flags: `--cpu-prof` writes a V8 CPU profile of the server child to a
 * temporary directory (printed at the end); `--skip-stages` leaves out the
 * stage breakdown.
 */
import { mkdtempSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { BenchClient } from './helpers/http-client.ts';
import { makeBenchImages } from './helpers/inputs.ts';
import { SLOW_ENGINE_ID, benchEngines, cpuMs, rssMiB, startServerChild, threadCount, type ServerChild } from './helpers/server-process.ts';
import { profileSubmitStages, type StageTiming } from './helpers/stages.ts';
import { summarize, type LatencySummary } from './helpers/stats.ts';

const WARMUP = 10;
const SEQUENTIAL = 100;
const CONCURRENT = [
  { concurrency: 4, requests: 160 },
  { concurrency: 8, requests: 240 },
];
const STATUS_GETS = 1000;
const WAITERS = 500;
const WAIT_SECONDS = 15;
const SETTLE_MS = 2000;
const IDLE_WINDOW_MS = 10_000;
const BASELINE_WINDOW_MS = 5000;
// Long enough that the one running job only sleeps for the whole run (engine time excluded).
const SLOW_ENGINE_DELAY_MS = 600_000;

const TARGETS = { submitP50Ms: 15, submitP99Ms: 50, statusP50Ms: 2, waitersCpuPercent: 5 };

interface SubmitReply {
  genId: string;
  status: string;
}

interface StatusReply {
  status: string;
  image?: string;
}

/** CPU of the server child and of this process over a window. */
class CpuWindow {
  private readonly serverStart: number;
  private readonly clientStart = process.cpuUsage();
  private readonly wallStart = performance.now();

  constructor(private readonly pid: number) {
    this.serverStart = cpuMs(pid);
  }

  /** Server and client CPU in % of one core, and the server's CPU milliseconds. */
  end(): { wallMs: number; serverCpuMs: number; serverPercent: number; clientPercent: number } {
    const wallMs = performance.now() - this.wallStart;
    const serverCpuMs = cpuMs(this.pid) - this.serverStart;
    const client = process.cpuUsage(this.clientStart);
    const clientCpuMs = (client.user + client.system) / 1000;
    const percent = (ms: number) => Math.round((ms / wallMs) * 1000) / 10;
    return { wallMs, serverCpuMs, serverPercent: percent(serverCpuMs), clientPercent: percent(clientCpuMs) };
  }
}

async function submit(client: BenchClient, body: Buffer): Promise<{ genId: string; ms: number }> {
  const { data, ms } = await client.json<SubmitReply>('POST', '/api/v1/try-on', 202, body);
  return { genId: data.genId, ms };
}

async function sequentialSubmits(server: ServerChild, client: BenchClient, body: Buffer, genIds: string[]) {
  for (let i = 0; i < WARMUP; i++) genIds.push((await submit(client, body)).genId);
  const window = new CpuWindow(server.pid);
  const samples: number[] = [];
  for (let i = 0; i < SEQUENTIAL; i++) {
    const { genId, ms } = await submit(client, body);
    genIds.push(genId);
    samples.push(ms);
  }
  const cpu = window.end();
  return { latency: summarize(samples), serverCpuMsPerSubmit: round(cpu.serverCpuMs / SEQUENTIAL, 1), clientPercent: cpu.clientPercent };
}

async function concurrentSubmits(
  server: ServerChild,
  client: BenchClient,
  body: Buffer,
  genIds: string[],
  concurrency: number,
  requests: number,
) {
  const samples: number[] = [];
  let next = 0;
  const window = new CpuWindow(server.pid);
  const worker = async () => {
    while (next < requests) {
      next++;
      const { genId, ms } = await submit(client, body);
      genIds.push(genId);
      samples.push(ms);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const cpu = window.end();
  return {
    concurrency,
    requests,
    submitsPerSecond: round((requests * 1000) / cpu.wallMs, 1),
    latency: summarize(samples),
    serverCpuPercent: cpu.serverPercent,
    clientCpuPercent: cpu.clientPercent,
  };
}

async function statusLatency(client: BenchClient, genId: string, expected: string): Promise<{ latency: LatencySummary; bytes: number }> {
  const path = `/api/v1/try-on/${genId}`;
  const first = await client.json<StatusReply>('GET', path, 200);
  if (first.data.status !== expected) throw new Error(`${genId} is ${first.data.status}, expected ${expected}`);
  const bytes = Buffer.byteLength(JSON.stringify(first.data));
  for (let i = 0; i < 20; i++) await client.send('GET', path);
  const samples: number[] = [];
  for (let i = 0; i < STATUS_GETS; i++) {
    const reply = await client.send('GET', path);
    if (reply.status !== 200) throw new Error(`GET ${path}: ${reply.status}`);
    samples.push(reply.ms);
  }
  return { latency: summarize(samples), bytes };
}

async function completeGeneration(client: BenchClient, body: Buffer): Promise<string> {
  const fastBody = Buffer.from(JSON.stringify({ ...(JSON.parse(body.toString('utf8')) as object), engine: 'fast' }));
  const { genId } = await submit(client, fastBody);
  const { data } = await client.json<StatusReply>('GET', `/api/v1/try-on/${genId}?wait=60`, 200);
  if (data.status !== 'complete') throw new Error(`the fast engine left ${genId} ${data.status}`);
  return genId;
}

async function idleWaiters(server: ServerChild, genIds: string[]) {
  const baseline = new CpuWindow(server.pid);
  await sleep(BASELINE_WINDOW_MS);
  const idle = baseline.end();

  const rssBefore = rssMiB(server.pid);
  // A separate agent, so the 500 long requests never queue behind or block other calls.
  const waitClient = new BenchClient(server.url, server.adminKey, WAITERS + 16);
  const lateness: number[] = [];
  const sentAt: number[] = [];
  const returnedAt: number[] = [];
  let wrong = 0;
  const waiters = genIds.slice(-WAITERS).map(async (genId) => {
    const reply = await waitClient.send('GET', `/api/v1/try-on/${genId}?wait=${WAIT_SECONDS}`);
    if (reply.status !== 200 || reply.headers['retry-after'] !== '1' || !reply.body.includes('"status":"pending"')) wrong++;
    lateness.push(reply.endedAt - reply.sentAt - WAIT_SECONDS * 1000);
    sentAt.push(reply.sentAt);
    returnedAt.push(reply.endedAt);
  });
  await sleep(SETTLE_MS);
  const rssWaiting = rssMiB(server.pid);
  const window = new CpuWindow(server.pid);
  await sleep(IDLE_WINDOW_MS);
  const waiting = window.end();
  const rssAfterWindow = rssMiB(server.pid);
  await Promise.all(waiters);
  waitClient.close();
  const spread = (times: number[]) => round(Math.max(...times) - Math.min(...times), 1);
  return {
    waiters: genIds.slice(-WAITERS).length,
    waitSeconds: WAIT_SECONDS,
    baselineCpuPercent: idle.serverPercent,
    waitingCpuPercent: waiting.serverPercent,
    waitingClientCpuPercent: waiting.clientPercent,
    rssBeforeMiB: rssBefore,
    rssWaitingMiB: rssWaiting,
    rssAfterWindowMiB: rssAfterWindow,
    lateness: summarize(lateness),
    sendSpreadMs: spread(sentAt),
    returnSpreadMs: spread(returnedAt),
    wrongReplies: wrong,
  };
}

function round(value: number, digits = 2): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

function table(headers: string[], rows: (string | number)[][]): string {
  const text = rows.map((row) => row.map(String));
  const widths = headers.map((header, i) => Math.max(header.length, ...text.map((row) => row[i]?.length ?? 0)));
  const line = (cells: string[]) => `| ${cells.map((cell, i) => cell.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(headers), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...text.map(line)].join('\n');
}

const verdict = (ok: boolean) => (ok ? 'met' : 'NOT met');

async function main(): Promise<void> {
  const args = new Set(process.argv.slice(2));
  const started = performance.now();
  const profileDir = args.has('--cpu-prof') ? mkdtempSync(join(tmpdir(), 'fittingroom-cpuprof-')) : null;

  const { selfie, item } = await makeBenchImages();
  // Named, not left to the default: the default is the best ready engine, which on an appliance with the fast
  // warp engine built in is warp, and the API's own costs would be timed with warp's inside them.
  const body = Buffer.from(
    JSON.stringify({ selfie: selfie.bytes.toString('base64'), items: [item.bytes.toString('base64')], size: 'M', engine: SLOW_ENGINE_ID }),
  );
  console.log(
    `inputs: selfie ${selfie.bytes.length} B ${selfie.width}×${selfie.height} (q${selfie.quality}, grain ${selfie.grain}); item ${item.bytes.length} B ${item.width}×${item.height} (q${item.quality}, grain ${item.grain}); body ${body.length} B`,
  );
  console.log(`machine: ${cpus().length} cores, ${cpus()[0]?.model ?? 'unknown CPU'}, node ${process.version}`);

  const server = await startServerChild({
    engines: benchEngines(SLOW_ENGINE_DELAY_MS),
    execArgv: profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
  });
  const client = new BenchClient(server.url, server.adminKey, 64);
  const genIds: string[] = [];
  let results;
  try {
    const rssStart = rssMiB(server.pid);
    const sequential = await sequentialSubmits(server, client, body, genIds);
    console.log(`sequential submits done: p50 ${sequential.latency.p50} ms`);
    const concurrent = [];
    for (const { concurrency, requests } of CONCURRENT) {
      concurrent.push(await concurrentSubmits(server, client, body, genIds, concurrency, requests));
      console.log(`concurrency ${concurrency} done`);
    }
    const pending = await statusLatency(client, genIds[genIds.length - 1]!, 'pending');
    const completeId = await completeGeneration(client, body);
    const complete = await statusLatency(client, completeId, 'complete');
    console.log('status done; idle waiters next');
    const waiters = await idleWaiters(server, genIds);
    results = {
      rssStartMiB: rssStart,
      rssEndMiB: rssMiB(server.pid),
      serverThreads: threadCount(server.pid),
      sequential,
      concurrent,
      status: { pending, complete },
      waiters,
    };
  } finally {
    client.close();
    await server.close();
  }

  const stages: StageTiming[] = args.has('--skip-stages')
    ? []
    : await profileSubmitStages(body, { runs: 20, stateSizes: [0, 1000, 10_000] });

  const { sequential, concurrent, status, waiters } = results;
  console.log('\n## Results vs targets\n');
  console.log(
    table(
      ['measure', 'value', 'target', 'verdict'],
      [
        [
          'submit p50 (sequential, n=100)',
          `${sequential.latency.p50} ms`,
          `< ${TARGETS.submitP50Ms} ms`,
          verdict(sequential.latency.p50 < TARGETS.submitP50Ms),
        ],
        [
          'submit p99 (sequential, n=100)',
          `${sequential.latency.p99} ms`,
          `< ${TARGETS.submitP99Ms} ms`,
          verdict(sequential.latency.p99 < TARGETS.submitP99Ms),
        ],
        [
          'status p50 (pending)',
          `${status.pending.latency.p50} ms`,
          `< ${TARGETS.statusP50Ms} ms`,
          verdict(status.pending.latency.p50 < TARGETS.statusP50Ms),
        ],
        [
          'status p50 (complete, image inline)',
          `${status.complete.latency.p50} ms`,
          `(< ${TARGETS.statusP50Ms} ms)`,
          verdict(status.complete.latency.p50 < TARGETS.statusP50Ms),
        ],
        [
          `${waiters.waiters} idle waiters, server CPU`,
          `${waiters.waitingCpuPercent} % of a core`,
          `< ${TARGETS.waitersCpuPercent} %`,
          verdict(waiters.waitingCpuPercent < TARGETS.waitersCpuPercent),
        ],
      ],
    ),
  );
  console.log('\n## Submit latency (ms)\n');
  console.log(
    table(
      ['run', 'n', 'p50', 'p90', 'p99', 'max', 'submits/s', 'server CPU', 'client CPU'],
      [
        [
          'sequential',
          sequential.latency.n,
          sequential.latency.p50,
          sequential.latency.p90,
          sequential.latency.p99,
          sequential.latency.max,
          round(1000 / sequential.latency.p50, 1),
          `${sequential.serverCpuMsPerSubmit} ms/submit`,
          `${sequential.clientPercent} %`,
        ],
        ...concurrent.map((run) => [
          `concurrency ${run.concurrency}`,
          run.latency.n,
          run.latency.p50,
          run.latency.p90,
          run.latency.p99,
          run.latency.max,
          run.submitsPerSecond,
          `${run.serverCpuPercent} %`,
          `${run.clientCpuPercent} %`,
        ]),
      ],
    ),
  );
  console.log('\n## Status latency (ms), sequential GETs\n');
  console.log(
    table(
      ['generation', 'n', 'reply bytes', 'p50', 'p90', 'p99', 'max'],
      (['pending', 'complete'] as const).map((kind) => [
        kind,
        status[kind].latency.n,
        status[kind].bytes,
        status[kind].latency.p50,
        status[kind].latency.p90,
        status[kind].latency.p99,
        status[kind].latency.max,
      ]),
    ),
  );
  console.log(`\n## ${waiters.waiters} idle wait clients (wait=${waiters.waitSeconds})\n`);
  console.log(
    table(
      ['measure', 'value'],
      [
        ['server CPU, no waiters (baseline, 5 s)', `${waiters.baselineCpuPercent} % of a core`],
        ['server CPU, 500 waiting (10 s window)', `${waiters.waitingCpuPercent} % of a core`],
        ['client CPU in the same window', `${waiters.waitingClientCpuPercent} % of a core`],
        [
          'server RSS before / waiting / end of window',
          `${waiters.rssBeforeMiB} / ${waiters.rssWaitingMiB} / ${waiters.rssAfterWindowMiB} MiB`,
        ],
        [
          'return after the bound, from each request sent (p50 / p99 / max)',
          `${waiters.lateness.p50} / ${waiters.lateness.p99} / ${waiters.lateness.max} ms`,
        ],
        ['first to last request sent (spread)', `${waiters.sendSpreadMs} ms`],
        ['first to last reply back (spread)', `${waiters.returnSpreadMs} ms`],
        ['replies not 200 pending with Retry-After: 1', String(waiters.wrongReplies)],
      ],
    ),
  );
  if (stages.length > 0) {
    console.log('\n## Submit handler stages (in-process, medians)\n');
    console.log(
      table(
        ['stage', 'n', 'median ms', 'p90 ms', 'note'],
        stages.map((row) => [row.stage, row.n, row.medianMs, row.p90Ms, row.note ?? '']),
      ),
    );
  }
  console.log(
    `\nserver RSS ${results.rssStartMiB} MiB at start, ${results.rssEndMiB} MiB at end; ${results.serverThreads} threads; total run ${round((performance.now() - started) / 1000, 1)} s`,
  );
  if (profileDir) console.log(`server CPU profile: ${profileDir}`);
  console.log(
    `BENCH_API_JSON ${JSON.stringify({
      date: new Date().toISOString(),
      cores: cpus().length,
      cpu: cpus()[0]?.model,
      node: process.version,
      inputs: {
        selfie: { bytes: selfie.bytes.length, width: selfie.width, height: selfie.height, quality: selfie.quality },
        item: { bytes: item.bytes.length, width: item.width, height: item.height, quality: item.quality },
        bodyBytes: body.length,
      },
      targets: TARGETS,
      ...results,
      stages,
    })}`,
  );
}

main().catch((error: unknown) => {
  console.error('bench:api failed:', error);
  process.exitCode = 1;
});
