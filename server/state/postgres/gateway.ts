/**
 * The state gateway on PostgreSQL, shared by every API process and worker of one shop. Each operation is one
 * transaction that takes the row locks it needs (the two credit lots, a try-on, an Idempotency-Key) in one order:
 * key, then lots, then try-on. The schema (migrations.ts) holds the invariants as well, so a bug here fails a
 * transaction instead of breaking the books.
 */
import { randomUUID } from 'node:crypto';
import { noCredits, summaryOfLots, type AccountSummary } from '../../credits/ledger.ts';
import type { LedgerPage } from '../../credits/history.ts';
import { usageReport, type UsageGeneration, type UsageQuery, type UsageReport } from '../../credits/usage.ts';
import { ApiError } from '../../kernel/errors.ts';
import { claimLost } from '../../idempotency/idempotency.ts';
import { newId } from '../../kernel/ids.ts';
import { eraseRecord, markSettled, newGenerationRecord, type NewGeneration } from '../../jobs/generations.ts';
import type { CreditLot, GenerationRecord, IdempotencyRecord, LedgerEntry, LedgerEntryType, WebhookEvent } from '../../store/schema.ts';
import type { Redemption } from '../../vouchers/redeem.ts';
import type { VoucherPayload } from '../../vouchers/voucher.ts';
import { restartDelivery, terminalEvent } from '../../webhooks/outbox.ts';
import type { Admission, Erased, GenerationQuery, IdempotencyClaim, ReplyToRemember, StateGateway, SubmitResult } from '../types.ts';
import { PgDatabase, type Sql } from './db.ts';
import { notifyQueued, notifySettled } from './notices.ts';

interface LotRow {
  lot: CreditLot;
  available: number;
  reserved: number;
  expires_at: Date | null;
}

interface LedgerRow {
  seq: number;
  id: string;
  type: LedgerEntryType;
  amount: number;
  lot: CreditLot;
  at: Date;
  gen_id: string | null;
  expires_at: Date | null;
  note: string | null;
}

export class PgState implements StateGateway {
  private constructor(readonly db: PgDatabase) {}

  /** Connects, migrating the schema first (refused when the database is newer than this code). */
  static async open(url: string, options: { maxConnections?: number } = {}): Promise<PgState> {
    return new PgState(await PgDatabase.open(url, options));
  }

  grantTrial(credits: number, validDays: number, now: Date): Promise<void> {
    return this.db.transaction(async (sql) => {
      const { rows } = await sql.query<LotRow>(`SELECT * FROM credit_lots WHERE lot = 'trial' FOR UPDATE`);
      if (rows[0]?.expires_at) return;
      const expiresAt = new Date(now.getTime() + validDays * 86_400_000);
      await append(sql, now, {
        type: 'trial',
        amount: credits,
        lot: 'trial',
        expiresAt,
        note: `${credits} trial credits for a new installation`,
      });
    });
  }

  async account(now: Date): Promise<AccountSummary> {
    const { rows } = await this.db.query<LotRow>('SELECT * FROM credit_lots');
    return summaryOf(rows, now);
  }

  expireDueCredits(now: Date): Promise<number> {
    return this.db.transaction(async (sql) => expireDue(sql, await lockLots(sql), now));
  }

  async ledgerPage(before: number | null, limit: number): Promise<LedgerPage> {
    const { rows } = await this.db.query<LedgerRow>('SELECT * FROM ledger WHERE seq < $1 ORDER BY seq DESC LIMIT $2', [
      before ?? Number.MAX_SAFE_INTEGER,
      limit + 1,
    ]);
    const entries = rows.slice(0, limit).map(entryOf);
    return { entries, nextBefore: rows.length > limit ? entries[entries.length - 1]!.seq : null };
  }

