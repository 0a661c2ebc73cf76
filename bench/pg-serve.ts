/**
 * The HTTP API on PostgreSQL (`npm run bench:pg-serve`), issue 16: what `serve --database` costs a client, against the
 * one-PC appliance on lowdb, all in this process over loopback HTTP (bench/helpers/http-client.ts):
 * (a) submits (`POST /api/v1/try-on`): p50, p95 and try-ons per second, one at a time and 8 at once, for lowdb
 *     (`startAppliance`), PostgreSQL with images in the database, and PostgreSQL with images in a shared directory
 *     (`startSharedAppliance`, `config.imagesDir`), on a durable cluster (fsync, synchronous_commit and full-page
 *     writes on), and the database images once more on a cluster with fsync off (as the tests run it);
 * (b) status reads (`GET /api/v1/try-on/:id`) of a pending try-on on each, and of a complete one (its image inline);
 * (c) waits (`GET …?wait=30`): on a shared database, API process B (no engines) answers a wait for a try-on that
 *     process A's engine ran, woken by A's settle notice (LISTEN/NOTIFY, state/postgres/notices.ts); timed to the
 *     reply's last byte from the settle's commit (see `committed`), from B hearing the notice and from the engine's
 *     end. The same wait on A itself, and on one lowdb appliance, where the commit is the store's durable write.
 *
 * What is fair: submits run against the compose test engine parked (a 10-minute delay, one try-on at a time), so
 * the one try-on it runs sleeps through the measure and no engine work shares this machine's cores with the
 * submits; the queue only grows. Each measure starts a fresh appliance on a fresh store or database and submits 20
 * to warm up first. Inputs are test/helpers/inputs.ts `submission()` (two small JPEGs, 384×512 and 300×400), and
 * once the manifest's first real person and garment pair from ../shared/fixtures (149 and 93 KiB).
 *
 * Flags: `--submits N` (per measure, default 200), `--reads N` (default 500), `--waits N` (per row, default 50).
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { percentileOf as p, round, timed } from './helpers/stats.ts';
import { BenchClient, type Reply } from './helpers/http-client.ts';
import { startAppliance } from '../server/appliance.ts';
import { defaultConfig, type Config } from '../server/config.ts';
import { EngineRegistry } from '../server/engines/registry.ts';
import type { EngineSpec } from '../server/engines/types.ts';
import { TerminalNotifier } from '../server/jobs/notifier.ts';
import { startSharedAppliance } from '../server/shared-appliance.ts';
import { SETTLED_CHANNEL } from '../server/state/postgres/notices.ts';
import { composeEngine } from '../test/helpers/appliance.ts';
import { submission } from '../test/helpers/inputs.ts';
import { startPgCluster, type PgCluster } from '../test/helpers/pg-cluster.ts';

const FIXTURES = resolve(import.meta.dirname, '../../shared/fixtures');
const CONCURRENCY = 8;
const WARMUP = 20;
/** Longer than any measure: the parked engine's one try-on only sleeps. */
const PARKED_MS = 600_000;
/** The engine's time in the wait measures: the wait is surely in place before the settle. */
const WAIT_ENGINE_MS = 200;
const ENGINE_ID = 'compose';

function flag(name: string, fallback: number): number {
  const at = process.argv.indexOf(name);
  return at < 0 ? fallback : Number(process.argv[at + 1]);
}
const SUBMITS = flag('--submits', 200);
const READS = flag('--reads', 500);
const WAITS = flag('--waits', 50);

const ms = (start: number) => performance.now() - start;

// When each try-on's engine run began and ended in this process (the engine itself runs in a host child process).
const engineStarted = new Map<string, number>();
const engineEnded = new Map<string, number>();
const run = EngineRegistry.prototype.run;
EngineRegistry.prototype.run = async function (this: EngineRegistry, ...args: Parameters<typeof run>) {
  const id = args[1].genId;
  engineStarted.set(id, performance.now());
  try {
    return await run.apply(this, args);
  } finally {
    engineEnded.set(id, performance.now());
  }
};

/**
 * A settle on PostgreSQL, on the connection whose transaction sent the settled notice: when its COMMIT was sent, and
 * when the reply came back. PostgreSQL signals the listeners at the commit, before it answers the committer, and on
 * two busy cores B has often heard the notice (and even answered) before A's COMMIT returns; so a wait is timed from
 * the first of the two, the earliest moment this process knew of the commit.
 */
