/**
 * The PostgreSQL state benchmark (`npm run bench:pg-state`), issue 16's items 4 and 8:
 * (a) images: put and get latency (medians) and throughput (8 at once) of the directory store against PostgreSQL,
 *     for a ~200 KB fixture JPEG and a ~2 MB 12-megapixel JPEG made from it;
 * (b) the state gateway: submit latency (p50, p95) of LowdbState against PgState, one at a time and 8 at once, the
 *     other steps of a try-on (admit, start, complete), and PgState's database round trips per operation, counted
 *     at the client (every statement `pg` sends, BEGIN and COMMIT included) with the time of a bare round trip.
 * PostgreSQL runs twice on throwaway clusters over a local Unix socket: as the tests run it (fsync off) and durable
 * (fsync, synchronous_commit and full-page writes on, as in production); lowdb and the directory store always fsync.
 *
 * Flags: `--runs N` (image put+get pairs per store and size, default 60), `--submits N` (default 500).
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import sharp from 'sharp';
import { percentileOf as p, round, timed } from './helpers/stats.ts';
import { newId } from '../server/kernel/ids.ts';
import type { NewGeneration } from '../server/jobs/generations.ts';
import { DirectoryImageStore, type ImageStore } from '../server/state/images.ts';
import { LowdbState } from '../server/state/lowdb.ts';
import { PgImageStore } from '../server/state/postgres/images.ts';
import { PgState } from '../server/state/postgres/gateway.ts';
import type { StateGateway } from '../server/state/types.ts';
import { Archive } from '../server/store/archive.ts';
import { Store } from '../server/store/db.ts';
import { validJpeg } from '../test/helpers/hostile-images.ts';
import { plainParams } from '../test/helpers/inputs.ts';
import { startPgCluster } from '../test/helpers/pg-cluster.ts';

const FIXTURE = resolve(import.meta.dirname, '../../shared/fixtures/people/dresscode_052767_0.jpg');
const CONCURRENCY = 8;

function flag(name: string, fallback: number): number {
  const at = process.argv.indexOf(name);
  return at < 0 ? fallback : Number(process.argv[at + 1]);
}
const RUNS = flag('--runs', 60);
const SUBMITS = flag('--submits', 500);

/** Every statement `pg` sends, counted at the client (a pool's query and a transaction's BEGIN alike). */
let statements = 0;
const send = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  statements += 1;
  return (send as (...a: unknown[]) => unknown).apply(this, args);
} as typeof send;

const ms = (start: number) => performance.now() - start;

interface Place {
  name: string;
  images(): Promise<ImageStore>;
  gateway(): Promise<StateGateway>;
}

const cleanup: Array<() => Promise<void>> = [];

async function directoryPlace(): Promise<Place> {
  const fresh = async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fr-bench-pg-state-'));
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    return dir;
  };
  return {
    name: 'lowdb + directory',
    images: async () => new DirectoryImageStore(await fresh()),
    async gateway() {
      const dir = await fresh();
      return new LowdbState(await Store.open(dir), await Archive.open(dir));
    },
  };
}

async function postgresPlace(durable: boolean): Promise<Place> {
  const cluster = await startPgCluster({ durable });
  cleanup.push(() => cluster.stop());
  let databases = 0;
  const open = async () => {
    const state = await PgState.open(await cluster.createDatabase(`bench_${++databases}`));
    cleanup.unshift(() => state.close());
    return state;
  };
  return {
    name: durable ? 'postgres, durable' : 'postgres, fsync off',
    images: async () => new PgImageStore((await open()).db),
    gateway: open,
  };
}

async function photos(): Promise<Array<{ label: string; bytes: Buffer; width: number; height: number }>> {
  const small = existsSync(FIXTURE) ? await readFile(FIXTURE) : await validJpeg(768, 1024);
  // A phone-sized photo: the fixture at 12 megapixels, encoded as a camera would (high quality, full chroma).
  const large = await sharp(small).resize(3000, 4000, { kernel: 'lanczos3' }).jpeg({ quality: 97, chromaSubsampling: '4:4:4' }).toBuffer();
  const meta = await sharp(small).metadata();
  return [
    { label: `${Math.round(small.length / 1024)} KiB`, bytes: small, width: meta.width!, height: meta.height! },
    { label: `${round(large.length / 1024 / 1024, 1)} MiB`, bytes: large, width: 3000, height: 4000 },
  ];
}

interface ImageRow {
  store: string;
  image: string;
  bytes: number;
  putP50: number;
  getP50: number;
  putP90: number;
  getP90: number;
  /** put+get pairs per second, 8 at once. */
  pairsPerSecond: number;
  /** Bytes written and read back per second, 8 at once, in MiB/s. */
  mibPerSecond: number;
}

