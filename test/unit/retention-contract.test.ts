/**
 * Retention on both stores, one scenario: stored Idempotency-Key replies are forgotten after their hours, trial
 * credits expire on their date, finished try-ons lose their images after the retention days (records kept, marked
 * erased) while pending ones keep theirs. On a shared database two nodes sweeping at once expire each try-on once.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { newId } from '../../server/kernel/ids.ts';
import { sweep } from '../../server/jobs/retention.ts';
import { DirectoryImageStore, ImageNotFoundError, type ImageStore } from '../../server/state/images.ts';
import { LowdbState } from '../../server/state/lowdb.ts';
import { PgState } from '../../server/state/postgres/gateway.ts';
import { PgImageStore } from '../../server/state/postgres/images.ts';
import { PgRetention } from '../../server/state/postgres/retention.ts';
import type { StateGateway } from '../../server/state/types.ts';
import { Archive } from '../../server/store/archive.ts';
import { Store } from '../../server/store/db.ts';
import type { StoredImage } from '../../server/store/schema.ts';
import { validJpeg } from '../helpers/hostile-images.ts';
import { plainParams } from '../helpers/inputs.ts';
import { clusterForFile } from '../helpers/pg-cluster.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const t0 = new Date('2026-03-01T09:00:00Z');
const at = (hours: number) => new Date(t0.getTime() + hours * 3_600_000);
const DAYS = 24;

interface Stores {
  state: StateGateway;
  images: ImageStore;
  sweep(now: Date): Promise<{ imagesExpired: number; idempotencyForgotten: number; creditsExpired: number }>;
  close(): Promise<void>;
}

const { skip, newDatabase } = clusterForFile('retention');

const adapters = [
  {
    name: 'lowdb',
    skip: false as string | false,
    async open(): Promise<Stores> {
      const dir = await tempDir('fr-retention-');
      const store = await Store.open(dir);
      const archive = await Archive.open(dir);
      return {
        state: new LowdbState(store, archive),
        images: new DirectoryImageStore(dir),
        async sweep(now) {
          const report = await sweep(store, now, archive);
          return {
            imagesExpired: report.imagesExpired,
            idempotencyForgotten: report.idempotencyForgotten,
            creditsExpired: report.creditsExpired,
          };
        },
        close: () => store.close(),
      };
    },
  },
  {
    name: 'postgres',
    skip,
    async open(): Promise<Stores> {
      const state = await PgState.open(await newDatabase());
      const images = new PgImageStore(state.db);
      const retention = new PgRetention(state, images);
      return {
        state,
        images,
        async sweep(now) {
          const report = (await retention.sweep(now))!;
          return {
            imagesExpired: report.imagesExpired.length,
            idempotencyForgotten: report.idempotencyForgotten,
            creditsExpired: report.creditsExpired,
          };
        },
        close: () => state.close(),
      };
    },
  },
];

/** A try-on submitted at `now` with its two input images in the store; its id and images. */
async function submitWithImages(state: StateGateway, images: ImageStore, now: Date, reply?: Parameters<StateGateway['submit']>[2]) {
  const id = newId('gen');
  const bytes = await validJpeg(60, 80);
  const selfie = await images.put(id, 'selfie', bytes, { format: 'jpeg', width: 60, height: 80 });
  const item = await images.put(id, 'item-0', bytes, { format: 'jpeg', width: 60, height: 80 });
  await state.submit(
    { id, keyId: 'key_1', engine: 'warp', params: plainParams(), inputs: { selfie, items: [item] }, retentionDays: 7 },
    now,
    reply,
  );
  return { id, selfie, item };
}

async function held(images: ImageStore, image: StoredImage): Promise<boolean> {
  return images.get(image).then(
    () => true,
    (error: unknown) => {
      if (error instanceof ImageNotFoundError) return false;
      throw error;
    },
  );
}

