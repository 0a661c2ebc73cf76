/**
 * Moving a shop from one PC to PostgreSQL (`fittingroom migrate --data-dir … --database …`, issue 16): everything
 * a stopped appliance's data directory holds is copied into an empty, migrated database in ONE transaction, checked
 * there against the data directory, and committed only if every total agrees; otherwise nothing stays.
 *
 * What is copied, and how:
 * - the installation id (vouchers are bound to it), every API key as stored (hash, lineage, rotation, revocation);
 * - the whole ledger, the archived prefix and the state's entries, in order, with their ids and their own `seq`
 *   numbers (so a client's ledger cursor still points where it did; the identity sequence continues after them).
 *   The database's triggers rebuild the lots' balances entry by entry. The state's `ledgerBase` is not copied: it
 *   only carries over the archived entries, which are copied themselves; the fold of all entries from zero must
 *   equal the base plus the state's entries, or the archive is incomplete and the move is refused. An entry of no
 *   credits (the trial of a shop run with `--trial-credits 0`) is left out, as the database refuses one; the trial
 *   lot's expiry it set is set directly;
 * - every try-on, archived or not, finished or pending. A pending one stays pending with its reservation, so a
 *   worker runs it and it is charged once; one the appliance was running when it stopped is queued again (nobody
 *   runs it now), its attempts kept, so one that failed three times is given up as on one PC;
 * - redeemed vouchers, stored Idempotency-Key replies (named to their try-on), webhook signing secrets and the
 *   webhook outbox (pending events are delivered by the new dispatchers), the shop floor's PIN, its throttle, the
 *   GUI's key and choices, take-home links, the catalogue's garments;
 * - images: each input and result a record names that is still on disk, and the catalogue's photos, one at a time
 *   (a large shop is never held in memory), into PostgreSQL (`images`, `catalogue_photos`) or, with
 *   `--images-dir`, a directory every node mounts (rolled back by removing what was written).
 * GUI sessions are not copied: staff sign in again (with the same PIN) on the new setup, whose address differs.
 * Vouchers the voucher journal knows and the state does not (a state.json restored from an older copy) cannot be
 * copied as redemptions (their credits are unknown): they are named in the move's record and in its report.
 *
 * Refused: a data directory an appliance is running on (Store's lock) or one already moved (a marker file written
 * just before the commit, removed if it fails), a database that holds anything (the record of an earlier move in `shop_migrations` above
 * all), an `--images-dir` that holds images. Verified inside the transaction, before the commit: the balance of
 * each lot (available, reserved, spent, trial expiry) against the data directory's own fold, the account summary,
 * counts (keys, ledger entries, try-ons by status, vouchers, garments, photos, images, events, secrets, replies,
 * links) and a digest of each table's rows in order, images by their SHA-256.
 */
import { createHash, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { allGenerations, allLedgerEntries } from '../credits/history.ts';
import { accountSummary, applyEntry, balancesOf, baseBalances, summaryOfLots, type AccountSummary } from '../credits/ledger.ts';
import { mkdirDurably, readJsonLines, writeFileDurably } from '../kernel/durable-fs.ts';
import { redactUrl } from '../kernel/redact.ts';
import { Archive } from '../store/archive.ts';
import { MOVED_MARKER, Store } from '../store/db.ts';
import {
  photosOf,
  type ApiKeyRecord,
  type CatalogueGarment,
  type CreditLot,
  type GenerationRecord,
  type GenerationStatus,
  type LedgerEntry,
  type State,
  type StoredImage,
  type WebhookEvent,
} from '../store/schema.ts';
import { DirectoryImageStore, parseImageFile } from './images.ts';
import { PgDatabase, constraintOf, type Sql } from './postgres/db.ts';

/** The voucher journal beside the state (vouchers/journal.ts): ids of every voucher redeemed here. */
const VOUCHER_JOURNAL = 'vouchers-redeemed.jsonl';
/** pg_advisory_xact_lock key: "fr" + "mv": two moves into one database run one after the other. */
const MOVE_LOCK = 0x66726d76;
/** A garment's photo as catalogue-photos.ts names it (the same check as migration 5's). */
const CATALOGUE_FILE = /^catalogue[\\/]gar_[0-9A-Z]{26}(-[0-9]{1,20})?\.(jpg|png|webp)$/;
const EXTENSIONS = { jpeg: 'jpg', png: 'png', webp: 'webp' } as const;
/** Rows per INSERT of ledger entries and try-on records. */
const BATCH = 500;

export interface MigrateShopOptions {
  dataDir: string;
  /** A PostgreSQL connection string; the database must be empty (a new one; the schema is migrated here). */
  database: string;
  /** A directory every node mounts, for images; null or absent: images go into the database. */
  imagesDir?: string | null;
  /** The time the account summary is compared at and the move is recorded at. */
  now?: Date;
  /** Progress, one line at a time. */
  log?: (line: string) => void;
  /**
   * Tests only: runs inside the transaction after everything is copied, before the verification (a test corrupts
   * the copy here to see the verification roll everything back).
   */
  beforeVerify?: (sql: Sql) => Promise<void>;
}

/** The balance of one credit lot. */
export interface LotTotals {
  available: number;
  reserved: number;
  spent: number;
}

/** What both sides must agree on; compared field by field. */
export interface ShopTotals {
  installationId: string;
  lots: Record<CreditLot, LotTotals>;
  trialExpiresAt: string | null;
  account: AccountSummary;
  keys: number;
  ledgerEntries: number;
  lastSeq: number;
  generations: Record<GenerationStatus, number>;
  vouchers: number;
  voucherCredits: number;
  idempotencyReplies: number;
  webhookSecrets: number;
  webhookEvents: number;
  garments: number;
  cataloguePhotos: number;
  shares: number;
  images: number;
  imageBytes: number;
  /** SHA-256 over each table's rows in a fixed order: equal digests, equal rows. */
  digests: Record<'keys' | 'ledger' | 'generations' | 'vouchers' | 'events' | 'garments' | 'images' | 'photos' | 'rest', string>;
}

export interface ShopMoveReport {
  installationId: string;
  dataDir: string;
  /** Where the images went: 'database' or the directory. */
  images: string;
  totals: ShopTotals;
  /** Try-ons queued again: the appliance stopped while running them. */
  requeued: number;
  /** Ledger entries of no credits left out (a trial of 0 credits), by id. */
  skippedEntries: string[];
  /** Files that records name and the disk no longer has (their reads answered 404 on one PC too). */
  missingImages: string[];
  /** GUI sessions left behind: staff sign in again. */
  sessionsDropped: number;
  /** Vouchers the journal says were redeemed here and the state does not know (a restored state file). */
  journalOnlyVouchers: string[];
  durationMs: number;
}

/** The move was refused before anything was written; the message says why and what to do. */
export class ShopMoveRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ShopMoveRefused';
  }
}