async function benchImages(place: Place, photo: Awaited<ReturnType<typeof photos>>[number]): Promise<ImageRow> {
  const store = await place.images();
  const meta = { format: 'jpeg' as const, width: photo.width, height: photo.height };
  const pair = async () => {
    const stored = await store.put(newId('gen'), 'selfie', photo.bytes, meta);
    if ((await store.get(stored)).length !== photo.bytes.length) throw new Error('an image came back short');
  };
  for (let i = 0; i < 5; i++) await pair();
  const puts: number[] = [];
  const gets: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const genId = newId('gen');
    let t = performance.now();
    const stored = await store.put(genId, 'selfie', photo.bytes, meta);
    puts.push(ms(t));
    t = performance.now();
    await store.get(stored);
    gets.push(ms(t));
    await store.removeGeneration(genId);
  }
  const { wallMs } = await timed(RUNS, CONCURRENCY, pair);
  return {
    store: place.name.replace('lowdb + ', ''),
    image: photo.label,
    bytes: photo.bytes.length,
    putP50: p(puts, 50),
    getP50: p(gets, 50),
    putP90: p(puts, 90),
    getP90: p(gets, 90),
    pairsPerSecond: round((RUNS / wallMs) * 1000, 1),
    mibPerSecond: round((2 * RUNS * photo.bytes.length) / 1024 / 1024 / (wallMs / 1000), 1),
  };
}

function generation(): NewGeneration {
  const id = newId('gen');
  const image = (name: string) => ({ file: `images/${id}/${name}.jpg`, format: 'jpeg' as const, width: 768, height: 1024 });
  return {
    id,
    keyId: 'key_bench',
    engine: 'warp',
    params: plainParams(),
    inputs: { selfie: image('selfie'), items: [image('item-0')] },
    retentionDays: 7,
    statusUrl: `http://shop.local/api/v1/try-on/${id}`,
  };
}

async function funded(place: Place): Promise<StateGateway> {
  const state = await place.gateway();
  await state.redeemVoucher({ id: newId('v'), credits: 100_000, issuedAt: new Date().toISOString() }, 'key_bench', new Date());
  return state;
}

interface GatewayRow {
  store: string;
  sequential: { p50: number; p95: number; perSecond: number };
  concurrent: { p50: number; p95: number; perSecond: number };
  /** p50 of each step of one try-on, one at a time: admit (Idempotency-Key), submit with its reply, start, complete. */
  steps: { admit: number; submitWithKey: number; start: number; complete: number };
}

async function benchGateway(place: Place): Promise<GatewayRow> {
  const sequentialState = await funded(place);
  for (let i = 0; i < 20; i++) await sequentialState.submit(generation(), new Date());
  const sequential = await timed(SUBMITS, 1, () => sequentialState.submit(generation(), new Date()));
  const concurrentState = await funded(place);
  for (let i = 0; i < 20; i++) await concurrentState.submit(generation(), new Date());
  const concurrent = await timed(SUBMITS, CONCURRENCY, () => concurrentState.submit(generation(), new Date()));

  const steps = { admit: [] as number[], submitWithKey: [] as number[], start: [] as number[], complete: [] as number[] };
  const stepState = await funded(place);
  const runs = Math.min(SUBMITS, 200);
  for (let i = 0; i < runs + 10; i++) {
    const input = generation();
    let t = performance.now();
    const admission = await stepState.admit('key_bench', newId('idem'), 'fingerprint', new Date(), 60);
    const admit = ms(t);
    if (admission.kind !== 'execute') throw new Error('a fresh key was not admitted');
    t = performance.now();
    await stepState.submit(input, new Date(), {
      claim: admission.claim,
      status: 202,
      headers: {},
      body: (result) => JSON.stringify(result),
      retentionHours: 24,
    });
    const submit = ms(t);
    t = performance.now();
    await stepState.startAttempt(input.id, new Date());
    const start = ms(t);
    t = performance.now();
    await stepState.complete(input.id, { file: `images/${input.id}/result.jpg`, format: 'jpeg', width: 768, height: 1024 }, new Date());
    const complete = ms(t);
    if (i < 10) continue;
    steps.admit.push(admit);
    steps.submitWithKey.push(submit);
    steps.start.push(start);
    steps.complete.push(complete);
  }
  const summary = (run: { each: number[]; wallMs: number }) => ({
    p50: p(run.each, 50),
    p95: p(run.each, 95),
    perSecond: round((SUBMITS / run.wallMs) * 1000, 1),
  });
  return {
    store: place.name.replace(' + directory', ''),
    sequential: summary(sequential),
    concurrent: summary(concurrent),
    steps: {
      admit: p(steps.admit, 50),
      submitWithKey: p(steps.submitWithKey, 50),
      start: p(steps.start, 50),
      complete: p(steps.complete, 50),
    },
  };
}

