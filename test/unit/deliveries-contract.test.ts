/**
 * The webhook outbox's delivery store, one suite for both stores: claims (one dispatcher per event at a time, the
 * longest due first), attempts recorded only by the holder, retries rescheduled, a dead dispatcher's claim taken
 * over after its lease, abandoned claims free at once, settled events pruned.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { NewGeneration } from '../../server/jobs/generations.ts';
import type { ApiError } from '../../server/kernel/errors.ts';
import { LowdbState } from '../../server/state/lowdb.ts';
import { PgDeliveries } from '../../server/state/postgres/deliveries.ts';
import { PgState } from '../../server/state/postgres/gateway.ts';
import type { StateGateway } from '../../server/state/types.ts';
import { Archive } from '../../server/store/archive.ts';
import { Store } from '../../server/store/db.ts';
import type { WebhookAttempt } from '../../server/store/schema.ts';
import { LowdbDeliveries, type DeliveryStore } from '../../server/webhooks/deliveries.ts';
import { plainParams } from '../helpers/inputs.ts';
import { clusterForFile } from '../helpers/pg-cluster.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const t0 = new Date('2026-03-01T09:00:00Z');
const at = (seconds: number) => new Date(t0.getTime() + seconds * 1000);
const RETRY = [5, 300];
const half = () => 0.5;

interface Stores {
  state: StateGateway;
  deliveries: DeliveryStore;
  close(): Promise<void>;
}

const postgres = clusterForFile('deliveries');

const adapters = [
  {
    name: 'lowdb',
    skip: false as string | false,
    async open(): Promise<Stores> {
      const dir = await tempDir('fr-deliveries-');
      const store = await Store.open(dir);
      return { state: new LowdbState(store, await Archive.open(dir)), deliveries: new LowdbDeliveries(store), close: () => store.close() };
    },
  },
  {
    name: 'postgres',
    skip: postgres.skip,
    async open(): Promise<Stores> {
      const state = await PgState.open(await postgres.newDatabase());
      const secrets = { ensureSecret: async () => {}, signingSecrets: async () => ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'] };
      return { state, deliveries: new PgDeliveries(state.db, secrets), close: () => state.close() };
    },
  },
];

function generation(id: string): NewGeneration {
  return {
    id,
    keyId: 'key_1',
    engine: 'warp',
    params: plainParams({ webhookUrl: `https://hooks.example/${id}` }),
    inputs: { selfie: { file: 'a.jpg', format: 'jpeg', width: 1, height: 1 }, items: [] },
    retentionDays: 7,
    statusUrl: `http://shop.local/api/v1/try-on/${id}`,
  };
}

/** `count` try-ons ended one second apart from `start`, each with its webhook event; their event ids in that order. */
async function terminalEvents(state: StateGateway, count: number, start = 0): Promise<string[]> {
  await state.redeemVoucher({ id: `v${start}`, credits: count, issuedAt: t0.toISOString() }, 'key_1', at(start));
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const id = `gen_${start + i}`;
    await state.submit(generation(id), at(start));
    await state.fail(id, { code: 'engine_failed', message: 'x' }, at(start + i));
    ids.push((await state.webhookEvents(id))[0]!.id);
  }
  return ids;
}

const ok = (seconds: number): WebhookAttempt => ({ at: at(seconds).toISOString(), status: 200, durationMs: 3 });
const refused = (seconds: number): WebhookAttempt => ({ at: at(seconds).toISOString(), status: 503, durationMs: 3 });

