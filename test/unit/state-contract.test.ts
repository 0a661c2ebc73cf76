/**
 * One contract, two stores: every test here runs against the lowdb gateway (a data directory) and the PostgreSQL
 * gateway (a throwaway cluster, one database per test). Balances, reservations and captures, the ledger, vouchers,
 * idempotency (in flight, concurrent, replay after commit), try-ons' terminal states and their webhook events.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { ApiError } from '../../server/kernel/errors.ts';
import type { NewGeneration } from '../../server/jobs/generations.ts';
import { LowdbState } from '../../server/state/lowdb.ts';
import { PgState } from '../../server/state/postgres/gateway.ts';
import type { ReplyToRemember, StateGateway } from '../../server/state/types.ts';
import { Archive } from '../../server/store/archive.ts';
import { Store } from '../../server/store/db.ts';
import { plainParams } from '../helpers/inputs.ts';
import { clusterForFile } from '../helpers/pg-cluster.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const t0 = new Date('2026-03-01T09:00:00Z');
const at = (seconds: number) => new Date(t0.getTime() + seconds * 1000);
const DAY = 86_400;

interface Adapter {
  name: string;
  skip: string | false;
  /** Shared databases only: a holder's lease on an Idempotency-Key runs out when its process dies. */
  leases: boolean;
  open(): Promise<StateGateway>;
}

const postgres = clusterForFile('contract');

const adapters: Adapter[] = [
  {
    name: 'lowdb',
    skip: false,
    leases: false,
    async open() {
      const dir = await tempDir('fr-contract-');
      return new LowdbState(await Store.open(dir), await Archive.open(dir));
    },
  },
  {
    name: 'postgres',
    skip: postgres.skip,
    leases: true,
    async open() {
      return PgState.open(await postgres.newDatabase());
    },
  },
];

function generation(id: string, webhookUrl?: string): NewGeneration {
  return {
    id,
    keyId: 'key_1',
    engine: 'warp',
    params: plainParams(webhookUrl ? { webhookUrl } : {}),
    inputs: { selfie: image(`images/${id}/selfie.jpg`), items: [image(`images/${id}/item-0.jpg`)] },
    retentionDays: 7,
    statusUrl: `http://shop.local/api/v1/try-on/${id}`,
  };
}

function image(file: string) {
  return { file, format: 'jpeg' as const, width: 768, height: 1024 };
}

function voucher(id: string, credits: number) {
  return { id, credits, issuedAt: t0.toISOString() };
}

function replyFor(claim: ReplyToRemember['claim']): ReplyToRemember {
  return {
    claim,
    status: 202,
    headers: { Location: '/x' },
    body: ({ genId, creditsRemaining }) => JSON.stringify({ genId, creditsRemaining }),
    retentionHours: 24,
  };
}

async function rejects(promise: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(promise, (error: unknown) => error instanceof ApiError && error.code === code);
}

/** The ledger read back whole: every page, oldest first. */
async function wholeLedger(state: StateGateway) {
  const entries = [];
  let before: number | null = null;
  do {
    const page = await state.ledgerPage(before, 7);
    entries.push(...page.entries);
    before = page.nextBefore;
  } while (before !== null);
  return entries.reverse();
}

/** Balances folded from the ledger alone must equal the account the store reports. */
async function assertBalanced(state: StateGateway, now: Date): Promise<void> {
  const lots = { trial: { available: 0, reserved: 0 }, paid: { available: 0, reserved: 0 } };
  const open = new Set<string>();
  for (const entry of await wholeLedger(state)) {
    const lot = lots[entry.lot];
    if (entry.type === 'reserve') {
      assert.ok(!open.has(entry.genId!), `${entry.genId} reserved twice`);
      open.add(entry.genId!);
      lot.available -= 1;
      lot.reserved += 1;
    } else if (entry.type === 'capture' || entry.type === 'release') {
      assert.ok(open.delete(entry.genId!), `${entry.genId} resolved without an open reservation`);
      lot.reserved -= 1;
      if (entry.type === 'release') lot.available += 1;
    } else if (entry.type === 'expire') lot.available -= entry.amount;
    else lot.available += entry.amount;
    assert.ok(lot.available >= 0 && lot.reserved >= 0, `the ${entry.lot} lot went below zero at entry ${entry.seq}`);
  }
  const account = await state.account(now);
  assert.equal(account.creditsReserved, lots.trial.reserved + lots.paid.reserved);
  assert.equal(account.creditsRemaining - account.trialCreditsRemaining, lots.paid.available);
}

