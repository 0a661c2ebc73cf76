import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiError } from '../../server/kernel/errors.ts';
import { allGenerations, allLedgerEntries, ledgerPage, type ArchiveReader } from '../../server/credits/history.ts';
import { parseInstant, parseUsageQuery, usageReport } from '../../server/credits/usage.ts';
import { emptyState, type GenerationRecord, type LedgerEntry } from '../../server/store/schema.ts';

const now = new Date('2026-06-15T10:30:00Z');

function invalid(query: Record<string, unknown>, pattern: RegExp): void {
  assert.throws(
    () => parseUsageQuery(query, now),
    (error: unknown) => error instanceof ApiError && error.code === 'invalid_request' && pattern.test(error.message),
  );
}

function entry(seq: number, type: LedgerEntry['type'], at = now.toISOString()): LedgerEntry {
  return { id: `le_${seq}`, seq, type, amount: 1, lot: 'paid', at };
}

function generation(id: string, status: GenerationRecord['status'], createdAt: string, completedAt?: string): GenerationRecord {
  const record: GenerationRecord = {
    id,
    keyId: 'k',
    engine: 'e',
    status,
    stage: 'queued',
    params: { size: 'M', personSize: 'M', fit: 'regular', styling: [], categories: ['auto'], outputFormat: 'jpeg' },
    inputs: null,
    result: null,
    attempts: 0,
    credit: status === 'complete' ? 'captured' : status === 'pending' ? 'reserved' : 'released',
    createdAt,
    expiresAt: createdAt,
    erased: true,
  };
  if (completedAt) record.completedAt = completedAt;
  return record;
}

function archiveOf(generations: GenerationRecord[], ledger: LedgerEntry[]): ArchiveReader {
  const byId = new Map(generations.map((record) => [record.id, record]));
  return { ledgerEntries: () => ledger, ids: () => [...byId.keys()], generation: (id: string) => byId.get(id) };
}

test('usage defaults: the last 30 UTC days by day, or the last 24 hours by hour', () => {
  const days = parseUsageQuery({}, now);
  assert.equal(days.granularity, 'day');
  assert.equal(days.to.toISOString(), '2026-06-16T00:00:00.000Z');
  assert.equal(days.from.toISOString(), '2026-05-17T00:00:00.000Z');
  const hours = parseUsageQuery({ granularity: 'hour' }, now);
  assert.equal(hours.to.toISOString(), '2026-06-15T11:00:00.000Z');
  assert.equal(hours.from.toISOString(), '2026-06-14T11:00:00.000Z');
});

test('usage bounds are rounded out to whole UTC periods; dates may carry a zone', () => {
  const query = parseUsageQuery({ from: '2026-03-01T01:00:00+02:00', to: '2026-03-03T00:00:01Z' }, now);
  assert.equal(query.from.toISOString(), '2026-02-28T00:00:00.000Z');
  assert.equal(query.to.toISOString(), '2026-03-04T00:00:00.000Z');
  assert.equal(parseUsageQuery({ from: '2026-01-01', to: '2027-02-05' }, now).to.toISOString(), '2027-02-05T00:00:00.000Z');
  assert.equal(parseUsageQuery({ from: '2026-06-01T00:00Z', to: '2026-07-01', granularity: 'hour' }, now).granularity, 'hour');
});

test('usage queries are validated', () => {
  invalid({ granularity: 'week' }, /granularity/);
  invalid({ from: 'yesterday' }, /from must be an ISO 8601/);
  invalid({ from: '2026-02-30' }, /from must be an ISO 8601/);
  invalid({ to: '2026-06-01T25:00:00Z' }, /to must be an ISO 8601/);
  invalid({ to: '2026-06-01T10:00:00' }, /to must be an ISO 8601/);
  invalid({ from: ['2026-01-01', '2026-01-02'] }, /from may be given once/);
  invalid({ from: '2026-06-02', to: '2026-06-01' }, /from must be before to/);
  invalid({ from: '2026-06-01', to: '2026-06-01' }, /from must be before to/);
  invalid({ from: '2026-07-01' }, /from must be before to/);
  invalid({ from: '2025-01-01', to: '2026-06-01' }, /at most 400 days/);
  invalid({ from: '2026-01-01', to: '2026-03-01', granularity: 'hour' }, /at most 31 days of hours/);
  assert.ok(parseUsageQuery({ from: '2026-01-01', to: '2026-02-01', granularity: 'hour' }, now));
  assert.equal(parseInstant('2026-13-01'), null);
  assert.equal(parseInstant('2024-02-29')?.toISOString(), '2024-02-29T00:00:00.000Z');
});