  async usage(query: UsageQuery): Promise<UsageReport> {
    const [from, to] = [query.from.toISOString(), query.to.toISOString()];
    // ISO times of one format order as text; only what falls in the query's span is read.
    const generations = await this.db.query<UsageGeneration>(
      `SELECT record ->> 'createdAt' AS "createdAt", status, record ->> 'completedAt' AS "completedAt" FROM generations
       WHERE (created_at >= $1 AND created_at < $2) OR (record ->> 'completedAt' >= $1 AND record ->> 'completedAt' < $2)`,
      [from, to],
    );
    const captures = await this.db.query<{ type: 'capture'; amount: number; at: Date }>(
      `SELECT type, amount, at FROM ledger WHERE type = 'capture' AND at >= $1 AND at < $2`,
      [query.from, query.to],
    );
    const entries = captures.rows.map((row) => ({ type: row.type, amount: row.amount, at: row.at.toISOString() }));
    return usageReport(query, generations.rows.map(withoutNulls), entries);
  }

  redeemVoucher(voucher: VoucherPayload, keyId: string, now: Date): Promise<Redemption> {
    return this.db.transaction(async (sql) => {
      const inserted = await sql.query(
        'INSERT INTO vouchers (id, credits, redeemed_at, key_id) VALUES ($1, $2, $3, $4) ON CONFLICT (id) DO NOTHING',
        [voucher.id, voucher.credits, now, keyId],
      );
      if (inserted.rowCount === 0) {
        const { rows } = await sql.query<{ redeemed_at: Date }>('SELECT redeemed_at FROM vouchers WHERE id = $1', [voucher.id]);
        throw new ApiError('conflict', `The voucher ${voucher.id} was already redeemed at ${rows[0]!.redeemed_at.toISOString()}.`);
      }
      await append(sql, now, { type: 'redeem', amount: voucher.credits, lot: 'paid', note: `voucher ${voucher.id}` });
      const lots = await sql.query<LotRow>('SELECT * FROM credit_lots');
      return { voucherId: voucher.id, creditsAdded: voucher.credits, creditsRemaining: summaryOf(lots.rows, now).creditsRemaining };
    });
  }

  admit(scope: string, key: string, fingerprint: string, now: Date, leaseSeconds: number): Promise<Admission> {
    return this.db.transaction(async (sql) => {
      const token = randomUUID();
      const leaseUntil = new Date(now.getTime() + leaseSeconds * 1000);
      const claim: IdempotencyClaim = { scope, key, fingerprint, token };
      const inserted = await sql.query(
        `INSERT INTO idempotency (scope, key, fingerprint, token, lease_until) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (scope, key) DO NOTHING`,
        [scope, key, fingerprint, token, leaseUntil],
      );
      if (inserted.rowCount === 1) return { kind: 'execute', claim };
      const { rows } = await sql.query<IdempotencyRow>('SELECT * FROM idempotency WHERE scope = $1 AND key = $2 FOR UPDATE', [scope, key]);
      const row = rows[0]!;
      const stored = row.status !== null && row.expires_at!.getTime() > now.getTime();
      const executing = row.status === null && row.lease_until!.getTime() > now.getTime();
      if (stored || executing) {
        if (row.fingerprint !== fingerprint)
          throw new ApiError('idempotency_key_reused', 'This Idempotency-Key was used with a different request.');
        if (stored) return { kind: 'replay', record: recordOf(row) };
        throw new ApiError('idempotency_key_in_use', 'A request with this Idempotency-Key is still executing.', { retryAfterSeconds: 1 });
      }
      // An expired reply, or a holder whose process died: the key starts over.
      await sql.query(
        `UPDATE idempotency SET fingerprint = $3, token = $4, lease_until = $5, gen_id = NULL, status = NULL, headers = NULL,
           body = NULL, created_at = NULL, expires_at = NULL WHERE scope = $1 AND key = $2`,
        [scope, key, fingerprint, token, leaseUntil],
      );
      return { kind: 'execute', claim };
    });
  }

