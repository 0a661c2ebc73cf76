/**
 * A throwaway PostgreSQL cluster for one test file or bench: `initdb` into a temporary directory, a server that
 * listens only on a Unix socket inside it, removed again by `stop()`. Uses Debian's package (`apt-get install
 * postgresql`, as `.ci/run` does); as root, the server runs as the `postgres` user, which refuses to run as root.
 *
 * Without PostgreSQL installed, `findPostgres()` returns null and the suites that need it skip, naming what is
 * missing; `.ci/run` sets FITTINGROOM_REQUIRE_POSTGRES=1 so that CI fails instead of skipping.
 *
 * A test file takes its cluster with `clusterForFile()`; a bench, which is no node:test file, with `startPgCluster()`.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chmod, chown, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The folder holding `initdb`, `pg_ctl` and `postgres`, or null when PostgreSQL is not installed. */
export function findPostgres(): string | null {
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((name) => /^\d+$/.test(name))
      .sort((a, b) => Number(b) - Number(a));
    for (const version of versions) {
      const bin = join(root, version, 'bin');
      if (existsSync(join(bin, 'initdb'))) return bin;
    }
  }
  return null;
}

/** For `test(..., { skip })`: why the suite cannot run here, or false when it can (and must). */
export function postgresSkip(): string | false {
  if (findPostgres()) return false;
  if (process.env.FITTINGROOM_REQUIRE_POSTGRES === '1') {
    throw new Error('FITTINGROOM_REQUIRE_POSTGRES=1 but PostgreSQL is not installed (apt-get install postgresql)');
  }
  return 'PostgreSQL is not installed here (apt-get install postgresql); .ci/run installs it';
}

export interface PgCluster {
  /** A connection string for the `postgres` database over the cluster's socket. */
  url: string;
  /** A connection string for a new, empty database of that name. */
  createDatabase(name: string): Promise<string>;
  stop(): Promise<void>;
}

export interface PgClusterOptions {
  /**
   * Commits wait for the write-ahead log to reach the disk (fsync, synchronous_commit and full-page writes on, as a
   * production server has them), for benchmarks; tests keep the default, which skips fsync for speed.
   */
  durable?: boolean;
}

/** Starts a cluster in a new temporary directory. */
export async function startPgCluster(options: PgClusterOptions = {}): Promise<PgCluster> {
  const bin = findPostgres();
  if (!bin) throw new Error('PostgreSQL is not installed');
  const asRoot = process.getuid?.() === 0;
  const dir = await mkdtemp(join(tmpdir(), 'fittingroom-pg-'));
  const dataDir = join(dir, 'data');
  const socketDir = dir;
  const owner = asRoot ? await postgresIds() : null;
  if (owner) await chown(dir, owner.uid, owner.gid);
  await chmod(dir, 0o700);

  const as = (command: string, args: string[]) =>
    (asRoot ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args]) as [string, string[]];
  const port = 20000 + Math.floor(Math.random() * 20000);
  await run(...as(join(bin, 'initdb'), ['-D', dataDir, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-locale', '--no-sync']));
  // A test cluster trades durability for speed; the store's own durability is PostgreSQL's, not under test here.
  const durability = options.durable ? [] : ['fsync = off', 'synchronous_commit = off', 'full_page_writes = off'];
  const settings = [
    `listen_addresses = ''`,
    `unix_socket_directories = '${socketDir}'`,
    `port = ${port}`,
    ...durability,
    'max_connections = 200',
    'shared_buffers = 32MB',
  ];
  await writeFile(join(dataDir, 'postgresql.auto.conf'), settings.join('\n') + '\n');
  if (owner) await chown(join(dataDir, 'postgresql.auto.conf'), owner.uid, owner.gid);
  await run(...as(join(bin, 'pg_ctl'), ['-D', dataDir, '-l', join(dir, 'log'), '-w', '-t', '60', 'start']));

  const urlFor = (database: string) => `postgresql://postgres@/${database}?host=${encodeURIComponent(socketDir)}&port=${port}`;
  let stopped = false;
  return {
    url: urlFor('postgres'),
    async createDatabase(name) {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: ${name}`);
      await run(join(bin, 'psql'), [
        '-h',
        socketDir,
        '-p',
        String(port),
        '-U',
        'postgres',
        '-d',
        'postgres',
        '-v',
        'ON_ERROR_STOP=1',
        '-qc',
        `CREATE DATABASE ${name}`,
      ]);
      return urlFor(name);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await run(...as(join(bin, 'pg_ctl'), ['-D', dataDir, '-m', 'immediate', '-w', 'stop'])).catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface FileCluster {
  /** For `test(..., { skip })` and `describe(..., { skip })`: as `postgresSkip()`. */
  skip: string | false;
  /** A connection string for a new, empty database, `<prefix>_1`, `<prefix>_2`, … */
  newDatabase(): Promise<string>;
}

/**
 * One cluster for the test file that calls this at its top level: started in a `before` hook unless PostgreSQL is
 * missing (then `skip` says why, or, with FITTINGROOM_REQUIRE_POSTGRES=1, this throws), stopped in an `after` hook.
 * node:test runs a file's `after` hooks in the order they were registered, after every suite's own: what a test or
 * suite opens on the cluster is closed in its own hooks (`t.after`, a suite's `after`) so that it goes first.
 */
export function clusterForFile(prefix: string): FileCluster {
  const skip = postgresSkip();
  let cluster: PgCluster | null = null;
  let databases = 0;
  before(async () => {
    if (!skip) cluster = await startPgCluster();
  });
  after(() => cluster?.stop());
  return {
    skip,
    async newDatabase() {
      if (!cluster) throw new Error(skip || 'the cluster is not started yet: newDatabase() is for tests and their hooks');
      return cluster.createDatabase(`${prefix}_${++databases}`);
    },
  };
}

async function postgresIds(): Promise<{ uid: number; gid: number }> {
  const { stdout } = await run('id', ['postgres']);
  const uid = /uid=(\d+)/.exec(stdout)?.[1];
  const gid = /gid=(\d+)/.exec(stdout)?.[1];
  if (!uid || !gid) throw new Error('there is no postgres user to run the test cluster as');
  return { uid: Number(uid), gid: Number(gid) };
}