/** The copy did not verify: everything was rolled back. */
export class ShopMoveMismatch extends Error {
  constructor(readonly differences: string[]) {
    super(
      `the copy in the database does not match the data directory, so nothing was written (rolled back):\n  ${differences.join('\n  ')}`,
    );
    this.name = 'ShopMoveMismatch';
  }
}

/** Copies a stopped appliance's data directory into an empty PostgreSQL database; see the file's comment. */
export async function migrateShop(options: MigrateShopOptions): Promise<ShopMoveReport> {
  const started = performance.now();
  const dataDir = resolve(options.dataDir);
  const imagesDir = options.imagesDir ? resolve(options.imagesDir) : null;
  const now = options.now ?? new Date();
  const log = options.log ?? (() => undefined);
  if (!existsSync(join(dataDir, 'state.json'))) throw new ShopMoveRefused(`${dataDir} holds no appliance (no state.json): nothing to move`);
  if (imagesDir) await refuseUsedImagesDir(imagesDir, dataDir);

  // Opened even when moved, so that a second move is refused with its own words (refuseMoved).
  const store = await Store.open(dataDir, { moved: 'open' });
  try {
    await refuseMoved(dataDir);
    const archive = await Archive.open(dataDir);
    const state = store.state;
    if (!state.installation) throw new ShopMoveRefused(`${dataDir} was never started (it has no installation id): nothing to move`);
    const source = readSource(state, archive, dataDir);
    const journalOnlyVouchers = (await readJsonLines<{ id: string }>(join(dataDir, VOUCHER_JOURNAL)))
      .map((line) => line.id)
      .filter((id) => !Object.hasOwn(state.vouchers, id));
    if (journalOnlyVouchers.length > 0)
      log(
        `warning: the voucher journal knows ${journalOnlyVouchers.length} redemption(s) the state does not (a restored state.json?); ` +
          'they are recorded with the move but the database cannot refuse them by itself',
      );

    const db = await PgDatabase.open(options.database, { maxConnections: 2 });
    const written: string[] = [];
    const marker = join(dataDir, MOVED_MARKER);
    // Folders of the shared directory the move makes go again with a rollback (they held nothing before).
    const madeDirs = imagesDir ? ['images', 'catalogue'].map((sub) => join(imagesDir, sub)).filter((dir) => !existsSync(dir)) : [];
    let outcome: Omit<ShopMoveReport, 'durationMs' | 'dataDir' | 'images' | 'journalOnlyVouchers' | 'sessionsDropped'>;
    try {
      outcome = await db.transaction(async (sql) => {
        written.length = 0;
        await sql.query('SELECT pg_advisory_xact_lock($1)', [MOVE_LOCK]);
        await refuseNonEmpty(sql);
        log(`copying the shop ${state.installation!.id} from ${dataDir}…`);
        const copied = await copy(sql, source, { dataDir, imagesDir, written, log });
        // Deferred checks (each try-on's credit against its ledger entries) now, not at the commit.
        await sql.query('SET CONSTRAINTS ALL IMMEDIATE');
        await options.beforeVerify?.(sql);
        const actual = await totalsIn(sql, now, imagesDir);
        const differences = compare(copied.expected(now), actual);
        if (differences.length > 0) throw new ShopMoveMismatch(differences);
        await sql.query('INSERT INTO shop_migrations (installation_id, from_data_dir, migrated_at, totals) VALUES ($1, $2, $3, $4)', [
          source.installationId,
          dataDir,
          now,
          JSON.stringify({ ...actual, missingImages: copied.missingImages, journalOnlyVouchers }),
        ]);
        // The data directory is marked before the commit: a crash in between leaves it marked and the database empty
        // (the move is made again once the marker is removed), never a shop in the database and a data directory that
        // could still be moved a second time.
        await writeFileDurably(
          marker,
          JSON.stringify(
            { installationId: source.installationId, database: redactUrl(options.database), movedAt: now.toISOString() },
            null,
            2,
          ) + '\n',
        );
        return {
          installationId: source.installationId,
          totals: actual,
          requeued: source.requeued,
          skippedEntries: source.skipped.map((entry) => entry.id),
          missingImages: copied.missingImages,
        };
      });
    } catch (error) {
      // The transaction is rolled back; so are the files it wrote into a shared directory, and the marker.
      for (const path of [...written, ...madeDirs, marker]) await rm(path, { force: true, recursive: true });
      throw explain(error);
    } finally {
      await db.close();
    }
    return {
      ...outcome,
      dataDir,
      images: imagesDir ?? 'database',
      sessionsDropped: Object.keys(state.gui.sessions).length,
      journalOnlyVouchers,
      durationMs: performance.now() - started,
    };
  } finally {
    await store.close();
  }
}