const commitSent = new Map<string, number>();
const committed = new Map<string, number>();
/** Statements `pg` sends, counted at the client (BEGIN and COMMIT included). */
let statements = 0;
const settling = new WeakMap<pg.Client, string>();
const send = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  statements += 1;
  const [text, values] = args;
  const id = settling.get(this);
  if (id !== undefined && text === 'COMMIT') commitSent.set(id, performance.now());
  const result = (send as (...a: unknown[]) => unknown).apply(this, args);
  if (text === 'SELECT pg_notify($1, $2)' && Array.isArray(values) && values[0] === SETTLED_CHANNEL) {
    settling.set(this, String(values[1]));
  } else if (id !== undefined && (text === 'COMMIT' || text === 'ROLLBACK')) {
    settling.delete(this);
    if (text === 'COMMIT' && result instanceof Promise)
      result.then(
        () => committed.set(id, performance.now()),
        () => undefined,
      );
  }
  return result;
} as typeof send;

/** When a waiter's process was told that its try-on is terminal: lowdb's publish after the durable write, or B's notice. */
const woken = new Map<string, number>();
const publish = TerminalNotifier.prototype.publish;
TerminalNotifier.prototype.publish = function (this: TerminalNotifier, id: string) {
  if (this.waitedIds().includes(id)) woken.set(id, performance.now());
  publish.call(this, id);
};

const cleanup: Array<() => Promise<unknown>> = [];
const logged: string[] = [];
const log = (message: string, error?: unknown) => void logged.push(`${message} ${error instanceof Error ? error.message : ''}`);

async function tempDir(label: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `fr-bench-pg-serve-${label}-`));
  cleanup.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

function config(dataDir: string, imagesDir: string | null = null): Config {
  return defaultConfig({
    port: 0,
    dataDir,
    imagesDir,
    builtinEngines: false,
    engineWorkers: 1,
    submitsPerMinute: 1_000_000,
    maxQueueDepth: 1_000_000,
    trialCredits: 1_000_000,
    jobTimeoutSeconds: 3600,
  });
}

/** A started appliance as the bench uses it: a client with the first admin key. */
interface Node {
  client: BenchClient;
  key: string;
  close(): Promise<void>;
}

interface Place {
  name: string;
  /** A fresh appliance on a fresh store or database. */
  open(engines: EngineSpec[]): Promise<Node>;
  /** Two API processes on one fresh database, A running `engines` and B none (PostgreSQL only). */
  pair?(engines: EngineSpec[]): Promise<[Node, Node]>;
}

function node(url: string, key: string | null, close: () => Promise<void>): Node {
  if (!key) throw new Error('the appliance gave no first admin key');
  const client = new BenchClient(url, key, 64);
  const closing = async () => {
    client.close();
    await close();
  };
  cleanup.unshift(closing);
  return { client, key, close: closing };
}

function lowdbPlace(): Place {
  return {
    name: 'lowdb',
    async open(engines) {
      const appliance = await startAppliance({ config: config(await tempDir('lowdb')), engines, log });
      return node(appliance.url, appliance.firstAdminKey, () => appliance.close());
    },
  };
}

function postgresPlace(name: string, cluster: PgCluster, sharedImages: boolean): Place {
  let databases = 0;
  const start = async (database: string, engines: EngineSpec[], key: string | null = null) => {
    const imagesDir = sharedImages ? await tempDir('images') : null;
    const appliance = await startSharedAppliance({ config: config(await tempDir('node'), imagesDir), database, engines, log });
    return node(appliance.url, key ?? appliance.firstAdminKey, () => appliance.close());
  };
  const database = () => cluster.createDatabase(`bench_${sharedImages ? 'dir' : 'db'}_${++databases}`);
  return {
    name,
    async open(engines) {
      return start(await database(), engines);
    },
    async pair(engines) {
      const url = await database();
      const a = await start(url, engines);
      const b = await start(url, [], a.key);
      return [a, b];
    },
  };
}

interface Latency {
  p50: number;
  p95: number;
  perSecond: number;
}

const latency = (run: { each: number[]; wallMs: number }): Latency => ({
  p50: p(run.each, 50),
  p95: p(run.each, 95),
  perSecond: round((run.each.length / run.wallMs) * 1000, 1),
});

interface SubmitRow {
  store: string;
  inputs: string;
  one: Latency;
  eight: Latency | null;
  /** Statements sent to PostgreSQL per submit, one at a time (background queries of the node included). */
  statementsPerSubmit: number | null;
  /** GET of a pending try-on, one at a time. */
  pendingRead: { p50: number; p95: number } | null;
}

