/**
 * The try-on throughput benchmark (`npm run bench:throughput`): completed
 * try-ons per minute on the real warp engine, over HTTP, with 1, 2 and 4
 * concurrent clients, for the appliance run with one engine worker and with
 * one per core. Each client submits a fixture person and garment, waits for
 * the result (`?wait=`), and submits the next.
 *
 * Each appliance runs in a child process (`server/index.ts`, as in
 * production) with only the built-in engines; a warm-up with the most clients
 * starts every engine process before anything is timed. All appliances are
 * up at once (an idle one costs no CPU) and the measurements alternate
 * between them, so load from other work on the machine falls on each alike.
 *
 * Flags: `--count N` try-ons per measurement (default 24), `--runs N`
 * measurements per setting (default 3; the table shows their median),
 * `--workers 1,2` engine worker counts (default 1 and the number of cores),
 * `--clients 1,2,4`.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { BenchClient } from './helpers/http-client.ts';
import { cpuMs, rssMiB, startServerChild, type ServerChild } from './helpers/server-process.ts';
import { median, summarize } from './helpers/stats.ts';

const FIXTURES = resolve(import.meta.dirname, '../../shared/fixtures');
/** The API's categories for the manifest's. */
const CATEGORY: Record<string, string> = { upper: 'top', lower: 'bottom', dress: 'dress' };
/** Distinct person × garment pairs tried in the warm-up; those the engine refuses are left out of the measurements. */
const CANDIDATE_PAIRS = 16;
const WAIT_SECONDS = 120;
const MEMORY_SAMPLE_MS = 250;

interface Manifest {
  images: { file: string; kind: 'person' | 'garment'; category?: string }[];
}

interface Status {
  genId: string;
  status: 'pending' | 'complete' | 'failed' | 'canceled';
  error?: { code: string };
}

interface Pair {
  name: string;
  body: Buffer;
}

interface Measurement {
  perMinute: number;
  /** CPU per try-on of the appliance's process and of its engine hosts, ms. */
  applianceCpuMs: number;
  engineCpuMs: number;
  latencyMs: number[];
  failed: string[];
}

/** Person × garment pairs, walking both lists so that consecutive pairs differ in both. */
function fixturePairs(): Pair[] {
  const manifest = JSON.parse(readFileSync(join(FIXTURES, 'manifest.json'), 'utf8')) as Manifest;
  const people = manifest.images.filter((image) => image.kind === 'person');
  const garments = manifest.images.filter((image) => image.kind === 'garment');
  const base64 = (file: string) => readFileSync(join(FIXTURES, file)).toString('base64');
  return Array.from({ length: CANDIDATE_PAIRS }, (_, k) => {
    const person = people[k % people.length]!;
    const garment = garments[(k * 4) % garments.length]!;
    const body = {
      selfie: base64(person.file),
      items: [base64(garment.file)],
      categories: [CATEGORY[garment.category ?? 'upper'] ?? 'auto'],
      size: 'M',
      outputFormat: 'jpeg',
    };
    return { name: `${person.file} + ${garment.file}`, body: Buffer.from(JSON.stringify(body)) };
  });
}

/** Submits one try-on and waits until it is terminal. */
async function tryOn(client: BenchClient, body: Buffer): Promise<{ ms: number; status: Status }> {
  const started = performance.now();
  const { data } = await client.json<{ genId: string }>('POST', '/api/v1/try-on', 202, body);
  for (;;) {
    const { data: status } = await client.json<Status>('GET', `/api/v1/try-on/${data.genId}?wait=${WAIT_SECONDS}`, 200);
    if (status.status !== 'pending') return { ms: performance.now() - started, status };
  }
}

/** `count` try-ons by `clients` clients at once, each taking the next pair in turn. */
async function measure(client: BenchClient, pairs: Pair[], clients: number, count: number): Promise<Measurement> {
  let next = 0;
  const latencyMs: number[] = [];
  const failed: string[] = [];
  const started = performance.now();
  const worker = async (): Promise<void> => {
    while (next < count) {
      const pair = pairs[next++ % pairs.length]!;
      const { ms, status } = await tryOn(client, pair.body);
      latencyMs.push(ms);
      if (status.status !== 'complete') failed.push(`${pair.name}: ${status.error?.code ?? status.status}`);
    }
  };
  await Promise.all(Array.from({ length: clients }, worker));
  return { perMinute: (count * 60_000) / (performance.now() - started), applianceCpuMs: 0, engineCpuMs: 0, latencyMs, failed };
}

/** The appliance's process and every process under it (the engine hosts), appliance first. */
function processTree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // The process ended while we looked.
    }
  }
  const tree: number[] = [];
  const stack = [pid];
  while (stack.length > 0) {
    const current = stack.pop()!;
    tree.push(current);
    stack.push(...(children.get(current) ?? []));
  }
  return tree;
}

/** Resident memory of the appliance and its engine hosts, in MiB. */
function treeRssMiB(pid: number): number {
  const rss = processTree(pid).map((process) => safely(() => rssMiB(process)));
  return Math.round(rss.reduce((sum, value) => sum + value, 0));
}

/** CPU milliseconds so far of the appliance's own process and of its engine hosts (live ones). */
function treeCpuMs(pid: number): { appliance: number; engines: number } {
  const [own, ...hosts] = processTree(pid);
  return { appliance: safely(() => cpuMs(own!)), engines: hosts.reduce((sum, host) => sum + safely(() => cpuMs(host)), 0) };
}

/** A /proc reading, or 0 when the process ended while we looked. */
function safely(read: () => number): number {
  try {
    const value = read();
    return Number.isFinite(value) ? value : 0;
  } catch {
    return 0;
  }
}