async function refuseMoved(dataDir: string): Promise<void> {
  const text = await readFile(join(dataDir, MOVED_MARKER), 'utf8').catch(() => null);
  if (text === null) return;
  let marker: { installationId?: string; database?: string; movedAt?: string } = {};
  try {
    marker = JSON.parse(text) as typeof marker;
  } catch {
    // Its presence is what counts.
  }
  throw new ShopMoveRefused(
    `${dataDir} was already moved to PostgreSQL (${marker.database ?? 'a database'}, at ${marker.movedAt ?? 'an unknown time'}): ` +
      'a shop is moved once; its credits would otherwise exist twice. ' +
      `If that database was lost and the move must be made again, remove ${join(dataDir, MOVED_MARKER)} first.`,
  );
}

async function refuseUsedImagesDir(imagesDir: string, dataDir: string): Promise<void> {
  if (imagesDir === dataDir) throw new ShopMoveRefused('--images-dir must be a new directory, not the data directory');
  for (const sub of ['images', 'catalogue']) {
    const entries = await readdir(join(imagesDir, sub)).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return [];
      throw error;
    });
    if (entries.length > 0)
      throw new ShopMoveRefused(
        `--images-dir ${imagesDir} already holds ${sub} (${entries.length} entries): give an empty or new directory`,
      );
  }
}

/** Tables a new database has no rows in (workers may have announced themselves: they hold nothing of a shop). */
const SHOP_TABLES = [
  'installation',
  'api_keys',
  'ledger',
  'generations',
  'vouchers',
  'idempotency',
  'webhook_secrets',
  'webhook_events',
  'gui_sessions',
  'garments',
  'gui_shares',
  'images',
  'catalogue_photos',
] as const;

async function refuseNonEmpty(sql: Sql): Promise<void> {
  const { rows: moved } = await sql.query<{ installation_id: string; from_data_dir: string; migrated_at: Date }>(
    'SELECT installation_id, from_data_dir, migrated_at FROM shop_migrations',
  );
  if (moved[0])
    throw new ShopMoveRefused(
      `this database already holds the shop ${moved[0].installation_id}, moved from ${moved[0].from_data_dir} at ` +
        `${moved[0].migrated_at.toISOString()}: a shop is moved once, into a new database`,
    );
  const counts = await sql.query<Record<string, number>>(
    `SELECT ${SHOP_TABLES.map((table) => `(SELECT count(*) FROM ${table})::integer AS ${table}`).join(', ')},
       (SELECT count(*) FROM credit_lots WHERE available <> 0 OR reserved <> 0 OR spent <> 0 OR expires_at IS NOT NULL)::integer AS credit_lots,
       (SELECT count(*) FROM shop_floor WHERE pin_hash IS NOT NULL OR gui_key_id IS NOT NULL OR erase_on_new_customer OR auto_capture
          OR pin_failures > 0)::integer AS shop_floor`,
  );
  const used = Object.entries(counts.rows[0]!).filter(([, n]) => n > 0);
  if (used.length > 0)
    throw new ShopMoveRefused(
      `the database is not empty (${used.map(([table, n]) => `${table}: ${n}`).join(', ')}): a shop moves only into a new, ` +
        'empty database (createdb …); nothing was written',
    );
}

/** The data directory as it will be copied, with what can be checked before the database is touched. */
interface Source {
  state: State;
  archive: Archive;
  dataDir: string;
  installationId: string;
  /** Every ledger entry the database can hold, in order. */
  entries: LedgerEntry[];
  /**
   * Entries that move no credit and that the database refuses (`amount > 0`): the trial of a shop run with
   * `--trial-credits 0`. Left out; the trial lot's expiry they set is set directly.
   */
  skipped: LedgerEntry[];
  /** Pending try-ons that were running when the appliance stopped. */
  requeued: number;
}

