/**
 * Runs the real headless appliance (server/index.ts) as a child process, so
 * that tests can kill it with SIGKILL and start it again on the same data.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { EngineSpec } from '../../server/engines/types.ts';

const ENTRY = resolve(import.meta.dirname, '../../server/index.ts');

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  /** The first admin key in the data directory ('' when the process did not install the shop). */
  key: string;
  /** Resolves when the process has exited. */
  exited: Promise<void>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** Starts the appliance on an ephemeral port; resolves once it reports ready. */
export async function startServerProcess(dataDir: string, engines: EngineSpec[], args: string[] = []): Promise<ServerProcess> {
  // Only the given engines: the built-in ones would add a second to every start and take no part.
  const child = fork(
    ENTRY,
    ['--port', '0', '--data-dir', dataDir, '--submits-per-minute', '1000000', '--builtin-engines', 'false', ...args],
    {
      env: { ...process.env, FITTINGROOM_ENGINES: JSON.stringify(engines) },
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    },
  );
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const port = await new Promise<number>((ready, fail) => {
    child.once('message', (message: { type?: string; port?: number }) =>
      message.type === 'ready' ? ready(message.port!) : fail(new Error('unexpected message')),
    );
    child.once('exit', (code) => fail(new Error(`server exited with ${code} before it was ready: ${stderr}`)));
  });
  // On a shared database only the process that installed the shop has the first admin key.
  const key = (await readFile(join(dataDir, 'first-admin-key'), 'utf8').catch(() => '')).trim();
  return {
    child,
    url: `http://127.0.0.1:${port}`,
    key,
    exited,
    async kill(signal = 'SIGKILL') {
      child.kill(signal);
      await exited;
    },
  };
}