/** Submits `body` on a fresh appliance: warm-up, then `SUBMITS` `width` at a time. */
async function submitMeasure(place: Place, body: Buffer, width: number, reads: boolean) {
  const { client, close } = await place.open([composeEngine({ id: ENGINE_ID, delayMs: PARKED_MS }, 1)]);
  const submit = async () => (await client.json<{ genId: string }>('POST', '/api/v1/try-on', 202, body)).data.genId;
  const ids: string[] = [];
  for (let i = 0; i < WARMUP; i++) ids.push(await submit());
  const before = statements;
  const result = await timed(SUBMITS, width, async () => ids.push(await submit()));
  const perSubmit = (statements - before) / SUBMITS;
  let pendingRead: SubmitRow['pendingRead'] = null;
  if (reads) {
    const read = async (i: number) => {
      const reply = await client.json<{ status: string }>('GET', `/api/v1/try-on/${ids[(i * 7) % ids.length]!}`, 200);
      if (reply.data.status !== 'pending') throw new Error(`a parked try-on is ${reply.data.status}`);
    };
    for (let i = 0; i < WARMUP; i++) await read(i);
    const { each } = await timed(READS, 1, read);
    pendingRead = { p50: p(each, 50), p95: p(each, 95) };
  }
  await close();
  return { latency: latency(result), perSubmit, pendingRead };
}

async function benchSubmits(place: Place, small: Buffer, fixture: { label: string; body: Buffer } | null): Promise<SubmitRow[]> {
  const one = await submitMeasure(place, small, 1, true);
  const eight = await submitMeasure(place, small, CONCURRENCY, false);
  const isPg = place.name !== 'lowdb';
  const rows: SubmitRow[] = [
    {
      store: place.name,
      inputs: 'submission()',
      one: one.latency,
      eight: eight.latency,
      statementsPerSubmit: isPg ? round(one.perSubmit, 1) : null,
      pendingRead: one.pendingRead,
    },
  ];
  if (fixture) {
    const real = await submitMeasure(place, fixture.body, 1, false);
    rows.push({
      store: place.name,
      inputs: fixture.label,
      one: real.latency,
      eight: null,
      statementsPerSubmit: isPg ? round(real.perSubmit, 1) : null,
      pendingRead: null,
    });
  }
  return rows;
}

interface WaitRow {
  path: string;
  n: number;
  /** Waits whose request was sent before the settle committed (the others found it done). */
  inPlace: number;
  /** From the commit (lowdb: the durable write; PostgreSQL: the first of A's COMMIT reply and the waiter's notice). */
  commitToReply: { p50: number; p95: number; max: number };
  /** From the waiter's process being told (lowdb: the runner's publish; PostgreSQL: the notice) to the reply. */
  heardToReply: number;
  /** PostgreSQL: waits whose notice came before A's COMMIT returned. */
  heardFirst: number | null;
  /** PostgreSQL: the settle's COMMIT, sent to answered on A (the WAL flush). */
  commitRoundTrip: number | null;
  engineEndToReply: { p50: number; p95: number };
  /** The submit's reply to the engine starting: the claim (PostgreSQL: a notice or the idle poll). */
  submitToEngine: number;
  /** GET of a complete try-on (its image inline), one at a time. */
  completeRead: number;
}

interface WaitSample {
  commitToReply: number;
  heardToReply: number;
  commitRoundTrip: number;
  engineEndToReply: number;
  submitToEngine: number;
  inPlace: boolean;
  heardFirst: boolean;
}

/** One try-on submitted and waited for on `client`; the moments it passed through. */
async function waitOnce(client: BenchClient, body: Buffer): Promise<WaitSample> {
  const submitted = await client.send('POST', '/api/v1/try-on', body);
  if (submitted.status !== 202) throw new Error(`submit: ${submitted.status} ${submitted.body.slice(0, 300)}`);
  const id = (JSON.parse(submitted.body) as { genId: string }).genId;
  const reply: Reply = await client.send('GET', `/api/v1/try-on/${id}?wait=30`);
  const status = (JSON.parse(reply.body) as { status: string }).status;
  if (reply.status !== 200 || status !== 'complete') throw new Error(`wait for ${id}: ${reply.status} ${status}`);
  // A's COMMIT may still be on its way back (see `committed`).
  await new Promise((resolve) => setTimeout(resolve, 20));
  const heard = woken.get(id);
  const [sent, answered] = [commitSent.get(id), committed.get(id)];
  const commit = Math.min(heard ?? Infinity, answered ?? Infinity);
  const engineEnd = engineEnded.get(id);
  const engineStart = engineStarted.get(id);
  if (commit === Infinity || engineEnd === undefined || engineStart === undefined) throw new Error(`no timings for ${id}`);
  return {
    commitToReply: reply.endedAt - commit,
    heardToReply: heard === undefined ? Number.NaN : reply.endedAt - heard,
    commitRoundTrip: sent === undefined || answered === undefined ? Number.NaN : answered - sent,
    engineEndToReply: reply.endedAt - engineEnd,
    submitToEngine: engineStart - submitted.endedAt,
    inPlace: reply.sentAt < commit,
    heardFirst: heard !== undefined && answered !== undefined && heard < answered,
  };
}