/** Statements PgState sends for each operation of one try-on, and the p50 of a bare round trip (`SELECT 1`). */
async function roundTrips(
  place: Place,
): Promise<{ version: string; perOperation: Record<string, number>; images: Record<string, number>; selectOneMs: number }> {
  const state = (await funded(place)) as PgState;
  const images = new PgImageStore(state.db);
  const count = async (fn: () => Promise<unknown>) => {
    const before = statements;
    await fn();
    return statements - before;
  };
  const input = generation();
  const withHook = generation();
  withHook.params.webhookUrl = 'https://shop.example/hooks/try-on';
  let claim: Extract<Awaited<ReturnType<StateGateway['admit']>>, { kind: 'execute' }>['claim'] | null = null;
  const reply = () => ({ claim: claim!, status: 202, headers: {}, body: (r: object) => JSON.stringify(r), retentionHours: 24 });
  const result = { file: `images/${input.id}/result.jpg`, format: 'jpeg' as const, width: 768, height: 1024 };
  const perOperation = {
    admit: await count(async () => {
      const admission = await state.admit('key_bench', newId('idem'), 'fingerprint', new Date(), 60);
      if (admission.kind === 'execute') claim = admission.claim;
    }),
    submitWithKey: await count(() => state.submit(input, new Date(), reply())),
    submitWithoutKey: await count(() => state.submit(withHook, new Date())),
    startAttempt: await count(() => state.startAttempt(input.id, new Date())),
    complete: await count(() => state.complete(input.id, result, new Date())),
    completeWithWebhook: await count(() => state.complete(withHook.id, result, new Date())),
  };
  const meta = { format: 'jpeg' as const, width: 1, height: 1 };
  const imageCounts = {
    put: await count(() => images.put(input.id, 'result', Buffer.from('x'), meta)),
    get: await count(() => images.get(result)),
    removeGeneration: await count(() => images.removeGeneration(input.id)),
  };
  const samples: number[] = [];
  for (let i = 0; i < 500; i++) {
    const t = performance.now();
    await state.db.query('SELECT 1');
    samples.push(ms(t));
  }
  const setting = async (name: string) => (await state.db.query<Record<string, string>>(`SHOW ${name}`)).rows[0]![name]!;
  const version = `${await setting('server_version')}, fsync ${await setting('fsync')}, synchronous_commit ${await setting('synchronous_commit')}`;
  return { version, perOperation, images: imageCounts, selectOneMs: p(samples.slice(50), 50) };
}

async function main(): Promise<void> {
  console.log(
    `machine: ${cpus().length} cores, ${cpus()[0]?.model.trim()}, node ${process.version}, load ${loadavg()
      .map((l) => round(l, 1))
      .join(' ')}`,
  );
  const places = [await directoryPlace(), await postgresPlace(false), await postgresPlace(true)];
  console.log(`${RUNS} image pairs per row, ${SUBMITS} submits per measure; PostgreSQL on a local Unix socket`);

  const imageRows: ImageRow[] = [];
  for (const photo of await photos()) for (const place of places) imageRows.push(await benchImages(place, photo));
  console.log('\nimages: put and get p50 (p90) in ms, one at a time; put+get pairs per second and MiB/s moved, 8 at once');
  for (const row of imageRows) {
    console.log(
      `  ${row.image.padEnd(9)} ${row.store.padEnd(20)} put ${row.putP50} (${row.putP90})  get ${row.getP50} (${row.getP90})` +
        `  ${row.pairsPerSecond} pairs/s  ${row.mibPerSecond} MiB/s`,
    );
  }

  const gatewayRows: GatewayRow[] = [];
  for (const place of places) gatewayRows.push(await benchGateway(place));
  console.log(`\nsubmit: p50 / p95 in ms and submits per second, one at a time and ${CONCURRENCY} at once`);
  for (const row of gatewayRows) {
    const { sequential: s, concurrent: c, steps } = row;
    console.log(
      `  ${row.store.padEnd(20)} 1: ${s.p50} / ${s.p95} (${s.perSecond}/s)  ${CONCURRENCY}: ${c.p50} / ${c.p95} (${c.perSecond}/s)` +
        `  steps p50: admit ${steps.admit}, submit+reply ${steps.submitWithKey}, start ${steps.start}, complete ${steps.complete}`,
    );
  }

  const trips = [await roundTrips(places[1]!), await roundTrips(places[2]!)];
  console.log(`\nPostgreSQL ${trips[0]!.version}; durable: ${trips[1]!.version}`);
  console.log('PgState statements per operation (BEGIN and COMMIT included):', JSON.stringify(trips[0]!.perOperation));
  console.log('PgImageStore statements per operation:', JSON.stringify(trips[0]!.images));
  console.log(`a bare round trip (SELECT 1), p50: ${trips[0]!.selectOneMs} ms fsync off, ${trips[1]!.selectOneMs} ms durable`);
  console.log(
    `load at the end: ${loadavg()
      .map((l) => round(l, 1))
      .join(' ')}`,
  );
  console.log(JSON.stringify({ images: imageRows, gateway: gatewayRows, roundTrips: trips }));
}

try {
  await main();
} finally {
  for (const step of cleanup) await step().catch(() => undefined);
}
