/**
 * Usage per period (contract 2.8), derived from the records alone: there are
 * no counters that could drift from them. A generation counts as submitted in
 * the period of its `createdAt` and as completed, failed or canceled in the
 * period of its `completedAt`; credits used are the `capture` entries of the
 * ledger in the period. Periods are UTC days or hours.
 */
import { ApiError } from '../kernel/errors.ts';
import type { GenerationRecord, LedgerEntry } from '../store/schema.ts';

export type Granularity = 'day' | 'hour';

/** A validated usage query: `from` and `to` fall on period boundaries. */
export interface UsageQuery {
  from: Date;
  to: Date;
  granularity: Granularity;
}

export interface UsageCounts {
  submitted: number;
  completed: number;
  failed: number;
  canceled: number;
  creditsUsed: number;
}

export interface UsagePeriod extends UsageCounts {
  start: string;
}

/** The reply to GET /api/v1/usage. */
export interface UsageReport {
  from: string;
  to: string;
  granularity: Granularity;
  periods: UsagePeriod[];
  totals: UsageCounts;
}

const PERIOD_MS: Record<Granularity, number> = { day: 86_400_000, hour: 3_600_000 };
/** The most periods one query may span: 400 days, or 31 days of hours. */
export const MAX_PERIODS: Record<Granularity, number> = { day: 400, hour: 31 * 24 };
const DEFAULT_PERIODS: Record<Granularity, number> = { day: 30, hour: 24 };

const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})(?:T([01]\d|2[0-3]):([0-5]\d)(?::([0-5]\d)(?:\.\d{1,9})?)?(Z|[+-](?:[01]\d|2[0-3]):[0-5]\d))?$/;

/** Parses an ISO 8601 date (UTC midnight) or date-time with a zone; null when it is neither. */
export function parseInstant(text: string): Date | null {
  const match = TIMESTAMP.exec(text);
  if (!match) return null;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return null;
  const ms = match[4] === undefined ? date.getTime() : Date.parse(text);
  return Number.isFinite(ms) ? new Date(ms) : null;
}

function queryString(query: Record<string, unknown>, name: string): string | undefined {
  const value = query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new ApiError('invalid_request', `${name} may be given once.`);
  return value;
}

function instant(query: Record<string, unknown>, name: string): Date | undefined {
  const text = queryString(query, name);
  if (text === undefined) return undefined;
  const date = parseInstant(text);
  if (!date) throw new ApiError('invalid_request', `${name} must be an ISO 8601 date (2026-03-01) or date-time (2026-03-01T12:00:00Z).`);
  return date;
}

const floorTo = (ms: number, period: number) => Math.floor(ms / period) * period;
const ceilTo = (ms: number, period: number) => Math.ceil(ms / period) * period;

/**
 * Validates `from`, `to` and `granularity` (400 `invalid_request` otherwise).
 * `from` is rounded down and `to` up to whole UTC periods. Defaults: day
 * granularity; `to` the end of the current period; `from` 30 days (24 hours
 * for hourly usage) before `to`.
 */
export function parseUsageQuery(query: Record<string, unknown>, now: Date): UsageQuery {
  const granularity = queryString(query, 'granularity') ?? 'day';
  if (granularity !== 'day' && granularity !== 'hour') throw new ApiError('invalid_request', 'granularity must be day or hour.');
  const period = PERIOD_MS[granularity];
  const fromRaw = instant(query, 'from');
  const toRaw = instant(query, 'to');
  if (fromRaw && toRaw && fromRaw.getTime() >= toRaw.getTime()) throw new ApiError('invalid_request', 'from must be before to.');
  const to = ceilTo((toRaw ?? now).getTime(), period);
  const from = fromRaw ? floorTo(fromRaw.getTime(), period) : to - DEFAULT_PERIODS[granularity] * period;
  if (from >= to) throw new ApiError('invalid_request', 'from must be before to.');
  if ((to - from) / period > MAX_PERIODS[granularity]) {
    const span = granularity === 'day' ? `${MAX_PERIODS.day} days` : `${MAX_PERIODS.hour / 24} days of hours`;
    throw new ApiError('invalid_request', `A usage query may span at most ${span}.`);
  }
  return { from: new Date(from), to: new Date(to), granularity };
}

const TERMINAL_COUNT = { complete: 'completed', failed: 'failed', canceled: 'canceled' } as const;

const zero = (): UsageCounts => ({ submitted: 0, completed: 0, failed: 0, canceled: 0, creditsUsed: 0 });

/** What usage reads of a try-on and of a ledger entry (a store may hand over just these). */
export type UsageGeneration = Pick<GenerationRecord, 'createdAt' | 'status' | 'completedAt'>;
export type UsageEntry = Pick<LedgerEntry, 'type' | 'amount' | 'at'>;

/** Counts generations and captured credits into the query's periods. */
export function usageReport(query: UsageQuery, generations: Iterable<UsageGeneration>, ledger: Iterable<UsageEntry>): UsageReport {
  const period = PERIOD_MS[query.granularity];
  const from = query.from.getTime();
  const to = query.to.getTime();
  const periods: UsagePeriod[] = [];
  for (let start = from; start < to; start += period) periods.push({ start: new Date(start).toISOString(), ...zero() });
  const bucket = (at: string | undefined): UsagePeriod | undefined => {
    if (at === undefined) return undefined;
    const ms = Date.parse(at);
    return ms >= from && ms < to ? periods[Math.floor((ms - from) / period)] : undefined;
  };
  for (const record of generations) {
    const created = bucket(record.createdAt);
    if (created) created.submitted += 1;
    if (record.status === 'pending') continue;
    const ended = bucket(record.completedAt);
    if (ended) ended[TERMINAL_COUNT[record.status]] += 1;
  }
  for (const entry of ledger) {
    if (entry.type !== 'capture') continue;
    const at = bucket(entry.at);
    if (at) at.creditsUsed += entry.amount;
  }
  const totals = zero();
  for (const row of periods) {
    for (const name of Object.keys(totals) as Array<keyof UsageCounts>) totals[name] += row[name];
  }
  return { from: query.from.toISOString(), to: query.to.toISOString(), granularity: query.granularity, periods, totals };
}