function readSource(state: State, archive: Archive, dataDir: string): Source {
  const all = [...allLedgerEntries(state, archive)];
  const ids = new Set<string>();
  for (const [i, entry] of all.entries()) {
    if (i > 0 && entry.seq <= all[i - 1]!.seq)
      throw new ShopMoveRefused(`the ledger of ${dataDir} is out of order at seq ${entry.seq}: it cannot be copied as it is`);
    if (ids.has(entry.id)) throw new ShopMoveRefused(`the ledger of ${dataDir} holds the entry ${entry.id} twice`);
    ids.add(entry.id);
  }
  // The state's base carries the archived entries' balances over; from zero, they must fold to the same.
  const fromZero = baseBalances(null);
  for (const entry of all) applyEntry(fromZero, entry);
  const appliance = balancesOf(state);
  const same =
    fromZero.spent === appliance.spent &&
    fromZero.trialExpiresAt === appliance.trialExpiresAt &&
    (['trial', 'paid'] as const).every(
      (lot) =>
        fromZero.lots[lot].available === appliance.lots[lot].available && fromZero.lots[lot].reserved === appliance.lots[lot].reserved,
    );
  if (!same)
    throw new ShopMoveRefused(
      `the archived ledger of ${dataDir} does not add up to the balances its state carries over (archive/ledger.jsonl incomplete?): ` +
        `from its entries ${JSON.stringify(fromZero.lots)}, spent ${fromZero.spent}; the appliance shows ${JSON.stringify(appliance.lots)}, ` +
        `spent ${appliance.spent}. Restore the archive before moving the shop.`,
    );
  let requeued = 0;
  for (const record of Object.values(state.generations)) if (record.status === 'pending' && record.stage === 'running') requeued++;
  const moves = (entry: LedgerEntry) => entry.amount !== 0 || entry.type === 'adjust';
  return {
    state,
    archive,
    dataDir,
    installationId: state.installation!.id,
    entries: all.filter(moves),
    skipped: all.filter((e) => !moves(e)),
    requeued,
  };
}

/** A try-on as it goes into the database: a pending one that nobody runs now is queued. */
function movedRecord(record: GenerationRecord): GenerationRecord {
  if (record.status !== 'pending' || record.stage === 'queued') return record;
  return { ...record, stage: 'queued' };
}

interface CopyContext {
  dataDir: string;
  imagesDir: string | null;
  /** Files and folders written into imagesDir, removed again if the transaction does not commit. */
  written: string[];
  log: (line: string) => void;
}

interface Copied {
  missingImages: string[];
  /** The totals the database must show at `now`. */
  expected(now: Date): ShopTotals;
}

