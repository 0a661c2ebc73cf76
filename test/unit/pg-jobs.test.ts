/**
 * The job queue on PostgreSQL (server/state/postgres/jobs.ts) and the worker loop over it: leases that never hand
 * one try-on to two workers, run out when a worker dies, count an attempt per claim and fail a try-on after three;
 * settling only by the lease's holder; giving back without spending the attempt; the fleet. One throwaway cluster,
 * one database per test.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { NewGeneration } from '../../server/jobs/generations.ts';
import { PgJobQueue } from '../../server/state/postgres/jobs.ts';
import { PgState } from '../../server/state/postgres/gateway.ts';
import { WorkerLoop, type WorkerEvent } from '../../server/state/worker-loop.ts';
import type { GenerationRecord } from '../../server/store/schema.ts';
import { plainParams } from '../helpers/inputs.ts';
import { clusterForFile } from '../helpers/pg-cluster.ts';

const t0 = new Date('2026-03-01T09:00:00Z');
const at = (seconds: number) => new Date(t0.getTime() + seconds * 1000);
const LEASE = 30;
/** How long a test waits for the worker loop to reach a state. */
const LOOP_WAIT_MS = 10_000;

function generation(id: string, options: { engine?: string; webhookUrl?: string } = {}): NewGeneration {
  const image = (file: string) => ({ file, format: 'jpeg' as const, width: 768, height: 1024 });
  return {
    id,
    keyId: 'key_1',
    engine: options.engine ?? 'warp',
    params: plainParams(options.webhookUrl ? { webhookUrl: options.webhookUrl } : {}),
    inputs: { selfie: image(`images/${id}/selfie.jpg`), items: [image(`images/${id}/item-0.jpg`)] },
    retentionDays: 7,
    statusUrl: `http://shop.local/api/v1/try-on/${id}`,
  };
}

const result = (id: string) => ({ file: `images/${id}/result.jpg`, format: 'jpeg' as const, width: 768, height: 1024 });