for (const adapter of adapters) {
  describe(`retention: ${adapter.name}`, { skip: adapter.skip }, () => {
    test('replies, trial credits and images expire on their dates; records and pending try-ons stay', async () => {
      const { state, images, sweep: sweepAt, close } = await adapter.open();
      try {
        await state.grantTrial(2, 3, t0);
        await state.redeemVoucher({ id: 'v1', credits: 5, issuedAt: t0.toISOString() }, 'key_1', t0);
        const admission = await state.admit('lin_1', 'k-1', 'print', t0, 60);
        assert.equal(admission.kind, 'execute');
        if (admission.kind !== 'execute') return;
        const reply = { claim: admission.claim, status: 202, headers: {}, body: () => '{}', retentionHours: 24 };
        const done = await submitWithImages(state, images, t0, reply);
        const failed = await submitWithImages(state, images, t0);
        const pending = await submitWithImages(state, images, t0);
        const result = await images.put(done.id, 'result', await validJpeg(60, 80), { format: 'jpeg', width: 60, height: 80 });
        await state.complete(done.id, result, at(1));
        await state.fail(failed.id, { code: 'engine_failed', message: 'x' }, at(1));

        assert.deepEqual(await sweepAt(at(23)), { imagesExpired: 0, idempotencyForgotten: 0, creditsExpired: 0 });
        assert.equal((await state.admit('lin_1', 'k-1', 'print', at(23), 60)).kind, 'replay');
        assert.deepEqual(await sweepAt(at(24)), { imagesExpired: 0, idempotencyForgotten: 1, creditsExpired: 0 });
        assert.deepEqual(await sweepAt(at(3 * DAYS)), { imagesExpired: 0, idempotencyForgotten: 0, creditsExpired: 1 });
        assert.equal(
          (await state.account(at(3 * DAYS))).creditsRemaining,
          4,
          'the trial credit given back by the failure expired; the paid ones stay, less the pending one',
        );

        assert.deepEqual(await sweepAt(at(7 * DAYS - 1)), { imagesExpired: 0, idempotencyForgotten: 0, creditsExpired: 0 });
        assert.ok(await held(images, done.selfie));
        assert.deepEqual(await sweepAt(at(7 * DAYS)), { imagesExpired: 2, idempotencyForgotten: 0, creditsExpired: 0 });
        for (const image of [done.selfie, done.item, result, failed.selfie, failed.item])
          assert.equal(await held(images, image), false, image.file);
        assert.ok((await held(images, pending.selfie)) && (await held(images, pending.item)), 'a pending try-on keeps its inputs');
        for (const id of [done.id, failed.id]) {
          const record = (await state.generation(id))!;
          assert.deepEqual([record.erased, record.inputs, record.result], [true, null, null]);
        }
        assert.equal((await state.generation(done.id))!.status, 'complete', 'the record itself stays');
        assert.equal((await state.generation(pending.id))!.erased, false);
        assert.deepEqual(await sweepAt(at(8 * DAYS)), { imagesExpired: 0, idempotencyForgotten: 0, creditsExpired: 0 });
      } finally {
        await close();
      }
    });
  });
}

test('two nodes sweeping one database at once expire each try-on once', { skip }, async () => {
  const url = await newDatabase();
  const nodes = await Promise.all([PgState.open(url), PgState.open(url)]);
  try {
    const [first] = nodes;
    const images = new PgImageStore(first!.db);
    await first!.redeemVoucher({ id: 'v1', credits: 12, issuedAt: t0.toISOString() }, 'key_1', t0);
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const { id } = await submitWithImages(first!, images, t0);
      await first!.fail(id, { code: 'engine_failed', message: 'x' }, t0);
      ids.push(id);
    }
    const reports = await Promise.all(
      nodes.flatMap((node) => [0, 1].map(() => new PgRetention(node, new PgImageStore(node.db)).sweep(at(8 * DAYS)))),
    );
    const expired = reports.flatMap((report) => report?.imagesExpired ?? []);
    assert.deepEqual([...expired].sort(), [...ids].sort(), 'each try-on expired by exactly one sweep');
    assert.ok(
      reports.some((report) => report === null || report.imagesExpired.length === 0),
      'the other sweeps found the work taken or done',
    );
    const { rows } = await first!.db.query<{ n: number }>('SELECT count(*)::int AS n FROM images');
    assert.equal(rows[0]!.n, 0);
  } finally {
    await Promise.all(nodes.map((node) => node.close()));
  }
});

test('with images in a shared directory, a sweep removes their files after it commits', { skip }, async () => {
  const state = await PgState.open(await newDatabase());
  try {
    const images = new DirectoryImageStore(await tempDir('fr-retention-'));
    await state.redeemVoucher({ id: 'v1', credits: 1, issuedAt: t0.toISOString() }, 'key_1', t0);
    const { id, selfie } = await submitWithImages(state, images, t0);
    await state.fail(id, { code: 'engine_failed', message: 'x' }, t0);
    const report = await new PgRetention(state, images).sweep(at(7 * DAYS));
    assert.deepEqual(report?.imagesExpired, [id]);
    assert.equal(await held(images, selfie), false);
  } finally {
    await state.close();
  }
});