for (const adapter of adapters) {
  describe(`state contract: ${adapter.name}`, { skip: adapter.skip }, () => {
    let state: StateGateway;
    const opened: StateGateway[] = [];
    after(() => Promise.all(opened.map((gateway) => gateway.close())));
    const fresh = async () => {
      state = await adapter.open();
      opened.push(state);
      return state;
    };

    test('the trial is granted once, and expires', async () => {
      await fresh();
      await state.grantTrial(3, 14, at(0));
      await state.grantTrial(3, 14, at(10));
      assert.deepEqual(await state.account(at(20)), {
        creditsRemaining: 3,
        creditsReserved: 0,
        trialCreditsRemaining: 3,
        trialExpiresAt: at(14 * DAY).toISOString(),
      });
      assert.equal((await state.account(at(14 * DAY))).creditsRemaining, 0, 'expired credits count as gone before the sweep');
      assert.equal(await state.expireDueCredits(at(14 * DAY)), 3);
      assert.equal(await state.expireDueCredits(at(14 * DAY + 1)), 0);
      assert.deepEqual(
        (await wholeLedger(state)).map((entry) => [entry.type, entry.amount, entry.lot]),
        [
          ['trial', 3, 'trial'],
          ['expire', 3, 'trial'],
        ],
      );
    });

    test('a submit reserves trial credits first; complete captures, fail and cancel release, once each', async () => {
      await fresh();
      await state.grantTrial(1, 14, at(0));
      await state.redeemVoucher(voucher('v1', 5), 'key_1', at(1));
      const first = await state.submit(generation('gen_a'), at(2));
      assert.equal(first.record.status, 'pending');
      assert.equal(first.record.credit, 'reserved');
      assert.equal(first.creditsRemaining, 5);
      await state.submit(generation('gen_b'), at(3));
      await state.submit(generation('gen_c'), at(4));
      assert.deepEqual(await state.account(at(5)), {
        creditsRemaining: 3,
        creditsReserved: 3,
        trialCreditsRemaining: 0,
        trialExpiresAt: at(14 * DAY).toISOString(),
      });

      assert.equal(await state.startAttempt('gen_a', at(6)), true);
      assert.equal((await state.generation('gen_a'))!.attempts, 1);
      assert.equal(await state.complete('gen_a', image('images/gen_a/result.jpg'), at(7)), true);
      assert.equal(await state.complete('gen_a', image('images/gen_a/result.jpg'), at(8)), false, 'a second capture');
      assert.equal(await state.fail('gen_a', { code: 'engine_failed', message: 'x' }, at(8)), false);
      assert.equal(await state.fail('gen_b', { code: 'engine_failed', message: 'x' }, at(9)), true);
      assert.equal((await state.cancel('gen_c', at(10))).status, 'canceled');
      await rejects(state.cancel('gen_c', at(11)), 'conflict');
      await rejects(state.cancel('gen_none', at(11)), 'not_found');
      assert.equal(await state.complete('gen_none', image('x'), at(11)), false);
      assert.equal(await state.startAttempt('gen_a', at(12)), false, 'no attempt on a finished try-on');

      const a = (await state.generation('gen_a'))!;
      assert.equal(a.status, 'complete');
      assert.equal(a.credit, 'captured');
      assert.equal(a.result!.file, 'images/gen_a/result.jpg');
      assert.equal((await state.generation('gen_b'))!.credit, 'released');
      assert.deepEqual(await state.account(at(12)), {
        creditsRemaining: 5,
        creditsReserved: 0,
        trialCreditsRemaining: 0,
        trialExpiresAt: at(14 * DAY).toISOString(),
      });
      assert.deepEqual(
        (await wholeLedger(state)).map((entry) => [entry.type, entry.lot, entry.genId ?? null]),
        [
          ['trial', 'trial', null],
          ['redeem', 'paid', null],
          ['reserve', 'trial', 'gen_a'],
          ['reserve', 'paid', 'gen_b'],
          ['reserve', 'paid', 'gen_c'],
          ['capture', 'trial', 'gen_a'],
          ['release', 'paid', 'gen_b'],
          ['release', 'paid', 'gen_c'],
        ],
      );
      await assertBalanced(state, at(12));
    });

    test('with no credit a submit is refused with 402 and writes nothing', async () => {
      await fresh();
      await rejects(state.submit(generation('gen_a'), at(0)), 'insufficient_credits');
      assert.equal(await state.generation('gen_a'), undefined);
      assert.deepEqual(await wholeLedger(state), []);
      await state.grantTrial(1, 1, at(0));
      await rejects(state.submit(generation('gen_b'), at(DAY)), 'insufficient_credits');
      assert.equal(await state.generation('gen_b'), undefined);
      assert.equal((await state.account(at(DAY))).creditsReserved, 0);
    });

    test('concurrent submits never overdraw: exactly as many succeed as there are credits', async () => {
      await fresh();
      await state.redeemVoucher(voucher('v1', 7), 'key_1', at(0));
      const outcomes = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => state.submit(generation(`gen_${i}`), at(1))));
      const won = outcomes.filter((outcome) => outcome.status === 'fulfilled');
      const refused = outcomes.filter((outcome) => outcome.status === 'rejected');
      assert.equal(won.length, 7);
      for (const outcome of refused) assert.equal(((outcome as PromiseRejectedResult).reason as ApiError).code, 'insufficient_credits');
      assert.deepEqual(await state.account(at(2)), {
        creditsRemaining: 0,
        creditsReserved: 7,
        trialCreditsRemaining: 0,
        trialExpiresAt: null,
      });
      await assertBalanced(state, at(2));
    });

    test('concurrent completes and fails of one try-on settle it once', async () => {
      await fresh();
      await state.redeemVoucher(voucher('v1', 1), 'key_1', at(0));
      await state.submit(generation('gen_a', 'https://hooks.example/x'), at(1));
      const outcomes = await Promise.all([
        state.complete('gen_a', image('r.jpg'), at(2)),
        state.fail('gen_a', { code: 'engine_failed', message: 'x' }, at(2)),
        state.complete('gen_a', image('r.jpg'), at(2)),
        state.cancel('gen_a', at(2)).then(
          () => true,
          () => false,
        ),
      ]);
      assert.equal(outcomes.filter(Boolean).length, 1);
      const events = await state.webhookEvents('gen_a');
      assert.equal(events.length, 1, 'one webhook event per terminal state');
      assert.equal((await state.generation('gen_a'))!.webhookEventId, events[0]!.id);
      await assertBalanced(state, at(3));
    });

    test('a terminal try-on with a webhook has its event, with the balance after the transition', async () => {
      await fresh();
      await state.redeemVoucher(voucher('v1', 2), 'key_1', at(0));
      await state.submit(generation('gen_a', 'https://hooks.example/x'), at(1));
      await state.submit(generation('gen_b'), at(1));
      assert.deepEqual(await state.webhookEvents('gen_a'), []);
      await state.fail('gen_a', { code: 'engine_failed', message: 'the engine stopped' }, at(2));
      await state.complete('gen_b', image('r.jpg'), at(2));
      const [event] = await state.webhookEvents('gen_a');
      assert.equal(event!.type, 'try_on.failed');
      assert.equal(event!.state, 'pending');
      const body = JSON.parse(event!.body);
      assert.equal(body.data.creditsRemaining, 1);
      assert.deepEqual(body.data.error, { code: 'engine_failed', message: 'the engine stopped' });
      assert.deepEqual(await state.webhookEvents('gen_b'), [], 'no webhookUrl, no event');
    });

    test('a voucher redeems once, even when redeemed concurrently', async () => {
      await fresh();
      const outcomes = await Promise.allSettled(
        Array.from({ length: 8 }, () => state.redeemVoucher(voucher('v_once', 10), 'key_1', at(0))),
      );
      const won = outcomes.filter((outcome) => outcome.status === 'fulfilled');
      assert.equal(won.length, 1);
      assert.deepEqual((won[0] as PromiseFulfilledResult<unknown>).value, { voucherId: 'v_once', creditsAdded: 10, creditsRemaining: 10 });
      for (const outcome of outcomes.filter((o) => o.status === 'rejected'))
        assert.equal(((outcome as PromiseRejectedResult).reason as ApiError).code, 'conflict');
      await rejects(state.redeemVoucher(voucher('v_once', 10), 'key_2', at(5)), 'conflict');
      assert.equal((await state.account(at(6))).creditsRemaining, 10);
      await assertBalanced(state, at(6));
    });

    test('usage counts try-ons submitted and ended, and credits used, in the periods they fall in', async () => {
      await fresh();
      await state.redeemVoucher(voucher('v1', 10), 'key_1', at(0));
      const HOUR = 3600;
      await state.submit(generation('gen_a'), at(10));
      await state.submit(generation('gen_b'), at(20));
      await state.submit(generation('gen_c'), at(HOUR + 5));
      await state.submit(generation('gen_d'), at(HOUR + 6));
      await state.submit(generation('gen_e'), at(3 * HOUR));
      await state.complete('gen_a', image('r.jpg'), at(HOUR + 1));
      await state.fail('gen_b', { code: 'engine_failed', message: 'x' }, at(30));
      await state.cancel('gen_c', at(HOUR + 7));
      await state.complete('gen_d', image('r.jpg'), at(2 * HOUR + 1));
      const report = await state.usage({ from: at(0), to: at(3 * HOUR), granularity: 'hour' });
      assert.deepEqual(
        report.periods.map((p) => [p.start, p.submitted, p.completed, p.failed, p.canceled, p.creditsUsed]),
        [
          [at(0).toISOString(), 2, 0, 1, 0, 0],
          [at(HOUR).toISOString(), 2, 1, 0, 1, 1],
          [at(2 * HOUR).toISOString(), 0, 1, 0, 0, 1],
        ],
      );
      assert.deepEqual(report.totals, { submitted: 4, completed: 2, failed: 1, canceled: 1, creditsUsed: 2 });
      assert.equal(report.from, at(0).toISOString());
      assert.equal(report.granularity, 'hour');
    });

    test('the ledger pages newest first', async () => {
      await fresh();
      for (let i = 0; i < 5; i++) await state.redeemVoucher(voucher(`v${i}`, i + 1), 'key_1', at(i));
      const first = await state.ledgerPage(null, 2);
      assert.deepEqual(
        first.entries.map((entry) => entry.amount),
        [5, 4],
      );
      const second = await state.ledgerPage(first.nextBefore, 2);
      assert.deepEqual(
        second.entries.map((entry) => entry.amount),
        [3, 2],
      );
      const last = await state.ledgerPage(second.nextBefore, 2);
      assert.deepEqual(
        last.entries.map((entry) => entry.amount),
        [1],
      );
      assert.equal(last.nextBefore, null);
      assert.equal(last.entries[0]!.note, 'voucher v0');
      assert.equal(last.entries[0]!.at, at(0).toISOString());
    });

    test('try-ons list newest first, by status, page and submitting keys; pending ones are counted', async () => {
      await fresh();
      await state.redeemVoucher(voucher('v1', 10), 'key_1', at(0));
      const ids = ['gen_01', 'gen_02', 'gen_03', 'gen_04', 'gen_05'];
      for (const [i, id] of ids.entries()) await state.submit({ ...generation(id), keyId: i % 2 === 0 ? 'key_a' : 'key_b' }, at(i + 1));
      await state.complete('gen_02', image('images/gen_02/result.png'), at(10));
      await state.cancel('gen_03', at(11));
      const listed = async (query: Parameters<StateGateway['generations']>[0]) =>
        (await state.generations(query)).map((record) => record.id);
      assert.deepEqual(await listed({ limit: 10 }), ['gen_05', 'gen_04', 'gen_03', 'gen_02', 'gen_01']);
      assert.deepEqual(await listed({ limit: 2 }), ['gen_05', 'gen_04']);
      assert.deepEqual(await listed({ limit: 2, before: 'gen_04' }), ['gen_03', 'gen_02']);
      assert.deepEqual(await listed({ limit: 10, status: 'pending' }), ['gen_05', 'gen_04', 'gen_01']);
      assert.deepEqual(await listed({ limit: 10, keyIds: ['key_b'] }), ['gen_04', 'gen_02']);
      assert.deepEqual(await listed({ limit: 10, keyIds: ['key_a'], status: 'canceled' }), ['gen_03']);
      assert.deepEqual(await listed({ limit: 10, keyIds: [] }), []);
      assert.equal(await state.pendingCount(), 3);
    });

    test('erasing cancels a pending try-on once and releases its credit; a finished one keeps its end', async () => {
      await fresh();
      await state.redeemVoucher(voucher('v1', 2), 'key_1', at(0));
      await state.submit(generation('gen_p', 'https://hooks.example/x'), at(1));
      await state.submit(generation('gen_c'), at(2));
      await state.complete('gen_c', image('images/gen_c/result.png'), at(3));
      const pending = await state.erase('gen_p', at(4));
      assert.equal(pending.canceled, true);
      assert.equal(pending.record.status, 'canceled');
      assert.equal(pending.record.erased, true);
      assert.equal(pending.record.inputs, null);
      assert.equal((await state.webhookEvents('gen_p')).length, 1, 'canceling by erasure writes the webhook event');
      const again = await state.erase('gen_p', at(5));
      assert.equal(again.canceled, false);
      const done = await state.erase('gen_c', at(6));
      assert.equal(done.canceled, false);
      assert.equal(done.record.status, 'complete');
      assert.equal(done.record.result, null);
      assert.equal((await state.generation('gen_c'))!.erased, true);
      assert.equal(await state.pendingCount(), 0);
      const account = await state.account(at(7));
      assert.equal(account.creditsRemaining, 1, 'the canceled try-on gave its credit back, the complete one kept it');
      assert.equal(account.creditsReserved, 0);
      await rejects(state.erase('gen_unknown', at(8)), 'not_found');
      await assertBalanced(state, at(9));
    });

    test('idempotency: in flight 409, another request 422, replay after commit', async () => {
      await fresh();
      await state.redeemVoucher(voucher('v1', 5), 'key_1', at(0));
      const admission = await state.admit('lin_1', 'k-1', 'print-a', at(1), 60);
      assert.equal(admission.kind, 'execute');
      if (admission.kind !== 'execute') return;
      await rejects(state.admit('lin_1', 'k-1', 'print-a', at(2), 60), 'idempotency_key_in_use');
      await rejects(state.admit('lin_1', 'k-1', 'print-b', at(2), 60), 'idempotency_key_reused');
      assert.equal((await state.admit('lin_2', 'k-1', 'print-a', at(2), 60)).kind, 'execute', 'keys are scoped');

      const submitted = await state.submit(generation('gen_a'), at(3), replyFor(admission.claim));
      assert.equal(submitted.body, JSON.stringify({ genId: 'gen_a', creditsRemaining: 4 }));
      const replay = await state.admit('lin_1', 'k-1', 'print-a', at(4), 60);
      assert.equal(replay.kind, 'replay');
      if (replay.kind !== 'replay') return;
      assert.equal(replay.record.status, 202);
      assert.equal(replay.record.body, submitted.body);
      assert.deepEqual(replay.record.headers, { Location: '/x' });
      await rejects(state.admit('lin_1', 'k-1', 'print-b', at(4), 60), 'idempotency_key_reused');
      await rejects(state.submit(generation('gen_b'), at(5), replyFor(admission.claim)), 'idempotency_key_in_use');
      assert.equal(await state.generation('gen_b'), undefined, 'a finished claim creates no second try-on');
      assert.equal((await state.account(at(5))).creditsRemaining, 4);
    });

    test('idempotency: a released key is free; an expired reply is forgotten', async () => {
      await fresh();
      await state.redeemVoucher(voucher('v1', 5), 'key_1', at(0));
      const first = await state.admit('lin_1', 'k-1', 'print-a', at(1), 60);
      assert.equal(first.kind, 'execute');
      if (first.kind !== 'execute') return;
      await state.release(first.claim);
      await rejects(state.submit(generation('gen_a'), at(2), replyFor(first.claim)), 'idempotency_key_in_use');
      assert.equal(await state.generation('gen_a'), undefined);
      const second = await state.admit('lin_1', 'k-1', 'print-b', at(2), 60);
      assert.equal(second.kind, 'execute', 'a key whose request failed may carry another request');
      if (second.kind !== 'execute') return;
      await state.submit(generation('gen_b'), at(3), replyFor(second.claim));
      assert.equal((await state.admit('lin_1', 'k-1', 'print-b', at(3 + 23 * 3600), 60)).kind, 'replay');
      assert.equal((await state.admit('lin_1', 'k-1', 'print-c', at(3 + 24 * 3600), 60)).kind, 'execute', 'after 24 h');
    });

    test('idempotency: of many concurrent requests with one key, one executes', async () => {
      await fresh();
      const outcomes = await Promise.allSettled(Array.from({ length: 12 }, () => state.admit('lin_1', 'k-race', 'print-a', at(1), 60)));
      const executing = outcomes.filter((outcome) => outcome.status === 'fulfilled' && outcome.value.kind === 'execute');
      assert.equal(executing.length, 1);
      for (const outcome of outcomes.filter((o) => o.status === 'rejected'))
        assert.equal(((outcome as PromiseRejectedResult).reason as ApiError).code, 'idempotency_key_in_use');
    });

    // Defined only where leases exist: on one PC a holder dies with the process that holds the data directory.
    if (adapter.leases)
      test('idempotency: the lease of a holder that died runs out, and its late submit is refused', async () => {
        await fresh();
        await state.redeemVoucher(voucher('v1', 5), 'key_1', at(0));
        const dead = await state.admit('lin_1', 'k-1', 'print-a', at(1), 30);
        await rejects(state.admit('lin_1', 'k-1', 'print-a', at(30), 30), 'idempotency_key_in_use');
        const next = await state.admit('lin_1', 'k-1', 'print-a', at(31), 30);
        assert.equal(next.kind, 'execute');
        if (dead.kind !== 'execute' || next.kind !== 'execute') return;
        await rejects(state.submit(generation('gen_old'), at(32), replyFor(dead.claim)), 'idempotency_key_in_use');
        await state.submit(generation('gen_new'), at(32), replyFor(next.claim));
        assert.equal(await state.generation('gen_old'), undefined);
        assert.equal((await state.account(at(33))).creditsReserved, 1);
      });
  });
}