test('usage counts submissions by createdAt, outcomes by completedAt, credits by capture entries', () => {
  const query = parseUsageQuery({ from: '2026-06-01', to: '2026-06-03' }, now);
  const generations = [
    generation('a', 'complete', '2026-06-01T23:59:00Z', '2026-06-02T00:01:00Z'),
    generation('b', 'failed', '2026-06-01T10:00:00Z', '2026-06-01T10:00:05Z'),
    generation('c', 'canceled', '2026-06-02T10:00:00Z', '2026-06-02T11:00:00Z'),
    generation('d', 'pending', '2026-06-02T12:00:00Z'),
    generation('e', 'complete', '2026-05-31T23:00:00Z', '2026-06-01T00:00:00Z'),
    generation('f', 'complete', '2026-06-02T23:00:00Z', '2026-06-03T00:00:00Z'),
  ];
  const ledger = [
    entry(1, 'capture', '2026-06-01T00:00:00Z'),
    entry(2, 'capture', '2026-06-02T00:01:00Z'),
    entry(3, 'reserve', '2026-06-02T00:01:00Z'),
    entry(4, 'release', '2026-06-02T00:01:00Z'),
    entry(5, 'capture', '2026-06-03T00:00:00Z'),
  ];
  const report = usageReport(query, generations, ledger);
  assert.deepEqual(report.periods, [
    { start: '2026-06-01T00:00:00.000Z', submitted: 2, completed: 1, failed: 1, canceled: 0, creditsUsed: 1 },
    { start: '2026-06-02T00:00:00.000Z', submitted: 3, completed: 1, failed: 0, canceled: 1, creditsUsed: 1 },
  ]);
  assert.deepEqual(report.totals, { submitted: 5, completed: 2, failed: 1, canceled: 1, creditsUsed: 2 });
  assert.equal(report.from, '2026-06-01T00:00:00.000Z');
  assert.equal(report.to, '2026-06-03T00:00:00.000Z');
});

test('reads span the archive up to the ledger base and the state after it, each record once', () => {
  const state = emptyState();
  const archived = [1, 2, 3, 4].map((seq) => entry(seq, 'capture'));
  // A crash between the archive's append and the state's mutation: seq 4 is in both.
  state.ledgerBase = {
    throughSeq: 3,
    lots: { trial: { available: 0, reserved: 0 }, paid: { available: 0, reserved: 0 } },
    spent: 3,
    trialExpiresAt: null,
  };
  state.ledger = [4, 5, 6].map((seq) => entry(seq, 'capture'));
  state.generations.g2 = generation('g2', 'complete', now.toISOString(), now.toISOString());
  const archive = archiveOf(
    [generation('g1', 'complete', now.toISOString(), now.toISOString()), generation('g2', 'failed', now.toISOString(), now.toISOString())],
    archived,
  );
  assert.deepEqual(
    [...allLedgerEntries(state, archive)].map((e) => e.seq),
    [1, 2, 3, 4, 5, 6],
  );
  assert.deepEqual(
    [...allGenerations(state, archive)].map((g) => [g.id, g.status]),
    [
      ['g2', 'complete'],
      ['g1', 'complete'],
    ],
  );
  const pages: number[][] = [];
  let before: number | null = null;
  do {
    const page = ledgerPage(state, archive, before, 2);
    pages.push(page.entries.map((e) => e.seq));
    before = page.nextBefore;
  } while (before !== null);
  assert.deepEqual(pages, [
    [6, 5],
    [4, 3],
    [2, 1],
  ]);
  assert.deepEqual(
    ledgerPage(state, archive, 5, 10).entries.map((e) => e.seq),
    [4, 3, 2, 1],
  );
  assert.equal(ledgerPage(state, archive, 5, 10).nextBefore, null);
  assert.deepEqual(ledgerPage(state, archive, 1, 10).entries, []);
});
