/**
 * Runs the appliance in a child process (as in production: a plain Node
 * process, `server/index.ts`), so its CPU time and memory can be read from
 * /proc apart from the load generator's.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');
const COMPOSE_ENGINE = resolve(ROOT, 'test/helpers/engines/compose-engine.ts');
const START_TIMEOUT_MS = 60_000;

/** A running appliance child. */
export interface ServerChild {
  pid: number;
  url: string;
  adminKey: string;
  dataDir: string;
  /** Stops the child (SIGTERM, then SIGKILL) and removes its data directory. */
  close(): Promise<void>;
}

/** The slow test engine's id (the compose test engine's default): what bench submissions name. */
export const SLOW_ENGINE_ID = 'test-compose';

/** Engine specs of the benchmark: a slow default engine, and a fast one on its own device slot. */
export function benchEngines(slowDelayMs: number): unknown[] {
  return [
    { module: COMPOSE_ENGINE, options: { delayMs: slowDelayMs } },
    { module: COMPOSE_ENGINE, options: { id: 'fast', device: 'bench-fast', delayMs: 0 } },
  ];
}

/**
 * Starts `server/index.ts` in a child with an IPC channel; resolves once it reports ready. Without `dataDir` it
 * gets a fresh one; with one, that directory is kept at close and the admin key is read from `adminKey` if given.
 */
export async function startServerChild(options: {
  engines: unknown[];
  execArgv?: string[];
  dataDir?: string;
  adminKey?: string;
}): Promise<ServerChild> {
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'fittingroom-bench-')));
  const args = [
    '--port',
    '0',
    '--data-dir',
    dataDir,
    '--trial-credits',
    '100000',
    '--submits-per-minute',
    '100000000',
    '--max-queue',
    '1000000',
  ];
  const child = fork(resolve(ROOT, 'server/index.ts'), args, {
    cwd: ROOT,
    execArgv: ['--import', 'tsx', ...(options.execArgv ?? [])],
    env: { ...process.env, FITTINGROOM_ENGINES: JSON.stringify(options.engines) },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const port = await readyPort(child);
  const adminKey = options.adminKey ?? (await readFile(join(dataDir, 'first-admin-key'), 'utf8')).trim();
  return {
    pid: child.pid!,
    url: `http://127.0.0.1:${port}`,
    adminKey,
    dataDir,
    async close() {
      await stopChild(child);
      if (!options.dataDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

function readyPort(child: ChildProcess): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const timer = setTimeout(() => reject(new Error('the appliance did not report ready in time')), START_TIMEOUT_MS);
    child.on('message', (message: { type?: string; port?: number }) => {
      if (message.type === 'ready' && typeof message.port === 'number') {
        clearTimeout(timer);
        resolvePort(message.port);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the appliance exited with ${code} before it was ready`));
    });
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

let ticksPerSecond: number | undefined;

/** Clock ticks per second of /proc times (`getconf CLK_TCK`, usually 100). */
export function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** CPU time (user + system, all threads, children excluded) of process `pid`, in milliseconds. */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may contain spaces; fields are counted after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return ((utime + stime) * 1000) / clockTicks();
}

/** Resident memory of process `pid` (VmRSS), in MiB. */
export function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
  return match ? Math.round((Number(match[1]) / 1024) * 10) / 10 : Number.NaN;
}

/** Number of threads of process `pid`. */
export function threadCount(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/^Threads:\s+(\d+)/m.exec(status)?.[1] ?? Number.NaN);
}