async function copy(sql: Sql, source: Source, context: CopyContext): Promise<Copied> {
  const { state, entries } = source;
  const digests = new Digests();
  const lots = foldLots(entries);

  await sql.query('INSERT INTO installation (id, created_at) VALUES ($1, $2)', [state.installation!.id, state.installation!.createdAt]);

  // In one statement: a rotated key names its successor, which the statement inserts too.
  await sql.query(
    `INSERT INTO api_keys (id, name, scope, hash, prefix, created_at, revoked_at, expires_at, rotated_to, lineage_id)
     SELECT * FROM jsonb_to_recordset($1::jsonb) AS k(id text, name text, scope text, hash text, prefix text, created_at timestamptz,
       revoked_at timestamptz, expires_at timestamptz, rotated_to text, lineage_id text)`,
    [JSON.stringify(state.keys.map(keyRow))],
  );
  for (const key of state.keys) digests.add('keys', key.id, keyLine(keyRow(key)));

  const gui = state.gui;
  await sql.query(
    `UPDATE shop_floor SET pin_hash = $1, gui_key_id = $2, erase_on_new_customer = $3, auto_capture = $4, pin_failures = $5,
       pin_blocked_until = $6`,
    [
      gui.pinHash,
      gui.keyId,
      gui.eraseOnNewCustomer ?? false,
      gui.autoCapture ?? false,
      gui.pinThrottle?.failures ?? 0,
      gui.pinThrottle?.blockedUntil ?? null,
    ],
  );
  digests.add('rest', 'shop_floor', shopFloorLine(shopFloorOf(state)));

  await sql.query(
    `INSERT INTO webhook_secrets (secret, created_at, expires_at)
     SELECT * FROM jsonb_to_recordset($1::jsonb) AS s(secret text, created_at timestamptz, expires_at timestamptz)`,
    [JSON.stringify(state.webhookSecrets.map((s) => ({ secret: s.secret, created_at: s.createdAt, expires_at: s.expiresAt ?? null })))],
  );
  for (const s of state.webhookSecrets) digests.add('rest', `secret ${s.secret}`, JSON.stringify([s.createdAt, s.expiresAt ?? null]));

  for (let i = 0; i < entries.length; i += BATCH) {
    const rows = entries.slice(i, i + BATCH).map(ledgerRow);
    // Their own seq numbers, in order: each entry's trigger sees the entries before it (a capture its reservation).
    await sql.query(
      `INSERT INTO ledger (seq, id, type, amount, lot, at, gen_id, expires_at, note) OVERRIDING SYSTEM VALUE
       SELECT * FROM jsonb_to_recordset($1::jsonb) AS e(seq bigint, id text, type text, amount integer, lot text, at timestamptz,
         gen_id text, expires_at timestamptz, note text)
       ORDER BY seq`,
      [JSON.stringify(rows)],
    );
  }
  for (const entry of entries) digests.add('ledger', String(entry.seq).padStart(16, '0'), ledgerLine(ledgerRow(entry)));
  if (entries.length > 0) await sql.query(`SELECT setval(pg_get_serial_sequence('ledger', 'seq'), $1)`, [entries[entries.length - 1]!.seq]);
  const trialExpiresAt = balancesOf(state).trialExpiresAt;
  if (source.skipped.some((entry) => entry.type === 'trial'))
    await sql.query(`UPDATE credit_lots SET expires_at = $1 WHERE lot = 'trial'`, [trialExpiresAt]);
  context.log(`  ${entries.length} ledger entries`);

  // Try-ons in batches, each with its images, one image at a time: a large shop is never held in memory whole.
  const byStatus: Record<GenerationStatus, number> = { pending: 0, complete: 0, failed: 0, canceled: 0 };
  const generationIds = new Set<string>();
  const images = new ImageCopier(sql, context, digests);
  let batch: GenerationRecord[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    await sql.query(`INSERT INTO generations (id, record) SELECT r ->> 'id', r FROM jsonb_array_elements($1::jsonb) AS r`, [
      JSON.stringify(batch),
    ]);
    for (const record of batch) for (const image of imagesOf(record)) await images.tryOnImage(record, image);
    batch = [];
    context.log(`  ${generationIds.size} try-ons, ${images.count} images`);
  };
  for (const original of allGenerations(state, source.archive)) {
    const record = movedRecord(original);
    byStatus[record.status]++;
    generationIds.add(record.id);
    digests.add('generations', record.id, canonicalJson(record));
    batch.push(record);
    if (batch.length >= BATCH) await flush();
  }
  await flush();

  const vouchers = Object.values(state.vouchers);
  await sql.query(
    `INSERT INTO vouchers (id, credits, redeemed_at, key_id)
     SELECT * FROM jsonb_to_recordset($1::jsonb) AS v(id text, credits integer, redeemed_at timestamptz, key_id text)`,
    [JSON.stringify(vouchers.map((v) => ({ id: v.id, credits: v.credits, redeemed_at: v.redeemedAt, key_id: v.keyId })))],
  );
  for (const v of vouchers) digests.add('vouchers', v.id, JSON.stringify([v.credits, v.redeemedAt, v.keyId]));

  // A stored reply to a submit names its try-on: the database ties the reply to it (retention erases both).
  const usedGenIds = new Set<string>();
  const replies = Object.values(state.idempotency).map((record) => {
    let genId: string | null = null;
    try {
      const body = JSON.parse(record.body) as { genId?: unknown };
      if (typeof body.genId === 'string' && generationIds.has(body.genId) && !usedGenIds.has(body.genId)) genId = body.genId;
    } catch {
      // A reply that is not JSON names no try-on.
    }
    if (genId) usedGenIds.add(genId);
    return {
      scope: record.scope,
      key: record.key,
      fingerprint: record.fingerprint,
      token: randomUUID(),
      gen_id: genId,
      status: record.status,
      headers: record.headers,
      body: record.body,
      created_at: record.createdAt,
      expires_at: record.expiresAt,
    };
  });
  await sql.query(
    `INSERT INTO idempotency (scope, key, fingerprint, token, gen_id, status, headers, body, created_at, expires_at)
     SELECT * FROM jsonb_to_recordset($1::jsonb) AS i(scope text, key text, fingerprint text, token text, gen_id text, status integer,
       headers jsonb, body text, created_at timestamptz, expires_at timestamptz)`,
    [JSON.stringify(replies)],
  );
  for (const r of replies) digests.add('rest', `reply ${r.scope}\n${r.key}`, replyLine(r));

  const events = Object.values(state.webhookEvents);
  await sql.query(
    `INSERT INTO webhook_events (id, gen_id, event, created_at)
     SELECT e ->> 'id', e ->> 'genId', e, (e ->> 'createdAt')::timestamptz FROM jsonb_array_elements($1::jsonb) AS e`,
    [JSON.stringify(events)],
  );
  for (const event of events) digests.add('events', event.id, canonicalJson(event));

  const garments = Object.values(gui.garments);
  await sql.query(`INSERT INTO garments (id, record) SELECT g ->> 'id', g FROM jsonb_array_elements($1::jsonb) AS g`, [
    JSON.stringify(garments),
  ]);
  for (const garment of garments) {
    digests.add('garments', garment.id, canonicalJson(garment));
    for (const photo of photosOf(garment)) await images.cataloguePhoto(photo);
  }

  const shares = Object.entries(gui.shares ?? {}).map(([genId, share]) => ({
    gen_id: genId,
    hash: share.hash,
    expires_at: share.expiresAt,
  }));
  await sql.query(
    `INSERT INTO gui_shares (gen_id, hash, expires_at)
     SELECT * FROM jsonb_to_recordset($1::jsonb) AS s(gen_id text, hash text, expires_at timestamptz)`,
    [JSON.stringify(shares)],
  );
  for (const share of shares) digests.add('rest', `share ${share.gen_id}`, JSON.stringify([share.hash, share.expires_at]));
  context.log(`  ${garments.length} garments, ${images.photos} catalogue photos, ${events.length} webhook events`);

  return {
    missingImages: images.missing,
    expected: (now) => ({
      installationId: source.installationId,
      lots,
      trialExpiresAt,
      account: accountSummary(state, now),
      keys: state.keys.length,
      ledgerEntries: entries.length,
      lastSeq: entries[entries.length - 1]?.seq ?? 0,
      generations: byStatus,
      vouchers: vouchers.length,
      voucherCredits: vouchers.reduce((sum, v) => sum + v.credits, 0),
      idempotencyReplies: replies.length,
      webhookSecrets: state.webhookSecrets.length,
      webhookEvents: events.length,
      garments: garments.length,
      cataloguePhotos: images.photos,
      shares: shares.length,
      images: images.count,
      imageBytes: images.bytes,
      digests: digests.done(),
    }),
  };
}