function waitRow(path: string, samples: WaitSample[], completeRead: number): WaitRow {
  const pick = (key: 'commitToReply' | 'heardToReply' | 'commitRoundTrip' | 'engineEndToReply' | 'submitToEngine') =>
    samples.map((sample) => sample[key]).filter((v) => !Number.isNaN(v));
  const commitToReply = pick('commitToReply');
  const roundTrips = pick('commitRoundTrip');
  return {
    path,
    n: samples.length,
    inPlace: samples.filter((sample) => sample.inPlace).length,
    commitToReply: { p50: p(commitToReply, 50), p95: p(commitToReply, 95), max: round(Math.max(...commitToReply)) },
    heardToReply: p(pick('heardToReply'), 50),
    heardFirst: roundTrips.length ? samples.filter((sample) => sample.heardFirst).length : null,
    commitRoundTrip: roundTrips.length ? p(roundTrips, 50) : null,
    engineEndToReply: { p50: p(pick('engineEndToReply'), 50), p95: p(pick('engineEndToReply'), 95) },
    submitToEngine: p(pick('submitToEngine'), 50),
    completeRead,
  };
}

/** p50 of reading complete try-ons `ids` on `client`, one at a time. */
async function completeReads(client: BenchClient, ids: string[]): Promise<number> {
  const read = async (i: number) => {
    const reply = await client.json<{ status: string; image?: string }>('GET', `/api/v1/try-on/${ids[i % ids.length]!}`, 200);
    if (reply.data.status !== 'complete' || !reply.data.image) throw new Error('a finished try-on came back without its image');
  };
  for (let i = 0; i < WARMUP; i++) await read(i);
  return p((await timed(Math.min(READS, 200), 1, read)).each, 50);
}

async function listIds(client: BenchClient): Promise<string[]> {
  return (await client.json<{ data: { genId: string }[] }>('GET', '/api/v1/try-on?limit=50', 200)).data.data.map((item) => item.genId);
}

async function benchWaits(lowdb: Place, postgres: Place, body: Buffer): Promise<WaitRow[]> {
  const engines = [composeEngine({ id: ENGINE_ID, delayMs: WAIT_ENGINE_MS })];
  const rows: WaitRow[] = [];

  const [a, b] = await postgres.pair!(engines);
  const onB: WaitSample[] = [];
  const onA: WaitSample[] = [];
  for (let i = 0; i < 6 + 2 * WAITS; i++) {
    // Alternating, so that both paths see the same machine.
    const [client, samples] = i % 2 === 0 ? [b.client, onB] : [a.client, onA];
    const sample = await waitOnce(client, body);
    if (i >= 6) samples.push(sample);
  }
  const ids = await listIds(b.client);
  rows.push(waitRow(`${postgres.name}: wait on B, A's engine settles`, onB, await completeReads(b.client, ids)));
  rows.push(waitRow(`${postgres.name}: wait on A, its own engine settles`, onA, await completeReads(a.client, ids)));
  await b.close();
  await a.close();

  const one = await lowdb.open(engines);
  const samples: WaitSample[] = [];
  for (let i = 0; i < 3 + WAITS; i++) {
    // On lowdb the settle's write is durable when the runner publishes: that is its commit.
    const sample = await waitOnce(one.client, body);
    if (i >= 3) samples.push(sample);
  }
  rows.push(waitRow(`${lowdb.name}: wait on the one appliance`, samples, await completeReads(one.client, await listIds(one.client))));
  await one.close();
  return rows;
}

/** The manifest's first person and garment pair, as a submission body. */
async function fixtureBody(): Promise<{ label: string; body: Buffer } | null> {
  const manifest = join(FIXTURES, 'manifest.json');
  if (!existsSync(manifest)) return null;
  const pair = (JSON.parse(await readFile(manifest, 'utf8')) as { pairs?: { person: string; garment: string }[] }).pairs?.[0];
  if (!pair) return null;
  const person = await readFile(join(FIXTURES, pair.person));
  const garment = await readFile(join(FIXTURES, pair.garment));
  const body = await submission({ engine: ENGINE_ID, selfie: person.toString('base64'), items: [garment.toString('base64')] });
  const kib = (bytes: Buffer) => Math.round(bytes.length / 1024);
  return { label: `fixture pair (${kib(person)} + ${kib(garment)} KiB)`, body: Buffer.from(JSON.stringify(body)) };
}