  async release(claim: IdempotencyClaim): Promise<void> {
    await this.db.query('DELETE FROM idempotency WHERE scope = $1 AND key = $2 AND token = $3 AND status IS NULL', [
      claim.scope,
      claim.key,
      claim.token,
    ]);
  }

  submit(input: NewGeneration, now: Date, reply?: ReplyToRemember): Promise<SubmitResult> {
    return this.db.transaction(async (sql) => {
      if (reply) {
        const { claim } = reply;
        const held = await sql.query(
          'SELECT 1 FROM idempotency WHERE scope = $1 AND key = $2 AND token = $3 AND status IS NULL FOR UPDATE',
          [claim.scope, claim.key, claim.token],
        );
        if (held.rowCount === 0) throw claimLost();
      }
      const lots = await lockLots(sql);
      await expireDue(sql, lots, now);
      const summary = summaryOf(lots, now);
      const lot: CreditLot | null = summary.trialCreditsRemaining > 0 ? 'trial' : lotOf(lots, 'paid').available > 0 ? 'paid' : null;
      if (lot === null) throw noCredits();
      await append(sql, now, { type: 'reserve', amount: 1, lot, genId: input.id });
      const record = newGenerationRecord(input, now);
      await sql.query('INSERT INTO generations (id, record) VALUES ($1, $2)', [record.id, record]);
      await notifyQueued(sql, record.engine);
      const creditsRemaining = summary.creditsRemaining - 1;
      let body: string | null = null;
      if (reply) {
        body = reply.body({ genId: record.id, creditsRemaining });
        await sql.query(
          `UPDATE idempotency SET lease_until = NULL, gen_id = $3, status = $4, headers = $5, body = $6, created_at = $7, expires_at = $8
           WHERE scope = $1 AND key = $2`,
          [
            reply.claim.scope,
            reply.claim.key,
            record.id,
            reply.status,
            reply.headers,
            body,
            now,
            new Date(now.getTime() + reply.retentionHours * 3_600_000),
          ],
        );
      }
      return { record, creditsRemaining, body };
    });
  }

  async generation(id: string): Promise<GenerationRecord | undefined> {
    const { rows } = await this.db.query<{ record: GenerationRecord }>('SELECT record FROM generations WHERE id = $1', [id]);
    return rows[0]?.record;
  }

  startAttempt(id: string, now: Date): Promise<boolean> {
    return this.db.transaction(async (sql) => {
      const record = await lockGeneration(sql, id);
      if (!record || record.status !== 'pending') return false;
      record.stage = 'running';
      record.attempts += 1;
      record.startedAt = now.toISOString();
      await sql.query('UPDATE generations SET record = $2 WHERE id = $1', [id, record]);
      return true;
    });
  }

  complete(...[id, result, now]: Parameters<StateGateway['complete']>): Promise<boolean> {
    return this.settle(id, now, (record) => {
      if (record?.status !== 'pending') return false;
      record.result = result;
      return 'complete';
    });
  }

  fail(...[id, error, now]: Parameters<StateGateway['fail']>): Promise<boolean> {
    return this.settle(id, now, (record) => {
      if (record?.status !== 'pending') return false;
      record.error = error;
      return 'failed';
    });
  }

  async cancel(id: string, now: Date): Promise<GenerationRecord> {
    let canceled: GenerationRecord | undefined;
    await this.settle(id, now, (record) => {
      if (!record) throw new ApiError('not_found', `There is no try-on ${id}.`);
      if (record.status !== 'pending') throw new ApiError('conflict', `The try-on ${id} is already ${record.status}.`);
      canceled = record;
      return 'canceled';
    });
    return canceled!;
  }

  async generations(query: GenerationQuery): Promise<GenerationRecord[]> {
    const { rows } = await this.db.query<{ record: GenerationRecord }>(
      `SELECT record FROM generations
       WHERE ($1::text IS NULL OR status = $1) AND ($2::text IS NULL OR id < $2) AND ($3::text[] IS NULL OR key_id = ANY ($3))
       ORDER BY id DESC LIMIT $4`,
      [query.status ?? null, query.before ?? null, query.keyIds ? [...query.keyIds] : null, query.limit],
    );
    return rows.map((row) => row.record);
  }