/** Copies images one at a time, into the database or the shared directory, noting each one's SHA-256. */
class ImageCopier {
  count = 0;
  bytes = 0;
  photos = 0;
  readonly missing: string[] = [];
  private readonly directory: DirectoryImageStore | null;

  constructor(
    private readonly sql: Sql,
    private readonly context: CopyContext,
    private readonly digests: Digests,
  ) {
    this.directory = context.imagesDir ? new DirectoryImageStore(context.imagesDir) : null;
  }

  async tryOnImage(record: GenerationRecord, image: StoredImage): Promise<void> {
    const { genId, name, format } = parseImageFile(image);
    if (genId !== record.id) throw new ShopMoveRefused(`the try-on ${record.id} names an image of another try-on: ${image.file}`);
    const bytes = await this.read(image);
    if (!bytes) return;
    if (this.directory) {
      this.context.written.push(join(this.context.imagesDir!, 'images', genId));
      await this.directory.put(genId, name, bytes, { format, width: image.width, height: image.height });
    } else {
      await this.sql.query('INSERT INTO images (gen_id, name, format, width, height, bytes) VALUES ($1, $2, $3, $4, $5, $6)', [
        genId,
        name,
        format,
        image.width,
        image.height,
        bytes,
      ]);
    }
    this.count++;
    this.bytes += bytes.length;
    this.digests.add('images', `${genId}/${name}`, imageLine(format, image.width, image.height, sha256(bytes)));
  }

  async cataloguePhoto(photo: StoredImage): Promise<void> {
    if (!CATALOGUE_FILE.test(photo.file) || !photo.file.endsWith(`.${EXTENSIONS[photo.format]}`))
      throw new ShopMoveRefused(`a garment names a photo that is not a catalogue file: ${JSON.stringify(photo.file)}`);
    const bytes = await this.read(photo);
    if (!bytes) return;
    if (this.context.imagesDir) {
      const path = join(this.context.imagesDir, photo.file);
      await mkdirDurably(join(this.context.imagesDir, 'catalogue'));
      this.context.written.push(path);
      await writeFileDurably(path, bytes);
    } else {
      await this.sql.query('INSERT INTO catalogue_photos (file, format, width, height, bytes) VALUES ($1, $2, $3, $4, $5)', [
        photo.file,
        photo.format,
        photo.width,
        photo.height,
        bytes,
      ]);
    }
    this.photos++;
    this.digests.add('photos', photo.file, imageLine(photo.format, photo.width, photo.height, sha256(bytes)));
  }

  private async read(image: StoredImage): Promise<Buffer | null> {
    try {
      return await readFile(join(this.context.dataDir, image.file));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      this.missing.push(image.file);
      return null;
    }
  }
}

