/**
 * Notices between the nodes of a shared database (server/state/postgres/notices.ts, db.ts's `listen`): every way a
 * try-on becomes terminal notifies `fittingroom_settled` once, at commit, heard by a listener on another pool; a
 * settle that rolls back or changes nothing sends nothing; a submit notifies `fittingroom_queued`; the listener
 * reconnects after its connection is killed and reports the gap; close() leaves nothing running. And the worker
 * loop's `wake()`, which a queued notice calls. One throwaway cluster, one database per test.
 *
 * "Nothing was sent" is checked without waiting a fixed time: a marker is notified after the operation, and since
 * PostgreSQL delivers notices in commit order, everything the operation sent has arrived once the marker has.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { hostname } from 'node:os';
import { fileURLToPath } from 'node:url';
import { after, describe, test } from 'node:test';
import type { NewGeneration } from '../../server/jobs/generations.ts';
import { LISTEN_APPLICATION_NAME, PgDatabase } from '../../server/state/postgres/db.ts';
import { PgState, settleLocked } from '../../server/state/postgres/gateway.ts';
import { PgJobQueue } from '../../server/state/postgres/jobs.ts';
import { PgNotices, SETTLED_CHANNEL } from '../../server/state/postgres/notices.ts';
import { WorkerLoop, type JobQueue, type WorkerEvent } from '../../server/state/worker-loop.ts';
import type { GenerationRecord } from '../../server/store/schema.ts';
import { plainParams } from '../helpers/inputs.ts';
import { clusterForFile } from '../helpers/pg-cluster.ts';

const t0 = new Date('2026-03-01T09:00:00Z');
const at = (seconds: number) => new Date(t0.getTime() + seconds * 1000);
const LEASE = 30;
/** How long a test waits for a notice, a reconnect or a claim. */
const EVENT_WAIT_MS = 10_000;
/** How long the child process may take to exit after closing. */
const EXIT_WAIT_MS = 20_000;
const CHILD = fileURLToPath(new URL('../helpers/pg-listen-process.ts', import.meta.url));

function generation(id: string, engine = 'warp'): NewGeneration {
  const image = (file: string) => ({ file, format: 'jpeg' as const, width: 768, height: 1024 });
  return {
    id,
    keyId: 'key_1',
    engine,
    params: plainParams(),
    inputs: { selfie: image(`images/${id}/selfie.jpg`), items: [image(`images/${id}/item-0.jpg`)] },
    retentionDays: 7,
  };
}

const result = (id: string) => ({ file: `images/${id}/result.jpg`, format: 'jpeg' as const, width: 768, height: 1024 });