  async pendingCount(): Promise<number> {
    const { rows } = await this.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM generations WHERE status = 'pending'`);
    return rows[0]!.n;
  }

  erase(id: string, now: Date): Promise<Erased> {
    return this.db.transaction(async (sql) => {
      const record = await lockGeneration(sql, id);
      if (!record) throw new ApiError('not_found', `There is no try-on ${id}.`);
      if (record.erased) return { record, canceled: false };
      const canceled = record.status === 'pending';
      if (canceled) await settleLocked(sql, record, 'canceled', now);
      eraseRecord(record, 'all');
      await sql.query('UPDATE generations SET record = $2 WHERE id = $1', [id, record]);
      return { record, canceled };
    });
  }

  redeliver(genId: string, now: Date): Promise<WebhookEvent> {
    return this.db.transaction(async (sql) => {
      const record = await lockGeneration(sql, genId);
      if (!record) throw new ApiError('not_found', `There is no try-on ${genId}.`);
      const { rows } = await sql.query<{ event: WebhookEvent }>('SELECT event FROM webhook_events WHERE gen_id = $1 FOR UPDATE', [genId]);
      const event = restartDelivery(record, rows[0]?.event, now);
      await sql.query('UPDATE webhook_events SET event = $2 WHERE id = $1', [event.id, event]);
      return event;
    });
  }

  async webhookEvents(genId: string): Promise<WebhookEvent[]> {
    const { rows } = await this.db.query<{ event: WebhookEvent }>(
      'SELECT event FROM webhook_events WHERE gen_id = $1 ORDER BY created_at, id',
      [genId],
    );
    return rows.map((row) => row.event);
  }

  close(): Promise<void> {
    return this.db.close();
  }

  /**
   * Makes a pending try-on terminal in one transaction: the ledger entry that captures or releases its credit, the
   * record, and its webhook event. `decide` sees the locked record (undefined if there is none) and returns the new
   * status, or false to change nothing.
   */
  private settle(
    id: string,
    now: Date,
    decide: (record: GenerationRecord | undefined) => Exclude<GenerationRecord['status'], 'pending'> | false,
  ): Promise<boolean> {
    return this.db.transaction(async (sql) => {
      const record = await lockGeneration(sql, id);
      const status = decide(record);
      if (!status || !record) return false;
      await settleLocked(sql, record, status, now);
      return true;
    });
  }
}

/**
 * Makes a pending try-on that the caller's transaction has locked terminal: the ledger entry that captures or
 * releases its credit, the record (with any worker's lease on it ended), its webhook event, and the notice that
 * wakes other nodes' waits at commit (notices.ts). PgState and the job queue (jobs.ts) settle through this one path.
 */
export async function settleLocked(
  sql: Sql,
  record: GenerationRecord,
  status: Exclude<GenerationRecord['status'], 'pending'>,
  now: Date,
): Promise<void> {
  const id = record.id;
  const lot = await reservedLot(sql, id);
  await append(sql, now, { type: status === 'complete' ? 'capture' : 'release', amount: 1, lot, genId: id });
  markSettled(record, status, now);
  const lots = await sql.query<LotRow>('SELECT * FROM credit_lots');
  const event = terminalEvent(record, summaryOf(lots.rows, now).creditsRemaining, now);
  if (event) {
    record.webhookEventId = event.id;
    await sql.query('INSERT INTO webhook_events (id, gen_id, event, created_at) VALUES ($1, $2, $3, $4)', [event.id, id, event, now]);
  }
  await sql.query('UPDATE generations SET record = $2, claimed_by = NULL, lease_until = NULL WHERE id = $1', [id, record]);
  await notifySettled(sql, id);
}

interface IdempotencyRow {
  scope: string;
  key: string;
  fingerprint: string;
  token: string;
  lease_until: Date | null;
  status: number | null;
  headers: Record<string, string> | null;
  body: string | null;
  created_at: Date | null;
  expires_at: Date | null;
}

function recordOf(row: IdempotencyRow): IdempotencyRecord {
  return {
    scope: row.scope,
    key: row.key,
    fingerprint: row.fingerprint,
    status: row.status!,
    headers: row.headers!,
    body: row.body!,
    createdAt: row.created_at!.toISOString(),
    expiresAt: row.expires_at!.toISOString(),
  };
}

/** Both lots, locked for the rest of the transaction (always in the same order). */
async function lockLots(sql: Sql): Promise<LotRow[]> {
  const { rows } = await sql.query<LotRow>('SELECT * FROM credit_lots ORDER BY lot FOR UPDATE');
  return rows;
}

function lotOf(rows: readonly LotRow[], lot: CreditLot): LotRow {
  const row = rows.find((candidate) => candidate.lot === lot);
  if (!row) throw new Error(`the credit_lots table has no ${lot} lot`);
  return row;
}

/** The account summary of section 2.8, from the lots' rows. */
function summaryOf(rows: readonly LotRow[], now: Date): AccountSummary {
  const trial = lotOf(rows, 'trial');
  return summaryOfLots({ trial, paid: lotOf(rows, 'paid') }, trial.expires_at?.toISOString() ?? null, now);
}

/** Records the expiry of the trial lot once its time has passed (the lots locked by the caller); credits expired. */
async function expireDue(sql: Sql, lots: LotRow[], now: Date): Promise<number> {
  const trial = lotOf(lots, 'trial');
  if (trial.available <= 0 || trial.expires_at === null || now.getTime() < trial.expires_at.getTime()) return 0;
  const expired = trial.available;
  await append(sql, now, { type: 'expire', amount: expired, lot: 'trial', note: 'trial credits expired' });
  trial.available = 0;
  return expired;
}

async function append(
  sql: Sql,
  now: Date,
  entry: { type: LedgerEntryType; amount: number; lot: CreditLot; genId?: string; expiresAt?: Date; note?: string },
): Promise<void> {
  await sql.query('INSERT INTO ledger (id, type, amount, lot, at, gen_id, expires_at, note) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)', [
    newId('le', now.getTime()),
    entry.type,
    entry.amount,
    entry.lot,
    now,
    entry.genId ?? null,
    entry.expiresAt ?? null,
    entry.note ?? null,
  ]);
}

async function reservedLot(sql: Sql, genId: string): Promise<CreditLot> {
  const { rows } = await sql.query<{ lot: CreditLot }>(`SELECT lot FROM ledger WHERE gen_id = $1 AND type = 'reserve'`, [genId]);
  if (!rows[0]) throw new Error(`try-on ${genId} holds no reservation`);
  return rows[0].lot;
}

async function lockGeneration(sql: Sql, id: string): Promise<GenerationRecord | undefined> {
  const { rows } = await sql.query<{ record: GenerationRecord }>('SELECT record FROM generations WHERE id = $1 FOR UPDATE', [id]);
  return rows[0]?.record;
}

function entryOf(row: LedgerRow): LedgerEntry {
  const entry: LedgerEntry = { id: row.id, seq: row.seq, type: row.type, amount: row.amount, lot: row.lot, at: row.at.toISOString() };
  if (row.gen_id !== null) entry.genId = row.gen_id;
  if (row.expires_at !== null) entry.expiresAt = row.expires_at.toISOString();
  if (row.note !== null) entry.note = row.note;
  return entry;
}

/** A usage row as usageReport reads it: a try-on that has not ended has no completedAt (SQL gives null). */
function withoutNulls(row: UsageGeneration): UsageGeneration {
  return row.completedAt === null ? { createdAt: row.createdAt, status: row.status } : row;
}