async function until(condition: () => Promise<boolean> | boolean, what: string): Promise<void> {
  const deadline = Date.now() + LOOP_WAIT_MS;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A worker loop whose runs last until their signal aborts (then they return a result); whether one aborted. */
function untilAborted(queue: PgJobQueue, id: string, leaseSeconds: number) {
  let aborted = false;
  const events: string[] = [];
  const loop = new WorkerLoop({
    queue,
    worker: { id, host: 'here', pid: process.pid, engines: ['warp'], device: 'cpu' },
    leaseSeconds,
    idleMs: { first: 5, last: 20 },
    log: () => undefined,
    onEvent: (event) => events.push(`${event.type} ${event.id}`),
    run: (record, signal) =>
      new Promise((resolve) => {
        signal.addEventListener('abort', () => {
          aborted = true;
          resolve(result(record.id));
        });
      }),
  });
  return { loop, aborted: () => aborted, events };
}

const postgres = clusterForFile('jobs');

describe('PostgreSQL job queue', { skip: postgres.skip }, () => {
  const opened: PgState[] = [];
  after(() => Promise.all(opened.map((state) => state.close())));

  /** A fresh database with `credits` paid credits and try-ons gen_0… submitted a second apart from at(0). */
  async function fresh(credits: number, submits: number) {
    const state = await PgState.open(await postgres.newDatabase(), { maxConnections: 20 });
    opened.push(state);
    await state.redeemVoucher({ id: 'v1', credits, issuedAt: t0.toISOString() }, 'key_1', at(0));
    for (let i = 0; i < submits; i++) await state.submit(generation(`gen_${String(i).padStart(3, '0')}`), at(i));
    return { state, queue: new PgJobQueue(state.db) };
  }

  async function ledgerOf(state: PgState, genId: string): Promise<string[]> {
    const { rows } = await state.db.query<{ type: string }>('SELECT type FROM ledger WHERE gen_id = $1 ORDER BY seq', [genId]);
    return rows.map((row) => row.type);
  }

  test('concurrent claimers never get the same try-on', async () => {
    const { queue } = await fresh(40, 30);
    const claimed: string[] = [];
    for (;;) {
      const round = await Promise.all(Array.from({ length: 8 }, (_, w) => queue.claim(`w${w}`, ['warp'], LEASE, at(100))));
      const got = round.filter((record): record is GenerationRecord => record !== null);
      if (got.length === 0) break;
      claimed.push(...got.map((record) => record.id));
    }
    assert.equal(claimed.length, 30);
    assert.equal(new Set(claimed).size, 30, 'no try-on was claimed twice');
  });

  test('a claim takes the oldest try-on of its engines and counts the attempt with a lease', async () => {
    const { state, queue } = await fresh(5, 0);
    await state.submit(generation('gen_fashn', { engine: 'fashn' }), at(1));
    await state.submit(generation('gen_warp_old'), at(2));
    await state.submit(generation('gen_warp_new'), at(3));
    assert.equal(await queue.claim('w1', [], LEASE, at(10)), null);
    assert.equal(await queue.claim('w1', ['other'], LEASE, at(10)), null);
    const record = (await queue.claim('w1', ['warp'], LEASE, at(10)))!;
    assert.equal(record.id, 'gen_warp_old');
    assert.equal(record.attempts, 1);
    assert.equal(record.stage, 'running');
    assert.equal(record.startedAt, at(10).toISOString());
    assert.deepEqual(await state.generation('gen_warp_old'), record);
    const { rows } = await state.db.query<{ claimed_by: string; lease_until: Date }>(
      `SELECT claimed_by, lease_until FROM generations WHERE id = 'gen_warp_old'`,
    );
    assert.deepEqual(rows[0], { claimed_by: 'w1', lease_until: at(10 + LEASE) });
    assert.equal((await queue.claim('w2', ['warp', 'fashn'], LEASE, at(11)))!.id, 'gen_fashn');
  });

  test('an expired lease is claimed again and counts an attempt; the old holder can no longer renew or settle', async () => {
    const { state, queue } = await fresh(5, 1);
    assert.equal((await queue.claim('w1', ['warp'], LEASE, at(10)))!.attempts, 1);
    assert.equal(await queue.claim('w2', ['warp'], LEASE, at(10 + LEASE - 1)), null, 'the lease still runs');
    assert.equal(await queue.renew('gen_000', 'w1', LEASE, at(20)), true);
    assert.equal(await queue.claim('w2', ['warp'], LEASE, at(10 + LEASE + 1)), null, 'renewed to at(20 + LEASE)');
    const again = (await queue.claim('w2', ['warp'], LEASE, at(20 + LEASE + 1)))!;
    assert.equal(again.id, 'gen_000');
    assert.equal(again.attempts, 2);
    assert.equal(await queue.renew('gen_000', 'w1', LEASE, at(52)), false, 'the lease was lost');
    assert.equal(await queue.complete('gen_000', 'w1', result('gen_000'), at(52)), false);
    assert.equal(await queue.fail('gen_000', 'w1', { code: 'engine_failed', message: 'x' }, at(52)), false);
    assert.equal(await queue.giveBack('gen_000', 'w1'), false);
    assert.equal(await queue.complete('gen_000', 'w2', result('gen_000'), at(53)), true);
    assert.equal(await queue.complete('gen_000', 'w2', result('gen_000'), at(54)), false, 'settled once');
    assert.deepEqual(await ledgerOf(state, 'gen_000'), ['reserve', 'capture']);
    const record = (await state.generation('gen_000'))!;
    assert.equal(record.status, 'complete');
    assert.equal(record.attempts, 2);
    const { rows } = await state.db.query(`SELECT claimed_by, lease_until FROM generations WHERE id = 'gen_000'`);
    assert.deepEqual(rows[0], { claimed_by: null, lease_until: null }, 'settling ends the lease');
  });

  test('a lapsed lease that nobody took is still its holder’s to renew and settle; a worker never retakes its own', async () => {
    const { queue } = await fresh(5, 1);
    await queue.claim('w1', ['warp'], LEASE, at(10));
    assert.equal(await queue.claim('w1', ['warp'], LEASE, at(100)), null, 'maybe still running in another slot');
    assert.equal(await queue.renew('gen_000', 'w1', LEASE, at(100)), true);
    assert.equal(await queue.fail('gen_000', 'w1', { code: 'engine_failed', message: 'x' }, at(101)), true);
  });

  test('the fourth claim of a try-on whose workers died fails it, releases its credit and writes its event', async () => {
    const { state, queue } = await fresh(5, 0);
    await state.submit(generation('gen_dies', { webhookUrl: 'https://hooks.example/x' }), at(0));
    await state.submit(generation('gen_next'), at(1));
    let now = 10;
    for (let attempt = 1; attempt <= 3; attempt++) {
      const record = (await queue.claim(`w${attempt}`, ['warp'], LEASE, at(now)))!;
      assert.equal(record.id, 'gen_dies');
      assert.equal(record.attempts, attempt);
      now += LEASE + 1;
    }
    const next = await queue.claim('w4', ['warp'], LEASE, at(now));
    assert.equal(next!.id, 'gen_next', 'the claim goes on to the next try-on');
    const dead = (await state.generation('gen_dies'))!;
    assert.equal(dead.status, 'failed');
    assert.equal(dead.credit, 'released');
    assert.equal(dead.attempts, 3);
    assert.equal(dead.error!.code, 'engine_failed');
    assert.match(dead.error!.message, /stopped 3 times/);
    assert.deepEqual(await ledgerOf(state, 'gen_dies'), ['reserve', 'release']);
    const events = await state.webhookEvents('gen_dies');
    assert.equal(events.length, 1);
    assert.equal(events[0]!.type, 'try_on.failed');
    assert.equal(dead.webhookEventId, events[0]!.id);
    assert.deepEqual(await state.account(at(now)), {
      creditsRemaining: 4,
      creditsReserved: 1,
      trialCreditsRemaining: 0,
      trialExpiresAt: null,
    });
    assert.equal(await queue.complete('gen_dies', 'w3', result('gen_dies'), at(now)), false, 'the last holder comes too late');
  });

  test('a worker that never held a try-on cannot renew, settle or give it back', async () => {
    const { state, queue } = await fresh(5, 1);
    assert.equal(await queue.renew('gen_000', 'w1', LEASE, at(10)), false, 'not claimed yet');
    assert.equal(await queue.complete('gen_000', 'w1', result('gen_000'), at(10)), false);
    await queue.claim('w1', ['warp'], LEASE, at(10));
    assert.equal(await queue.renew('gen_000', 'w2', LEASE, at(11)), false);
    assert.equal(await queue.complete('gen_000', 'w2', result('gen_000'), at(11)), false);
    assert.equal(await queue.fail('gen_000', 'w2', { code: 'engine_failed', message: 'x' }, at(11)), false);
    assert.equal(await queue.giveBack('gen_000', 'w2'), false);
    assert.equal(await queue.complete('gen_none', 'w1', result('gen_none'), at(11)), false);
    assert.equal((await state.generation('gen_000'))!.status, 'pending');
    assert.deepEqual(await ledgerOf(state, 'gen_000'), ['reserve']);
  });

  test('giving back does not spend the attempt; a retry does', async () => {
    const { state, queue } = await fresh(5, 1);
    await queue.claim('w1', ['warp'], LEASE, at(10));
    assert.equal(await queue.giveBack('gen_000', 'w1'), true);
    let record = (await state.generation('gen_000'))!;
    assert.equal(record.attempts, 0);
    assert.equal(record.stage, 'queued');
    assert.equal(await queue.renew('gen_000', 'w1', LEASE, at(11)), false, 'given back is given up');
    assert.equal((await queue.claim('w2', ['warp'], LEASE, at(11)))!.attempts, 1, 'at once claimable by another');
    assert.equal(await queue.giveBack('gen_000', 'w2', { spendAttempt: true }), true);
    record = (await state.generation('gen_000'))!;
    assert.equal(record.attempts, 1);
    assert.equal((await queue.claim('w1', ['warp'], LEASE, at(12)))!.attempts, 2);
  });

  test('a try-on canceled while a worker runs it ends the lease', async () => {
    const { state, queue } = await fresh(5, 1);
    await queue.claim('w1', ['warp'], LEASE, at(10));
    assert.equal((await state.cancel('gen_000', at(11))).status, 'canceled');
    assert.equal(await queue.renew('gen_000', 'w1', LEASE, at(12)), false);
    assert.equal(await queue.complete('gen_000', 'w1', result('gen_000'), at(12)), false);
    assert.deepEqual(await ledgerOf(state, 'gen_000'), ['reserve', 'release']);
  });

  test('the database refuses a lease on a try-on that is not running', async () => {
    const { state } = await fresh(5, 1);
    await assert.rejects(
      state.db.query(`UPDATE generations SET claimed_by = 'w1', lease_until = now() WHERE id = 'gen_000'`),
      /generations_lease_only_while_running/,
    );
    await new PgJobQueue(state.db).claim('w1', ['warp'], LEASE, at(10));
    await assert.rejects(state.db.query(`UPDATE generations SET lease_until = NULL WHERE id = 'gen_000'`), /generations_lease_whole/);
  });

  test('the fleet shows the workers seen lately, with their engines and device, and not stale or retired ones', async () => {
    const { queue } = await fresh(5, 2);
    const worker = (id: string, engines: string[]) => ({ id, host: `host-${id}`, pid: 100, engines, device: 'cuda:0' });
    await queue.announce(worker('w_a', ['warp', 'fashn']), at(0));
    await queue.announce(worker('w_b', ['warp']), at(1));
    await queue.announce(worker('w_c', ['fashn']), at(2));
    assert.equal(await queue.heartbeat('w_a', at(50)), true);
    assert.equal(await queue.heartbeat('w_b', at(50)), true);
    await queue.retire('w_b');
    assert.equal(await queue.heartbeat('w_b', at(51)), false, 'a retired worker must announce itself again');
    await queue.claim('w_a', ['warp'], LEASE, at(55));
    const fleet = await queue.fleet(at(55), 15);
    assert.deepEqual(fleet, [
      {
        id: 'w_a',
        host: 'host-w_a',
        pid: 100,
        engines: ['warp', 'fashn'],
        device: 'cuda:0',
        startedAt: at(0).toISOString(),
        seenAt: at(50).toISOString(),
        running: 1,
      },
    ]);
    await queue.announce(worker('w_b', ['warp']), at(56));
    assert.deepEqual(
      (await queue.fleet(at(56), 15)).map((member) => member.id),
      ['w_a', 'w_b'],
    );
  });

  test('the worker loop runs try-ons to their end, then gives back a running one on stop and retires', async () => {
    const { state, queue } = await fresh(10, 3);
    const events: WorkerEvent[] = [];
    let hold = true;
    const loop = new WorkerLoop({
      queue,
      worker: { id: 'w_loop', host: 'here', pid: process.pid, engines: ['warp'], device: 'cpu' },
      concurrency: 2,
      leaseSeconds: 3,
      idleMs: { first: 5, last: 20 },
      onEvent: (event) => events.push(event),
      log: () => undefined,
      run: async (record, signal) => {
        if (record.id === 'gen_001') return { error: { code: 'engine_failed', message: 'no' } };
        if (record.id === 'gen_002') {
          while (hold && !signal.aborted) await new Promise((resolve) => setTimeout(resolve, 5));
          if (signal.aborted) throw new Error('aborted');
        }
        return result(record.id);
      },
    });
    await loop.start();
    await until(async () => (await state.generation('gen_000'))!.status === 'complete', 'gen_000 completes');
    await until(async () => (await state.generation('gen_001'))!.status === 'failed', 'gen_001 fails');
    await until(() => loop.runningIds().includes('gen_002'), 'gen_002 runs');
    assert.equal((await queue.fleet(new Date(), 30)).length, 1);
    await loop.stop();
    const held = (await state.generation('gen_002'))!;
    assert.equal(held.status, 'pending');
    assert.equal(held.stage, 'queued');
    assert.equal(held.attempts, 0, 'a shutdown spends no attempt');
    assert.deepEqual(await queue.fleet(new Date(), 30), [], 'retired');
    assert.deepEqual(
      // A claim in flight as the loop stops may take gen_002 again after it was given back, and gives it back too.
      [...new Set(events.filter((event) => event.type !== 'claimed').map((event) => JSON.stringify(event)))]
        .map((text) => JSON.parse(text) as WorkerEvent)
        .sort((a, b) => (a.id < b.id ? -1 : 1)),
      [
        { type: 'settled', id: 'gen_000', status: 'complete' },
        { type: 'settled', id: 'gen_001', status: 'failed' },
        { type: 'given-back', id: 'gen_002' },
      ],
    );
    hold = false;
  });

  test('the worker loop renews its lease while a run takes longer, and aborts the run when the lease is lost', async () => {
    const { state, queue } = await fresh(10, 1);
    const { loop, aborted } = untilAborted(queue, 'w_slow', 0.3);
    await loop.start();
    await until(() => loop.runningIds().length === 1, 'the run starts');
    await new Promise((resolve) => setTimeout(resolve, 700));
    assert.equal(await queue.claim('w_other', ['warp'], 0.3, new Date()), null, 'renewed past two lease lengths');
    assert.equal(aborted(), false);
    await state.cancel('gen_000', new Date());
    await until(aborted, 'the lost lease aborts the run');
    await until(() => loop.runningIds().length === 0, 'the run is over');
    assert.equal((await state.generation('gen_000'))!.status, 'canceled');
    await loop.stop();
  });

  test('a try-on canceled elsewhere stops at once when its worker is told, and is not settled by it', async () => {
    const { state, queue } = await fresh(10, 1);
    // Long enough that no renewal comes before the end of the test: only cancel() can stop the run.
    const { loop, aborted, events } = untilAborted(queue, 'w_told', 60);
    await loop.start();
    await until(() => loop.runningIds().length === 1, 'the run starts');
    loop.cancel('gen_unknown');
    assert.equal(aborted(), false, 'a try-on it does not run is none of its business');
    await state.cancel('gen_000', new Date());
    loop.cancel('gen_000');
    await until(() => loop.runningIds().length === 0, 'the run is over');
    assert.equal(aborted(), true);
    assert.deepEqual(events, ['claimed gen_000', 'lost gen_000']);
    const record = (await state.generation('gen_000'))!;
    assert.equal(record.status, 'canceled');
    assert.ok(!record.result, 'the aborted run stored nothing');
    await loop.stop();
  });
});