/** `promise`, or a rejection naming `what` once EVENT_WAIT_MS have passed. */
async function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting until ${what}`)), EVENT_WAIT_MS);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

async function until(condition: () => Promise<boolean> | boolean, what: string): Promise<void> {
  const deadline = Date.now() + EVENT_WAIT_MS;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** What a PgNotices on a database of its own heard: `settled:<id>` and `queued:<engine>`, in order, and its gaps. */
class Ear {
  readonly heard: string[] = [];
  /** For each settled notice, the try-on's status read on this pool as soon as the notice arrived. */
  readonly statusOnArrival = new Map<string, Promise<string | undefined>>();
  /** What its log was told (drops, failed reconnects). */
  readonly logged: string[] = [];
  gaps = 0;
  notices!: PgNotices;
  private drained = 0;
  private marks = 0;

  private constructor(
    readonly db: PgDatabase,
    private readonly sender: PgDatabase,
  ) {}

  static async open(url: string, sender: PgDatabase, retryMs = { first: 10, last: 100 }): Promise<Ear> {
    const ear = new Ear(await PgDatabase.open(url, { maxConnections: 2 }), sender);
    ear.notices = await PgNotices.start(
      ear.db,
      {
        settled: (id) => {
          ear.heard.push(`settled:${id}`);
          if (id.startsWith('mark_')) return;
          const read = ear.db.query<{ status: string }>('SELECT status FROM generations WHERE id = $1', [id]);
          ear.statusOnArrival.set(
            id,
            read.then(({ rows }) => rows[0]?.status).catch(() => undefined),
          );
        },
        queued: (engine) => ear.heard.push(`queued:${engine}`),
        gap: () => ear.gaps++,
        log: (message) => ear.logged.push(message),
      },
      { retryMs },
    );
    return ear;
  }

  /** The notices heard since the last drain, up to a marker notified now (which is left out). */
  async drain(): Promise<string[]> {
    const mark = `mark_${++this.marks}`;
    await this.sender.query('SELECT pg_notify($1, $2)', [SETTLED_CHANNEL, mark]);
    await until(() => this.heard.includes(`settled:${mark}`), `the listener hears ${mark}`);
    const end = this.heard.indexOf(`settled:${mark}`);
    const since = this.heard.slice(this.drained, end);
    this.drained = end + 1;
    return since;
  }

  async close(): Promise<void> {
    await this.notices.close();
    await this.db.close();
  }
}

/** The backend pids of the LISTEN connections on the database `db` is connected to. */
async function listenerPids(db: PgDatabase): Promise<number[]> {
  const { rows } = await db.query<{ pid: number }>(
    'SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()',
    [LISTEN_APPLICATION_NAME],
  );
  return rows.map((row) => row.pid);
}

const postgres = clusterForFile('notices');

describe('PostgreSQL notices between nodes', { skip: postgres.skip }, () => {
  const closers: (() => Promise<void>)[] = [];
  after(async () => {
    for (const close of closers.reverse()) await close();
  });

  /** A database with `credits` paid credits, the PgState that writes to it, and an Ear on another pool. */
  async function fresh(credits: number, retryMs?: { first: number; last: number }) {
    const url = await postgres.newDatabase();
    const state = await PgState.open(url, { maxConnections: 4 });
    closers.push(() => state.close());
    await state.redeemVoucher({ id: 'v1', credits, issuedAt: t0.toISOString() }, 'key_1', at(0));
    const ear = await Ear.open(url, state.db, retryMs);
    closers.push(() => ear.close());
    return { url, state, ear };
  }

  test('each way of settling notifies once, at commit, and a listener on another pool hears it', async () => {
    const { state, ear } = await fresh(10);
    for (let i = 0; i < 6; i++) await state.submit(generation(`gen_${i}`), at(1 + i));
    assert.deepEqual(await ear.drain(), Array(6).fill('queued:warp'));

    assert.equal(await state.complete('gen_0', result('gen_0'), at(10)), true);
    assert.deepEqual(await ear.drain(), ['settled:gen_0']);
    assert.equal(await state.fail('gen_1', { code: 'engine_failed', message: 'no' }, at(11)), true);
    assert.deepEqual(await ear.drain(), ['settled:gen_1']);
    await state.cancel('gen_2', at(12));
    assert.deepEqual(await ear.drain(), ['settled:gen_2']);

    const queue = new PgJobQueue(state.db, { maxAttempts: 1 });
    assert.equal((await queue.claim('w1', ['warp'], LEASE, at(20)))?.id, 'gen_3');
    assert.equal(await queue.complete('gen_3', 'w1', result('gen_3'), at(21)), true);
    assert.deepEqual(await ear.drain(), ['settled:gen_3']);
    assert.equal((await queue.claim('w1', ['warp'], LEASE, at(22)))?.id, 'gen_4');
    assert.equal(await queue.fail('gen_4', 'w1', { code: 'engine_failed', message: 'no' }, at(23)), true);
    assert.deepEqual(await ear.drain(), ['settled:gen_4']);

    // w1 dies holding gen_5; its one attempt is spent, so the next claim after the lease fails it instead.
    assert.equal((await queue.claim('w1', ['warp'], LEASE, at(30)))?.id, 'gen_5');
    assert.deepEqual(await ear.drain(), [], 'a claim is no settle');
    assert.equal(await queue.claim('w2', ['warp'], LEASE, at(30 + LEASE + 1)), null);
    assert.equal((await state.generation('gen_5'))?.status, 'failed');
    assert.deepEqual(await ear.drain(), ['settled:gen_5']);

    const expected = { gen_0: 'complete', gen_1: 'failed', gen_2: 'canceled', gen_3: 'complete', gen_4: 'failed', gen_5: 'failed' };
    for (const [id, status] of Object.entries(expected)) {
      assert.equal(await ear.statusOnArrival.get(id), status, `${id} read as soon as its notice arrived`);
    }
    assert.equal(ear.gaps, 0);
  });

  test('a settle that rolls back or changes nothing sends no notice', async () => {
    const { state, ear } = await fresh(1);
    await state.submit(generation('gen_a'), at(1));
    await assert.rejects(state.submit(generation('gen_b'), at(2)), { code: 'insufficient_credits' });
    assert.deepEqual(await ear.drain(), ['queued:warp'], 'a refused submit sends nothing');

    const failing = state.db.transaction(async (sql) => {
      const { rows } = await sql.query<{ record: GenerationRecord }>('SELECT record FROM generations WHERE id = $1 FOR UPDATE', ['gen_a']);
      await settleLocked(sql, rows[0]!.record, 'complete', at(3));
      throw new Error('the caller failed after settling');
    });
    await assert.rejects(failing, /the caller failed after settling/);
    assert.equal((await state.generation('gen_a'))?.status, 'pending', 'the settle rolled back');
    assert.deepEqual(await ear.drain(), [], 'a rolled-back settle sends nothing');

    const queue = new PgJobQueue(state.db);
    assert.equal(await queue.complete('gen_a', 'w_not_holding', result('gen_a'), at(4)), false);
    assert.deepEqual(await ear.drain(), [], 'a worker that does not hold the try-on settles nothing');

    assert.equal(await state.complete('gen_a', result('gen_a'), at(5)), true);
    assert.deepEqual(await ear.drain(), ['settled:gen_a']);
    await assert.rejects(state.cancel('gen_a', at(6)), { code: 'conflict' });
    assert.equal(await state.fail('gen_a', { code: 'engine_failed', message: 'late' }, at(7)), false);
    assert.equal(await state.complete('gen_a', result('gen_a'), at(8)), false);
    await assert.rejects(state.cancel('gen_nobody', at(9)), { code: 'not_found' });
    assert.deepEqual(await ear.drain(), [], 'settling a settled try-on again sends nothing');
  });

  test('a listener whose connection is killed reconnects, reports the gap and hears later notices', async () => {
    const { state, ear } = await fresh(5);
    await state.submit(generation('gen_1'), at(1));
    await state.submit(generation('gen_2'), at(2));
    assert.deepEqual(await ear.drain(), ['queued:warp', 'queued:warp']);
    const [before, ...others] = await listenerPids(state.db);
    assert.ok(before !== undefined && others.length === 0, 'one LISTEN connection');

    await state.db.query('SELECT pg_terminate_backend($1)', [before]);
    await until(() => ear.gaps === 1, 'the listener reports a gap');
    const [afterwards] = await listenerPids(state.db);
    assert.ok(afterwards !== undefined && afterwards !== before, 'a new LISTEN connection');
    assert.equal(await state.complete('gen_1', result('gen_1'), at(3)), true);
    assert.deepEqual(await ear.drain(), ['settled:gen_1']);

    // A reconnect that fails is tried again: the database refuses new connections for a while.
    // PostgreSQL alters that only from a connection to another database.
    const admin = await PgDatabase.open(await postgres.newDatabase(), { maxConnections: 1 });
    closers.push(() => admin.close());
    const { rows } = await state.db.query<{ name: string }>('SELECT current_database() AS name');
    const name = rows[0]!.name;
    await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
    await state.db.query('SELECT pg_terminate_backend($1)', [afterwards]);
    await until(() => ear.logged.some((message) => message.startsWith('reconnecting')), 'a reconnect fails');
    assert.equal(ear.gaps, 1, 'no gap reported before the listener is back');
    await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
    await until(() => ear.gaps === 2, 'the listener reports the second gap');
    assert.equal(await state.complete('gen_2', result('gen_2'), at(4)), true);
    assert.deepEqual(await ear.drain(), ['settled:gen_2']);
  });

  test('close() ends the LISTEN connection', async () => {
    const { state, ear } = await fresh(1);
    assert.equal((await listenerPids(state.db)).length, 1);
    await ear.notices.close();
    await until(async () => (await listenerPids(state.db)).length === 0, 'the LISTEN connection is gone');
  });

  for (const mode of ['connected', 'dropped'] as const) {
    test(`a process whose notices are closed (${mode}) exits by itself`, async () => {
      const url = await postgres.newDatabase();
      const child = spawn(process.execPath, ['--import', 'tsx', CHILD, url, ...(mode === 'dropped' ? ['--dropped'] : [])], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), EXIT_WAIT_MS);
      const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
      clearTimeout(timer);
      assert.equal(signal, null, `the child did not exit within ${EXIT_WAIT_MS} ms after closing: ${stdout} ${stderr}`);
      assert.equal(code, 0, stderr);
      assert.equal(stdout, 'closed\n', 'closed, with no gap reported');
    });
  }

  test('a submit wakes an idle worker at once', async () => {
    const { url, state } = await fresh(5);
    const db = await PgDatabase.open(url, { maxConnections: 2 });
    const queue = new PgJobQueue(db);
    let claims = 0;
    const events: WorkerEvent[] = [];
    const loop = new WorkerLoop({
      queue: { ...bound(queue), claim: (...args) => (claims++, queue.claim(...args)) },
      worker: { id: 'w1', host: hostname(), pid: process.pid, engines: ['warp'], device: 'cpu' },
      // An idle slot would wait a minute between claims: only a wake() makes it claim within the test's wait.
      idleMs: { first: 60_000, last: 60_000 },
      run: async (record) => result(record.id),
      onEvent: (event) => events.push(event),
    });
    const notices = await PgNotices.start(db, {
      queued: (engine) => {
        if (engine === 'warp') loop.wake();
      },
      gap: () => loop.wake(),
    });
    closers.push(async () => {
      await loop.stop();
      await notices.close();
      await db.close();
    });
    await loop.start();
    await until(() => claims === 1, 'the worker finds the queue empty');
    await state.submit(generation('gen_1', 'other-engine'), at(1));
    await state.submit(generation('gen_2'), at(2));
    await until(() => events.some((event) => event.type === 'settled' && event.id === 'gen_2'), 'the worker claims and completes gen_2');
    assert.equal((await state.generation('gen_1'))?.status, 'pending', 'gen_1 is no engine of this worker');
  });
});

describe('WorkerLoop.wake', () => {
  function loopOver(claim: JobQueue['claim']) {
    const queue: JobQueue = {
      maxAttempts: 3,
      announce: async () => undefined,
      heartbeat: async () => true,
      retire: async () => undefined,
      claim,
      renew: async () => true,
      complete: async () => true,
      fail: async () => true,
      giveBack: async () => true,
    };
    return new WorkerLoop({
      queue,
      worker: { id: 'w1', host: 'h', pid: 1, engines: ['warp'], device: 'cpu' },
      idleMs: { first: 60_000, last: 60_000 },
      heartbeatSeconds: 3600,
      run: async () => result('x'),
    });
  }

  test('ends an idle wait, and stop() ends it too', async (t) => {
    let claims = 0;
    const loop = loopOver(async () => (claims++, null));
    t.after(() => loop.stop());
    await loop.start();
    await until(() => claims === 1, 'the first claim');
    loop.wake();
    await until(() => claims === 2, 'a claim after wake()');
    await within(loop.stop(), 'stop() ends the idle wait');
    assert.equal(claims, 2);
  });

  test('a wake() while a claim finds nothing is not lost', async (t) => {
    let claims = 0;
    let answer!: (record: null) => void;
    const loop = loopOver(() => {
      claims++;
      return claims === 1 ? new Promise((resolve) => (answer = resolve)) : Promise.resolve(null);
    });
    t.after(() => loop.stop());
    await loop.start();
    await until(() => claims === 1, 'the first claim');
    loop.wake();
    answer(null);
    await until(() => claims === 2, 'a claim right after the first');
  });
});

/** The queue's methods bound to it, for a wrapper that replaces one. */
function bound(queue: PgJobQueue): JobQueue {
  return {
    maxAttempts: queue.maxAttempts,
    announce: queue.announce.bind(queue),
    heartbeat: queue.heartbeat.bind(queue),
    retire: queue.retire.bind(queue),
    claim: queue.claim.bind(queue),
    renew: queue.renew.bind(queue),
    complete: queue.complete.bind(queue),
    fail: queue.fail.bind(queue),
    giveBack: queue.giveBack.bind(queue),
  };
}