for (const adapter of adapters) {
  describe(`delivery store contract: ${adapter.name}`, { skip: adapter.skip }, () => {
    const open: Stores[] = [];
    after(() => Promise.all(open.map((stores) => stores.close())));
    const fresh = async () => {
      const stores = await adapter.open();
      open.push(stores);
      return stores;
    };

    test('due events are claimed longest due first, each by one dispatcher', async () => {
      const { state, deliveries } = await fresh();
      const ids = await terminalEvents(state, 5);
      const first = await deliveries.claimDue('dsp_a', at(10), 2, 60);
      assert.deepEqual(
        first.events.map((event) => event.id),
        ids.slice(0, 2),
      );
      const second = await deliveries.claimDue('dsp_b', at(10), 10, 60);
      assert.deepEqual(
        second.events.map((event) => event.id),
        ids.slice(2),
      );
      assert.deepEqual((await deliveries.claimDue('dsp_c', at(11), 10, 60)).events, []);
    });

    test('only the holder records an attempt; a delivered event is settled and not claimed again', async () => {
      const { state, deliveries } = await fresh();
      const [id] = await terminalEvents(state, 1);
      await deliveries.claimDue('dsp_a', at(5), 1, 60);
      assert.equal(await deliveries.recordAttempt(id!, 'dsp_b', ok(6), at(6), RETRY, half), null);
      assert.equal((await state.webhookEvents('gen_0'))[0]!.attempts.length, 0, 'a stranger wrote nothing');
      const recorded = await deliveries.recordAttempt(id!, 'dsp_a', ok(6), at(6), RETRY, half);
      assert.equal(recorded!.state, 'delivered');
      assert.equal(await deliveries.recordAttempt(id!, 'dsp_a', ok(7), at(7), RETRY, half), null, 'the claim ended with the attempt');
      const stored = (await state.webhookEvents('gen_0'))[0]!;
      assert.equal(stored.state, 'delivered');
      assert.equal(stored.attempts.length, 1);
      assert.deepEqual(await deliveries.claimDue('dsp_a', at(100), 5, 60), { events: [], nextDueAt: null });
    });

    test('a refused attempt is retried on schedule', async () => {
      const { state, deliveries } = await fresh();
      const [id] = await terminalEvents(state, 1);
      await deliveries.claimDue('dsp_a', at(1), 1, 60);
      const recorded = await deliveries.recordAttempt(id!, 'dsp_a', refused(1), at(1), RETRY, half);
      assert.equal(recorded!.state, 'pending');
      assert.equal(recorded!.nextAttemptAt, at(6).toISOString());
      const early = await deliveries.claimDue('dsp_b', at(3), 5, 60);
      assert.deepEqual(early.events, []);
      assert.equal(early.nextDueAt, at(6).getTime());
      const due = await deliveries.claimDue('dsp_b', at(6), 5, 60);
      assert.deepEqual(
        due.events.map((event) => event.attempts.length),
        [1],
      );
    });

    test("a dead dispatcher's claim is taken after its lease, and its late attempt is not recorded", async () => {
      const { state, deliveries } = await fresh();
      const [id] = await terminalEvents(state, 1);
      assert.equal((await deliveries.claimDue('dsp_dead', at(1), 1, 30)).events.length, 1);
      assert.deepEqual((await deliveries.claimDue('dsp_b', at(30), 1, 30)).events, []);
      assert.equal((await deliveries.claimDue('dsp_b', at(31), 1, 30)).events.length, 1);
      assert.equal(await deliveries.recordAttempt(id!, 'dsp_dead', ok(32), at(32), RETRY, half), null);
      assert.equal((await deliveries.recordAttempt(id!, 'dsp_b', ok(32), at(32), RETRY, half))!.attempts.length, 1);
    });

    test('an abandoned claim is free at once', async () => {
      const { state, deliveries } = await fresh();
      const [id] = await terminalEvents(state, 1);
      await deliveries.claimDue('dsp_a', at(1), 1, 600);
      await deliveries.abandon(id!, 'dsp_b');
      assert.deepEqual((await deliveries.claimDue('dsp_b', at(2), 1, 600)).events, [], 'only the holder abandons');
      await deliveries.abandon(id!, 'dsp_a');
      assert.equal((await deliveries.claimDue('dsp_b', at(2), 1, 600)).events.length, 1);
    });

    test('dispatchers claiming at once never share an event', async () => {
      const { state, deliveries } = await fresh();
      const ids = await terminalEvents(state, 24);
      const claims = await Promise.all(Array.from({ length: 6 }, (_, i) => deliveries.claimDue(`dsp_${i}`, at(60), 8, 60)));
      const claimed = claims.flatMap((claim) => claim.events.map((event) => event.id));
      assert.equal(new Set(claimed).size, claimed.length, 'an event claimed twice');
      assert.deepEqual([...claimed].sort(), [...ids].sort());
    });

    test('a finished try-on is sent again on request: due at once, a new schedule, its attempts kept', async () => {
      const { state, deliveries } = await fresh();
      const [id] = await terminalEvents(state, 1);
      await deliveries.claimDue('dsp_a', at(1), 1, 60);
      await deliveries.recordAttempt(id!, 'dsp_a', refused(1), at(1), [], half);
      assert.equal((await state.webhookEvents('gen_0'))[0]!.state, 'failed', 'no retries left');
      const again = await state.redeliver('gen_0', at(100));
      assert.deepEqual(
        [again.id, again.state, again.nextAttemptAt, again.scheduleFrom, again.attempts.length],
        [id, 'pending', at(100).toISOString(), 1, 1],
      );
      const due = await deliveries.claimDue('dsp_b', at(100), 5, 60);
      assert.deepEqual(
        due.events.map((event) => event.id),
        [id],
      );
      assert.equal((await deliveries.recordAttempt(id!, 'dsp_b', ok(101), at(101), RETRY, half))!.state, 'delivered');
      assert.equal((await state.webhookEvents('gen_0'))[0]!.attempts.length, 2);

      await state.redeemVoucher({ id: 'v_more', credits: 2, issuedAt: t0.toISOString() }, 'key_1', at(200));
      await state.submit(generation('gen_pending'), at(200));
      await assert.rejects(state.redeliver('gen_pending', at(201)), (error: ApiError) => error.code === 'conflict');
      await state.submit({ ...generation('gen_quiet'), params: plainParams() }, at(200));
      await state.fail('gen_quiet', { code: 'engine_failed', message: 'x' }, at(202));
      await assert.rejects(state.redeliver('gen_quiet', at(203)), (error: ApiError) => error.code === 'conflict', 'no webhook, no event');
      await assert.rejects(state.redeliver('gen_none', at(203)), (error: ApiError) => error.code === 'not_found');
    });

    test('settled events older than the cut-off are pruned; pending ones stay', async () => {
      const { state, deliveries } = await fresh();
      const [delivered, pending] = await terminalEvents(state, 2);
      await deliveries.claimDue('dsp_a', at(5), 2, 60);
      await deliveries.recordAttempt(delivered!, 'dsp_a', ok(5), at(5), RETRY, half);
      await deliveries.abandon(pending!, 'dsp_a');
      assert.equal(await deliveries.prune(at(0)), 0, 'nothing settled was created before the cut-off');
      assert.equal(await deliveries.prune(at(3600)), 1);
      assert.deepEqual(await state.webhookEvents('gen_0'), []);
      assert.equal((await state.webhookEvents('gen_1')).length, 1);
    });
  });
}