async function startAppliance(workers: number): Promise<ServerChild> {
  process.env.FITTINGROOM_ENGINE_WORKERS = String(workers);
  return startServerChild({ engines: [] });
}

/** Every pair once, `clients` at a time, so every engine process has started and loaded; returns the refused pairs. */
async function warmUp(client: BenchClient, pairs: Pair[], clients: number): Promise<{ pair: Pair; why: string }[]> {
  const refused: { pair: Pair; why: string }[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < pairs.length) {
      const pair = pairs[next++]!;
      const { status } = await tryOn(client, pair.body);
      if (status.status !== 'complete') refused.push({ pair, why: status.error?.code ?? status.status });
    }
  };
  await Promise.all(Array.from({ length: clients }, worker));
  return refused;
}

function table(headers: string[], rows: (string | number)[][]): string {
  const text = rows.map((row) => row.map(String));
  const widths = headers.map((header, i) => Math.max(header.length, ...text.map((row) => row[i]?.length ?? 0)));
  const line = (cells: string[]) => `| ${cells.map((cell, i) => cell.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(headers), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...text.map(line)].join('\n');
}

const list = (text: string): number[] => text.split(',').map((item) => Number(item.trim()));
const round = (value: number, digits = 1): number => Math.round(value * 10 ** digits) / 10 ** digits;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      count: { type: 'string', default: '24' },
      runs: { type: 'string', default: '3' },
      workers: { type: 'string', default: [...new Set([1, availableParallelism()])].join(',') },
      clients: { type: 'string', default: '1,2,4' },
    },
  });
  const count = Number(values.count);
  const runs = Number(values.runs);
  const workerCounts = list(values.workers);
  const clientCounts = list(values.clients);
  const warmupClients = Math.max(...clientCounts);
  console.log(
    `machine: ${availableParallelism()} cores (${cpus()[0]?.model ?? 'unknown CPU'}), ${round(totalmem() / 1024 ** 3)} GiB, node ${process.version}; load average ${loadavg()
      .map((l) => round(l, 2))
      .join(' ')}`,
  );
  console.log(`${count} try-ons per measurement, ${runs} measurements per setting (median shown)`);

  // One appliance per worker count, all started and warmed up first; the measurements then alternate between
  // them, so that load from elsewhere on the machine falls on every setting alike.
  const appliances = new Map<number, { server: ServerChild; client: BenchClient }>();
  const results = new Map<string, { measurements: Measurement[]; peakRss: number }>();
  let pairs = fixturePairs();
  try {
    for (const workers of workerCounts) {
      const server = await startAppliance(workers);
      const client = new BenchClient(server.url, server.adminKey, 64);
      appliances.set(workers, { server, client });
      const refused = await warmUp(client, pairs, warmupClients);
      if (refused.length > 0) {
        console.log(`left out (refused in the warm-up): ${refused.map((r) => `${r.pair.name} (${r.why})`).join('; ')}`);
        pairs = pairs.filter((pair) => !refused.some((r) => r.pair === pair));
      }
    }
    for (let run = 0; run < runs; run++) {
      for (const clients of clientCounts) {
        for (const workers of workerCounts) {
          const { server, client } = appliances.get(workers)!;
          const key = `${workers}/${clients}`;
          const entry = results.get(key) ?? { measurements: [], peakRss: 0 };
          results.set(key, entry);
          const sampler = setInterval(() => {
            entry.peakRss = Math.max(entry.peakRss, treeRssMiB(server.pid));
          }, MEMORY_SAMPLE_MS);
          const cpuBefore = treeCpuMs(server.pid);
          const measurement = await measure(client, pairs, clients, count);
          const cpuAfter = treeCpuMs(server.pid);
          clearInterval(sampler);
          measurement.applianceCpuMs = (cpuAfter.appliance - cpuBefore.appliance) / count;
          measurement.engineCpuMs = (cpuAfter.engines - cpuBefore.engines) / count;
          entry.measurements.push(measurement);
          console.log(`run ${run + 1}: workers ${workers}, clients ${clients}: ${round(measurement.perMinute)} try-ons/min`);
          if (measurement.failed.length > 0) console.log(`  failed: ${measurement.failed.join('; ')}`);
        }
      }
    }
  } finally {
    for (const { server, client } of appliances.values()) {
      client.close();
      await server.close();
    }
  }

  const rows: (string | number)[][] = [];
  for (const workers of workerCounts) {
    for (const clients of clientCounts) {
      const { measurements, peakRss } = results.get(`${workers}/${clients}`)!;
      const perMinute = measurements.map((m) => m.perMinute);
      const latency = summarize(measurements.flatMap((m) => m.latencyMs));
      rows.push([
        workers,
        clients,
        round(median(perMinute)),
        `${round(Math.min(...perMinute))}–${round(Math.max(...perMinute))}`,
        Math.round(latency.p50),
        Math.round(latency.p90),
        `${Math.round(median(measurements.map((m) => m.applianceCpuMs)))} + ${Math.round(median(measurements.map((m) => m.engineCpuMs)))}`,
        peakRss,
        measurements.flatMap((m) => m.failed).length,
      ]);
    }
  }
  console.log(
    `\nload average at the end: ${loadavg()
      .map((l) => round(l, 2))
      .join(' ')}\n`,
  );
  console.log(
    table(
      [
        'engine workers',
        'clients',
        'try-ons/min (median)',
        'range',
        'latency p50 ms',
        'latency p90 ms',
        'CPU ms per try-on (appliance + engines)',
        'peak RSS, appliance + engines (MiB)',
        'failed',
      ],
      rows,
    ),
  );
}

await main();