/** What the database holds now, in the terms of ShopTotals (read inside the move's transaction). */
async function totalsIn(sql: Sql, now: Date, imagesDir: string | null): Promise<ShopTotals> {
  const digests = new Digests();
  const lotRows = (
    await sql.query<{ lot: CreditLot; available: number; reserved: number; spent: number; expires_at: Date | null }>(
      'SELECT * FROM credit_lots',
    )
  ).rows;
  const lot = (name: CreditLot) => lotRows.find((row) => row.lot === name)!;
  const lots = {
    trial: { available: lot('trial').available, reserved: lot('trial').reserved, spent: lot('trial').spent },
    paid: { available: lot('paid').available, reserved: lot('paid').reserved, spent: lot('paid').spent },
  };
  const trialExpiresAt = lot('trial').expires_at?.toISOString() ?? null;
  const account = summaryOfLots(lots, trialExpiresAt, now);

  const installation = (await sql.query<{ id: string }>('SELECT id FROM installation')).rows[0]?.id ?? '(none)';

  const keys = (await sql.query<Record<string, unknown>>('SELECT * FROM api_keys')).rows;
  for (const row of keys) digests.add('keys', row.id as string, keyLine(datesToIso(row)));

  digests.add(
    'rest',
    'shop_floor',
    shopFloorLine(datesToIso((await sql.query<Record<string, unknown>>('SELECT * FROM shop_floor')).rows[0]!)),
  );
  const secrets = (await sql.query<{ secret: string; created_at: Date; expires_at: Date | null }>('SELECT * FROM webhook_secrets')).rows;
  for (const s of secrets)
    digests.add('rest', `secret ${s.secret}`, JSON.stringify([s.created_at.toISOString(), s.expires_at?.toISOString() ?? null]));

  let ledgerEntries = 0;
  let lastSeq = 0;
  await pages(
    sql,
    'SELECT * FROM ledger WHERE seq > $1 ORDER BY seq LIMIT 5000',
    (row) => row.seq as number,
    (row) => {
      const entry = datesToIso(row);
      ledgerEntries++;
      lastSeq = entry.seq as number;
      digests.add('ledger', String(entry.seq).padStart(16, '0'), ledgerLine(entry));
    },
  );

  const generations: Record<GenerationStatus, number> = { pending: 0, complete: 0, failed: 0, canceled: 0 };
  await pages(
    sql,
    'SELECT id, record FROM generations WHERE id > $1 ORDER BY id LIMIT 1000',
    (row) => row.id as string,
    (row) => {
      const record = row.record as GenerationRecord;
      generations[record.status]++;
      digests.add('generations', record.id, canonicalJson(record));
    },
    '',
  );

  const vouchers = (await sql.query<{ id: string; credits: number; redeemed_at: Date; key_id: string }>('SELECT * FROM vouchers')).rows;
  for (const v of vouchers) digests.add('vouchers', v.id, JSON.stringify([v.credits, v.redeemed_at.toISOString(), v.key_id]));

  const replies = (await sql.query<Record<string, unknown>>('SELECT * FROM idempotency')).rows;
  for (const r of replies) digests.add('rest', `reply ${r.scope as string}\n${r.key as string}`, replyLine(datesToIso(r)));

  const events = (await sql.query<{ event: WebhookEvent }>('SELECT event FROM webhook_events')).rows;
  for (const { event } of events) digests.add('events', event.id, canonicalJson(event));

  const garments = (await sql.query<{ record: CatalogueGarment }>('SELECT record FROM garments')).rows;
  for (const { record } of garments) digests.add('garments', record.id, canonicalJson(record));

  const shares = (await sql.query<{ gen_id: string; hash: string; expires_at: Date }>('SELECT * FROM gui_shares')).rows;
  for (const s of shares) digests.add('rest', `share ${s.gen_id}`, JSON.stringify([s.hash, s.expires_at.toISOString()]));

  let images = 0;
  let imageBytes = 0;
  let cataloguePhotos = 0;
  if (imagesDir) {
    // What the shared directory holds, read back: every try-on's images a record names, and the garments' photos.
    const store = new DirectoryImageStore(imagesDir);
    await pages(
      sql,
      'SELECT id, record FROM generations WHERE id > $1 ORDER BY id LIMIT 1000',
      (row) => row.id as string,
      async (row) => {
        for (const image of imagesOf(row.record as GenerationRecord)) {
          const bytes = await store.get(image).catch(() => null);
          if (!bytes) continue;
          const { genId, name, format } = parseImageFile(image);
          images++;
          imageBytes += bytes.length;
          digests.add('images', `${genId}/${name}`, imageLine(format, image.width, image.height, sha256(bytes)));
        }
      },
      '',
    );
    for (const { record } of garments)
      for (const photo of photosOf(record)) {
        const bytes = await readFile(join(imagesDir, photo.file)).catch(() => null);
        if (!bytes) continue;
        cataloguePhotos++;
        digests.add('photos', photo.file, imageLine(photo.format, photo.width, photo.height, sha256(bytes)));
      }
  } else {
    await pages(
      sql,
      `SELECT gen_id || '/' || name AS key, format, width, height, byte_size, encode(sha256(bytes), 'hex') AS hash
       FROM images WHERE gen_id || '/' || name > $1 ORDER BY gen_id || '/' || name LIMIT 1000`,
      (row) => row.key as string,
      (row) => {
        images++;
        imageBytes += row.byte_size as number;
        digests.add(
          'images',
          row.key as string,
          imageLine(row.format as string, row.width as number, row.height as number, row.hash as string),
        );
      },
      '',
    );
    const photos = (
      await sql.query<{ file: string; format: string; width: number; height: number; hash: string }>(
        `SELECT file, format, width, height, encode(sha256(bytes), 'hex') AS hash FROM catalogue_photos`,
      )
    ).rows;
    for (const p of photos) digests.add('photos', p.file, imageLine(p.format, p.width, p.height, p.hash));
    cataloguePhotos = photos.length;
  }

  return {
    installationId: installation,
    lots,
    trialExpiresAt,
    account,
    keys: keys.length,
    ledgerEntries,
    lastSeq,
    generations,
    vouchers: vouchers.length,
    voucherCredits: vouchers.reduce((sum, v) => sum + v.credits, 0),
    idempotencyReplies: replies.length,
    webhookSecrets: secrets.length,
    webhookEvents: events.length,
    garments: garments.length,
    cataloguePhotos,
    shares: shares.length,
    images,
    imageBytes,
    digests: digests.done(),
  };
}

/** Reads a query page by page (keyset: `$1` is the last key seen), so a large table is never held whole. */
async function pages(
  sql: Sql,
  query: string,
  keyOf: (row: Record<string, unknown>) => string | number,
  each: (row: Record<string, unknown>) => void | Promise<void>,
  first: string | number = 0,
): Promise<void> {
  let after: string | number = first;
  for (;;) {
    const { rows } = await sql.query<Record<string, unknown>>(query, [after]);
    for (const row of rows) await each(row);
    if (rows.length === 0) return;
    after = keyOf(rows[rows.length - 1]!);
  }
}

/** Each difference between what the data directory holds and what the database holds, in words. */
export function compare(expected: ShopTotals, actual: ShopTotals): string[] {
  const differences: string[] = [];
  const walk = (path: string, a: unknown, b: unknown) => {
    if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object') {
      for (const key of new Set([...Object.keys(a), ...Object.keys(b)]))
        walk(path ? `${path}.${key}` : key, (a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]);
    } else if (a !== b) differences.push(`${path}: the data directory has ${JSON.stringify(a)}, the database ${JSON.stringify(b)}`);
  };
  walk('', expected, actual);
  return differences;
}

/** The balance of each lot, per lot (the appliance's own fold keeps one `spent` for both). */
function foldLots(entries: readonly LedgerEntry[]): Record<CreditLot, LotTotals> {
  const balances = baseBalances(null);
  const spent: Record<CreditLot, number> = { trial: 0, paid: 0 };
  for (const entry of entries) {
    applyEntry(balances, entry);
    if (entry.type === 'capture') spent[entry.lot] += entry.amount;
  }
  return {
    trial: { ...balances.lots.trial, spent: spent.trial },
    paid: { ...balances.lots.paid, spent: spent.paid },
  };
}