async function settings(cluster: PgCluster): Promise<string> {
  const client = new pg.Client({ connectionString: cluster.url });
  await client.connect();
  try {
    const show = async (name: string) => (await client.query<Record<string, string>>(`SHOW ${name}`)).rows[0]![name]!;
    return `${await show('server_version')}: fsync ${await show('fsync')}, synchronous_commit ${await show('synchronous_commit')}, full_page_writes ${await show('full_page_writes')}`;
  } finally {
    await client.end();
  }
}

const load = () =>
  loadavg()
    .map((l) => round(l, 1))
    .join(' ');

async function main(): Promise<void> {
  console.log(`machine: ${cpus().length} cores, ${cpus()[0]?.model.trim()}, node ${process.version}, load ${load()}`);
  console.log(`${SUBMITS} submits per measure after ${WARMUP} to warm up, ${READS} status reads, ${WAITS} waits per path`);
  const durable = await startPgCluster({ durable: true });
  cleanup.push(() => durable.stop());
  const fast = await startPgCluster();
  cleanup.push(() => fast.stop());
  console.log(`PostgreSQL durable ${await settings(durable)}; tests' cluster ${await settings(fast)}`);

  const small = Buffer.from(JSON.stringify(await submission({ engine: ENGINE_ID })));
  const fixture = await fixtureBody();
  console.log(
    `inputs: submission() is a ${Math.round(small.length / 1024)} KiB body; ${fixture ? `${fixture.label}, a ${Math.round(fixture.body.length / 1024)} KiB body` : 'no fixtures here'}`,
  );

  const lowdb = lowdbPlace();
  const inDatabase = postgresPlace('PostgreSQL, images in it', durable, false);
  const places = [
    lowdb,
    inDatabase,
    postgresPlace('PostgreSQL, images in a directory', durable, true),
    postgresPlace('PostgreSQL fsync off, images in it', fast, false),
  ];
  const submitRows: SubmitRow[] = [];
  for (const place of places) submitRows.push(...(await benchSubmits(place, small, place === places[3] ? null : fixture)));
  const waitRows = await benchWaits(lowdb, inDatabase, small);

  console.log(`\nsubmits (POST /api/v1/try-on), ms; try-ons per second; status of a pending try-on (GET), ms`);
  console.log(
    '| store | inputs | one at a time: p50 / p95 | /s | 8 at once: p50 / p95 | /s | pg statements a submit | GET pending: p50 / p95 |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  for (const row of submitRows) {
    const eight = row.eight ? `${row.eight.p50} / ${row.eight.p95} | ${row.eight.perSecond}` : '– | –';
    const read = row.pendingRead ? `${row.pendingRead.p50} / ${row.pendingRead.p95}` : '–';
    console.log(
      `| ${row.store} | ${row.inputs} | ${row.one.p50} / ${row.one.p95} | ${row.one.perSecond} | ${eight} | ${row.statementsPerSubmit ?? '–'} | ${read} |`,
    );
  }
  console.log(`\nwaits (GET ?wait=30), p50 in ms unless said; the engine takes ${WAIT_ENGINE_MS} ms`);
  console.log(
    "| path | n (wait in place) | commit → reply: p50 / p95 / max | heard → reply | notice before A's COMMIT returned | COMMIT round trip | engine end → reply: p50 / p95 | submit → engine start | GET complete |",
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const row of waitRows) {
    const c = row.commitToReply;
    const e = row.engineEndToReply;
    console.log(
      `| ${row.path} | ${row.n} (${row.inPlace}) | ${c.p50} / ${c.p95} / ${c.max} | ${row.heardToReply} | ${row.heardFirst ?? '–'} | ${row.commitRoundTrip ?? '–'} | ${e.p50} / ${e.p95} | ${row.submitToEngine} | ${row.completeRead} |`,
    );
  }
  console.log(`\nload at the end: ${load()}`);
  if (logged.length > 0) console.log(`the appliances logged ${logged.length} messages, the first: ${logged.slice(0, 3).join(' | ')}`);
  console.log(JSON.stringify({ submits: submitRows, waits: waitRows }));
}

try {
  await main();
} finally {
  for (const step of cleanup) await step().catch(() => undefined);
}
