/**
 * How long `fittingroom migrate` takes to move a shop into PostgreSQL (issue 16): a data directory with `--try-ons`
 * finished try-ons (90% complete, 5% failed, 4% canceled; one in ten with a webhook event) and 20 pending ones, on
 * a trial and a voucher, most of them moved to the archive as the appliance does, each with three small images
 * (a 64×64 selfie and garment, a 64×64 result); moved into a new database of a throwaway cluster that commits
 * durably (fsync on, as a production server). Three cases, each from a fresh copy of the data directory into a
 * fresh database: the images into PostgreSQL, into a shared directory, and no images at all (every try-on erased).
 * The time is the whole command's (open, copy, verify, commit). Prints a table and a JSON line.
 *
 * Flags: `--try-ons 2000`, `--runs 3`.
 */
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import sharp from 'sharp';
import { median } from './helpers/stats.ts';
import { defaultConfig } from '../server/config.ts';
import {
  completeGeneration,
  createGeneration,
  cancelGeneration,
  failGeneration,
  markErased,
  startAttempt,
} from '../server/jobs/generations.ts';
import { sweep } from '../server/jobs/retention.ts';
import { newId } from '../server/kernel/ids.ts';
import { firstStart } from '../server/services.ts';
import { migrateShop } from '../server/state/migrate-shop.ts';
import { Archive } from '../server/store/archive.ts';
import { Store } from '../server/store/db.ts';
import type { StoredImage } from '../server/store/schema.ts';
import { redeemVoucher } from '../server/vouchers/redeem.ts';
import { plainParams } from '../test/helpers/inputs.ts';
import { postgresSkip, startPgCluster } from '../test/helpers/pg-cluster.ts';

const { values } = parseArgs({ options: { 'try-ons': { type: 'string', default: '2000' }, runs: { type: 'string', default: '3' } } });
const TRY_ONS = Number(values['try-ons']);
const RUNS = Number(values.runs);
const PENDING = 20;

/** A data directory as an appliance that ran `count` try-ons leaves it; `images: false` erases them all. */
async function makeShop(count: number, images: boolean): Promise<string> {
  const dataDir = await mkdtemp(join(tmpdir(), 'fr-bench-migrate-'));
  const store = await Store.open(dataDir);
  let clock = Date.parse('2026-03-01T09:00:00Z');
  const tick = () => new Date((clock += 1000));
  await firstStart(store, defaultConfig({ dataDir, port: 0 }), tick());
  await store.mutate((state) =>
    redeemVoucher(
      state,
      { id: 'bench-voucher', credits: count + PENDING, issuedAt: new Date(clock).toISOString() },
      state.keys[0]!.id,
      tick(),
    ),
  );
  const jpeg = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#a05030' } })
    .jpeg()
    .toBuffer();
  const write = async (id: string, name: string): Promise<StoredImage> => {
    const file = join('images', id, `${name}.jpg`);
    await mkdir(join(dataDir, 'images', id), { recursive: true });
    await writeFile(join(dataDir, file), jpeg);
    return { file, format: 'jpeg', width: 64, height: 64 };
  };
  const keyId = store.state.keys[0]!.id;
  for (let start = 0; start < count + PENDING; start += 100) {
    const batch: Array<{ id: string; selfie: StoredImage; item: StoredImage; result: StoredImage }> = [];
    for (let i = start; i < Math.min(start + 100, count + PENDING); i++) {
      const id = newId('gen', clock + i);
      batch.push({ id, selfie: await write(id, 'selfie'), item: await write(id, 'item-0'), result: await write(id, 'result') });
    }
    await store.mutate((state) => {
      for (const [n, { id, selfie, item, result }] of batch.entries()) {
        const i = start + n;
        const params = plainParams(i % 10 === 0 ? { webhookUrl: 'http://192.168.1.20/hooks' } : {});
        const input = { id, keyId, engine: 'warp', params, inputs: { selfie, items: [item] }, retentionDays: 7 };
        createGeneration(state, i % 10 === 0 ? { ...input, statusUrl: `http://127.0.0.1:8787/api/v1/try-on/${id}` } : input, tick());
        if (i >= count) continue;
        startAttempt(state, id, tick());
        if (i % 20 === 1) failGeneration(state, id, { code: 'no_person_detected', message: 'no person' }, tick());
        else if (i % 25 === 2) cancelGeneration(state, id, tick());
        else completeGeneration(state, id, result, tick());
        if (!images) markErased(state, id, 'all');
      }
    });
  }
  // As the appliance's sweep does every 10 s: finished try-ons and their ledger prefix move to the archive.
  const archive = await Archive.open(dataDir);
  await sweep(store, new Date(clock), archive, 100);
  await store.close();
  if (!images) await rm(join(dataDir, 'images'), { recursive: true, force: true });
  return dataDir;
}

const skip = postgresSkip();
if (skip) {
  console.log(`bench:pg-migrate: ${skip}`);
  process.exit(0);
}
const cluster = await startPgCluster({ durable: true });
let databases = 0;
const withImages = await makeShop(TRY_ONS, true);
const withoutImages = await makeShop(TRY_ONS, false);

interface Row {
  case: string;
  runs: number[];
  median: number;
  images: number;
  ledgerEntries: number;
}
const rows: Row[] = [];
try {
  for (const [name, source, shared] of [
    ['images into PostgreSQL', withImages, false],
    ['images into a directory', withImages, true],
    ['no images', withoutImages, false],
  ] as const) {
    const runs: number[] = [];
    let images = 0;
    let ledgerEntries = 0;
    for (let run = 0; run < RUNS; run++) {
      const dataDir = await mkdtemp(join(tmpdir(), 'fr-bench-migrate-run-'));
      await cp(source, dataDir, { recursive: true });
      const imagesDir = shared ? await mkdtemp(join(tmpdir(), 'fr-bench-migrate-images-')) : null;
      const database = await cluster.createDatabase(`bench_migrate_${++databases}`);
      const started = performance.now();
      const report = await migrateShop({ dataDir, database, imagesDir });
      runs.push((performance.now() - started) / 1000);
      images = report.totals.images;
      ledgerEntries = report.totals.ledgerEntries;
      await rm(dataDir, { recursive: true, force: true });
      if (imagesDir) await rm(imagesDir, { recursive: true, force: true });
    }
    rows.push({ case: name, runs, median: median(runs), images, ledgerEntries });
  }
} finally {
  await cluster.stop();
  await rm(withImages, { recursive: true, force: true });
  await rm(withoutImages, { recursive: true, force: true });
}

console.log(
  `fittingroom migrate: ${TRY_ONS} finished + ${PENDING} pending try-ons, median of ${RUNS} runs (durable PostgreSQL on this machine)`,
);
console.log('case                       seconds  images  ledger entries');
for (const row of rows)
  console.log(
    `${row.case.padEnd(26)} ${row.median.toFixed(2).padStart(7)}  ${String(row.images).padStart(6)}  ${String(row.ledgerEntries).padStart(14)}`,
  );
console.log(JSON.stringify({ bench: 'pg-migrate', tryOns: TRY_ONS, pending: PENDING, rows }));