function imagesOf(record: GenerationRecord): StoredImage[] {
  return [...(record.inputs ? [record.inputs.selfie, ...record.inputs.items] : []), ...(record.result ? [record.result] : [])];
}

function keyRow(key: ApiKeyRecord) {
  return {
    id: key.id,
    name: key.name,
    scope: key.scope,
    hash: key.hash,
    prefix: key.prefix,
    created_at: key.createdAt,
    revoked_at: key.revokedAt ?? null,
    expires_at: key.expiresAt ?? null,
    rotated_to: key.rotatedTo ?? null,
    lineage_id: key.lineageId,
  };
}

function ledgerRow(entry: LedgerEntry) {
  return {
    seq: entry.seq,
    id: entry.id,
    type: entry.type,
    amount: entry.amount,
    lot: entry.lot,
    at: entry.at,
    gen_id: entry.genId ?? null,
    expires_at: entry.expiresAt ?? null,
    note: entry.note ?? null,
  };
}

function shopFloorOf(state: State): Record<string, unknown> {
  return {
    pin_hash: state.gui.pinHash,
    gui_key_id: state.gui.keyId,
    erase_on_new_customer: state.gui.eraseOnNewCustomer ?? false,
    auto_capture: state.gui.autoCapture ?? false,
    pin_failures: state.gui.pinThrottle?.failures ?? 0,
    pin_blocked_until: state.gui.pinThrottle?.blockedUntil ?? null,
  };
}

/** One line per row, the same whichever side it was read from (timestamps as ISO strings). */
const pick = (row: Record<string, unknown>, columns: readonly string[]) => JSON.stringify(columns.map((column) => row[column] ?? null));
const keyLine = (row: Record<string, unknown>) =>
  pick(row, ['name', 'scope', 'hash', 'prefix', 'created_at', 'revoked_at', 'expires_at', 'rotated_to', 'lineage_id']);
const ledgerLine = (row: Record<string, unknown>) =>
  pick(row, ['seq', 'id', 'type', 'amount', 'lot', 'at', 'gen_id', 'expires_at', 'note']);
const shopFloorLine = (row: Record<string, unknown>) =>
  pick(row, ['pin_hash', 'gui_key_id', 'erase_on_new_customer', 'auto_capture', 'pin_failures', 'pin_blocked_until']);
const replyLine = (row: Record<string, unknown>) =>
  `${pick(row, ['fingerprint', 'gen_id', 'status', 'body', 'created_at', 'expires_at'])} ${canonicalJson(row.headers)}`;
const imageLine = (format: string, width: number, height: number, hash: string) => JSON.stringify([format, width, height, hash]);

/** A database row with its timestamps as ISO strings, as the data directory writes them. */
function datesToIso(row: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(row).map(([key, value]) => [key, value instanceof Date ? value.toISOString() : value]));
}

/** JSON with object keys sorted: the same text for a record whichever order its keys were stored in (jsonb sorts them). */
function canonicalJson(value: unknown): string {
  const sorted = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sorted)
      : v !== null && typeof v === 'object'
        ? Object.fromEntries(
            Object.keys(v)
              .filter((key) => (v as Record<string, unknown>)[key] !== undefined)
              .sort()
              .map((key) => [key, sorted((v as Record<string, unknown>)[key])]),
          )
        : v;
  return JSON.stringify(sorted(value));
}

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** SHA-256 digests of tables, each over its rows' lines sorted by key (so either side may read them in any order). */
class Digests {
  private readonly lines = new Map<keyof ShopTotals['digests'], Map<string, string>>();

  add(table: keyof ShopTotals['digests'], key: string, line: string): void {
    let rows = this.lines.get(table);
    if (!rows) this.lines.set(table, (rows = new Map()));
    // Each row kept as its own hash (a large shop's rows are never held whole); a key seen twice (a copy made
    // twice) changes the digest rather than replacing the first.
    rows.set(rows.has(key) ? `${key}\u0000${rows.size}` : key, createHash('sha256').update(line).digest('base64'));
  }

  done(): ShopTotals['digests'] {
    const digest = (table: keyof ShopTotals['digests']) => {
      const hash = createHash('sha256');
      const rows = this.lines.get(table) ?? new Map<string, string>();
      for (const key of [...rows.keys()].sort()) hash.update(`${key}\t${rows.get(key)}\n`);
      return hash.digest('hex').slice(0, 16);
    };
    return {
      keys: digest('keys'),
      ledger: digest('ledger'),
      generations: digest('generations'),
      vouchers: digest('vouchers'),
      events: digest('events'),
      garments: digest('garments'),
      images: digest('images'),
      photos: digest('photos'),
      rest: digest('rest'),
    };
  }
}

/** A database refusal with what it means for the move. */
function explain(error: unknown): unknown {
  if (error instanceof ShopMoveRefused || error instanceof ShopMoveMismatch) return error;
  const constraint = constraintOf(error);
  if (constraint && error instanceof Error)
    return new ShopMoveRefused(
      `the database refused the data directory's records (${constraint}: ${error.message}), so nothing was written (rolled back)`,
    );
  return error;
}
