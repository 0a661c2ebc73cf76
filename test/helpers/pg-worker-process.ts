/**
 * The processes of the multi-node test and bench on one PostgreSQL database, run as real children (`node --import
 * tsx`) so that one can be SIGKILLed:
 * - `worker URL --id w1 --job-ms 60 --lease 2 --concurrency 2 [--wait-go]`: a WorkerLoop whose test job sleeps for a
 *   fixed time and stores a fake result naming the worker; with `--wait-go` it starts claiming only once a line
 *   arrives on stdin. SIGTERM stops it gracefully.
 * - `submit URL --prefix s1 --count 250 [--parallel 4]`: calls PgState.submit directly, as an API process's submit
 *   does after its HTTP work (the bench measures the queue without the HTTP layer).
 * - `submit-http BASE_URL --key KEY --prefix s1 --count 250 [--parallel 4]`: a client of a real API process
 *   (`serve --database`), POSTing try-ons for the test engine, each with its own Idempotency-Key.
 * Each prints one JSON line per event on stdout: `ready`, the worker loop's events, `submitted` (acknowledged), `done`.
 * The parent's side is `startPgProcess()`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { hostname } from 'node:os';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import type { NewGeneration } from '../../server/jobs/generations.ts';
import { PgState } from '../../server/state/postgres/gateway.ts';
import { PgJobQueue } from '../../server/state/postgres/jobs.ts';
import { WorkerLoop } from '../../server/state/worker-loop.ts';
import { plainParams, submission } from './inputs.ts';

const SCRIPT = fileURLToPath(import.meta.url);
/** The engine id the test workers run and the submitters ask for. */
export const TEST_ENGINE = 'test-sleep';

/** One line a child printed. */
export type ProcessEvent = { type: string; id?: string; [field: string]: unknown };

export interface PgProcess {
  child: ChildProcess;
  events: ProcessEvent[];
  /** Called on every event as it arrives. */
  onEvent: (listener: (event: ProcessEvent) => void) => void;
  /** Resolves once the child has exited and its output is read, with its exit code (null when killed). */
  exited: Promise<number | null>;
  /** Resolves on the first event of that type. */
  waitFor(type: string): Promise<ProcessEvent>;
  stderr(): string;
}

/** Starts `pg-worker-process.ts` with `args` (`['worker', url, '--id', 'w1', …]`). */
export function startPgProcess(args: string[]): PgProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  const events: ProcessEvent[] = [];
  const listeners: ((event: ProcessEvent) => void)[] = [];
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const lines = createInterface({ input: child.stdout! });
  lines.on('line', (line) => {
    const event = JSON.parse(line) as ProcessEvent;
    events.push(event);
    for (const listener of listeners) listener(event);
  });
  const closed = new Promise<void>((done) => lines.once('close', done));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => closed.then(() => done(code))));
  return {
    child,
    events,
    onEvent: (listener) => listeners.push(listener),
    exited,
    waitFor(type) {
      const seen = events.find((event) => event.type === type);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        listeners.push((event) => event.type === type && resolve(event));
        void exited.then((code) => reject(new Error(`${args[0]} exited (${code}) before "${type}": ${stderr}`)));
      });
    },
    stderr: () => stderr,
  };
}

function print(event: ProcessEvent): void {
  process.stdout.write(JSON.stringify(event) + '\n');
}

/** A try-on as a submitter sends it. */
export function testGeneration(id: string): NewGeneration {
  const image = (file: string) => ({ file, format: 'jpeg' as const, width: 768, height: 1024 });
  return {
    id,
    keyId: 'key_bench',
    engine: TEST_ENGINE,
    params: plainParams(),
    inputs: { selfie: image(`images/${id}/selfie.jpg`), items: [image(`images/${id}/item-0.jpg`)] },
    retentionDays: 7,
  };
}

async function worker(url: string, options: Record<string, string | boolean | undefined>): Promise<void> {
  const id = String(options.id);
  const jobMs = Number(options['job-ms'] ?? 60);
  const concurrency = Number(options.concurrency ?? 1);
  const state = await PgState.open(url, { maxConnections: concurrency + 2 });
  const loop = new WorkerLoop({
    queue: new PgJobQueue(state.db),
    worker: { id, host: hostname(), pid: process.pid, engines: [TEST_ENGINE], device: 'cpu' },
    concurrency,
    leaseSeconds: Number(options.lease ?? 2),
    heartbeatSeconds: 1,
    idleMs: { first: 10, last: 100 },
    onEvent: (event) => print({ ...event }),
    run: async (record, signal) => {
      await sleep(jobMs, undefined, { signal });
      return { file: `images/${record.id}/result-${id}.jpg`, format: 'jpeg', width: 768, height: 1024 };
    },
  });
  process.once('SIGTERM', () => {
    void loop
      .stop()
      .then(() => state.close())
      .then(() => process.exit(0));
  });
  print({ type: 'ready' });
  if (options['wait-go']) await new Promise((go) => createInterface({ input: process.stdin }).once('line', go));
  await loop.start();
  print({ type: 'started' });
}

async function submit(url: string, options: Record<string, string | boolean | undefined>): Promise<void> {
  const count = Number(options.count);
  const parallel = Number(options.parallel ?? 4);
  const prefix = String(options.prefix);
  const state = await PgState.open(url, { maxConnections: parallel });
  print({ type: 'ready' });
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const id = `gen_${prefix}_${String(next++).padStart(4, '0')}`;
      await state.submit(testGeneration(id), new Date());
      print({ type: 'submitted', id });
    }
  };
  await Promise.all(Array.from({ length: parallel }, lane));
  print({ type: 'done', count });
  await state.close();
}

async function submitHttp(baseUrl: string, options: Record<string, string | boolean | undefined>): Promise<void> {
  const count = Number(options.count);
  const parallel = Number(options.parallel ?? 4);
  const prefix = String(options.prefix);
  const body = JSON.stringify(await submission({ engine: TEST_ENGINE }));
  print({ type: 'ready' });
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const n = next++;
      const response = await fetch(`${baseUrl}/api/v1/try-on`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${String(options.key)}`,
          'content-type': 'application/json',
          'idempotency-key': `${prefix}-${n}`,
        },
        body,
      });
      const text = await response.text();
      if (response.status !== 202) throw new Error(`submit ${n} to ${baseUrl}: ${response.status} ${text}`);
      print({ type: 'submitted', id: (JSON.parse(text) as { genId: string }).genId });
    }
  };
  await Promise.all(Array.from({ length: parallel }, lane));
  print({ type: 'done', count });
}

async function main(): Promise<void> {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      id: { type: 'string' },
      'job-ms': { type: 'string' },
      lease: { type: 'string' },
      concurrency: { type: 'string' },
      'wait-go': { type: 'boolean' },
      prefix: { type: 'string' },
      count: { type: 'string' },
      parallel: { type: 'string' },
      key: { type: 'string' },
    },
  });
  const [mode, url] = positionals;
  if (!url) throw new Error('usage: pg-worker-process.ts worker|submit|submit-http URL [options]');
  if (mode === 'worker') await worker(url, values);
  else if (mode === 'submit') await submit(url, values);
  else if (mode === 'submit-http') await submitHttp(url, values);
  else throw new Error(`unknown mode ${mode}`);
}

if (process.argv[1] === SCRIPT) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
