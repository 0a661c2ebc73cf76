/**
 * The credit ledger: append-only entries, balances derived from them.
 *
 * Each credit sits in a lot (`trial` or `paid`). Entries move credits:
 * trial/redeem/adjust add to a lot's available balance, reserve moves one to
 * reserved, capture spends a reservation, release gives it back, expire
 * removes what is left of an expired lot. Trial credits are spent first.
 *
 * These functions run inside `Store.mutate`, so they check first and append
 * last: a refused reservation changes nothing.
 */
import { ApiError } from '../kernel/errors.ts';
import { newId } from '../kernel/ids.ts';
import type { CreditLot, LedgerBase, LedgerEntry, LedgerEntryType, State } from '../store/schema.ts';

export interface LotBalance {
  available: number;
  reserved: number;
}

/** Balances derived from the ledger. */
export interface Balances {
  lots: Record<CreditLot, LotBalance>;
  spent: number;
  trialExpiresAt: string | null;
  /** genId → the lot its open reservation holds, for reservations not yet resolved. */
  openReservations: Map<string, CreditLot>;
}

interface Derived {
  count: number;
  balances: Balances;
}

// Balances are folded incrementally over the append-only array; a new array
// (a reload after a failed write) starts a new fold.
const derivedByLedger = new WeakMap<LedgerEntry[], Derived>();

/** Balances before any entry, or carried over from archived entries. */
export function baseBalances(base: LedgerBase | null): Balances {
  return {
    lots: {
      trial: { available: base?.lots.trial.available ?? 0, reserved: base?.lots.trial.reserved ?? 0 },
      paid: { available: base?.lots.paid.available ?? 0, reserved: base?.lots.paid.reserved ?? 0 },
    },
    spent: base?.spent ?? 0,
    trialExpiresAt: base?.trialExpiresAt ?? null,
    openReservations: new Map(),
  };
}

/** The base that carries `balances` (with no open reservation) past entry `throughSeq`. */
export function ledgerBaseOf(balances: Balances, throughSeq: number): LedgerBase {
  if (balances.openReservations.size > 0) throw new Error('a ledger base cannot carry open reservations');
  return {
    throughSeq,
    lots: { trial: { ...balances.lots.trial }, paid: { ...balances.lots.paid } },
    spent: balances.spent,
    trialExpiresAt: balances.trialExpiresAt,
  };
}

/** Applies one entry to running balances (exported for the invariant checker). */
export function applyEntry(balances: Balances, entry: LedgerEntry): void {
  const lot = balances.lots[entry.lot];
  switch (entry.type) {
    case 'trial':
      lot.available += entry.amount;
      if (entry.expiresAt) balances.trialExpiresAt = entry.expiresAt;
      break;
    case 'redeem':
    case 'adjust':
      lot.available += entry.amount;
      break;
    case 'reserve':
      lot.available -= entry.amount;
      lot.reserved += entry.amount;
      if (entry.genId) balances.openReservations.set(entry.genId, entry.lot);
      break;
    case 'capture':
      lot.reserved -= entry.amount;
      balances.spent += entry.amount;
      if (entry.genId) balances.openReservations.delete(entry.genId);
      break;
    case 'release':
      lot.reserved -= entry.amount;
      lot.available += entry.amount;
      if (entry.genId) balances.openReservations.delete(entry.genId);
      break;
    case 'expire':
      lot.available -= entry.amount;
      break;
  }
}

/** The current balances (cached; O(new entries) per call). */
export function balancesOf(state: State): Balances {
  let derived = derivedByLedger.get(state.ledger);
  if (!derived) {
    derived = { count: 0, balances: baseBalances(state.ledgerBase) };
    derivedByLedger.set(state.ledger, derived);
  }
  for (; derived.count < state.ledger.length; derived.count++) applyEntry(derived.balances, state.ledger[derived.count]!);
  return derived.balances;
}

/** The account summary of section 2.8. */
export interface AccountSummary {
  creditsRemaining: number;
  creditsReserved: number;
  trialCreditsRemaining: number;
  trialExpiresAt: string | null;
}

/** What the account holds at `now`; expired trial credits count as gone even before the sweep records it. */
export function accountSummary(state: State, now: Date): AccountSummary {
  const balances = balancesOf(state);
  return summaryOfLots(balances.lots, balances.trialExpiresAt, now);
}

/** The account summary from the lots' balances, wherever a store keeps them (a fold here, rows in PostgreSQL). */
export function summaryOfLots(lots: Record<CreditLot, LotBalance>, trialExpiresAt: string | null, now: Date): AccountSummary {
  const trialLive = trialExpiresAt !== null && now.getTime() < Date.parse(trialExpiresAt);
  const trial = trialLive ? Math.max(0, lots.trial.available) : 0;
  return {
    creditsRemaining: trial + lots.paid.available,
    creditsReserved: lots.trial.reserved + lots.paid.reserved,
    trialCreditsRemaining: trial,
    trialExpiresAt,
  };
}

function append(state: State, now: Date, entry: Omit<LedgerEntry, 'id' | 'seq' | 'at'>): LedgerEntry {
  const last = state.ledger[state.ledger.length - 1];
  const seq = (last?.seq ?? state.ledgerBase?.throughSeq ?? 0) + 1;
  const full: LedgerEntry = { id: newId('le', now.getTime()), seq, at: now.toISOString(), ...entry };
  state.ledger.push(full);
  return full;
}

/** Grants the installation's trial credits, once. */
export function grantTrial(state: State, now: Date, credits: number, validDays: number): void {
  if (balancesOf(state).trialExpiresAt !== null) return;
  const expiresAt = new Date(now.getTime() + validDays * 86_400_000).toISOString();
  append(state, now, { type: 'trial', amount: credits, lot: 'trial', expiresAt, note: `${credits} trial credits for a new installation` });
}

/** Records the expiry of trial credits whose time has passed. Returns the credits expired. */
export function expireDueCredits(state: State, now: Date): number {
  const balances = balancesOf(state);
  const trial = balances.lots.trial.available;
  if (trial <= 0 || balances.trialExpiresAt === null || now.getTime() < Date.parse(balances.trialExpiresAt)) return 0;
  append(state, now, { type: 'expire', amount: trial, lot: 'trial', note: 'trial credits expired' });
  return trial;
}

/** The 402 of a try-on that finds no credit available. */
export function noCredits(): ApiError {
  return new ApiError('insufficient_credits', 'No credits are available: redeem a credit pack to continue.');
}

/** 402 unless a credit is available at `now`: a cheap check before expensive work (reserveCredit decides). */
export function assertCreditAvailable(state: State, now: Date): void {
  if (accountSummary(state, now).creditsRemaining < 1) throw noCredits();
}

/** Reserves one credit for a generation, trial credits first; 402 when none is available. */
export function reserveCredit(state: State, genId: string, now: Date): CreditLot {
  expireDueCredits(state, now);
  const balances = balancesOf(state);
  if (balances.openReservations.has(genId)) throw new Error(`generation ${genId} already holds a reservation`);
  const lot: CreditLot | null = balances.lots.trial.available > 0 ? 'trial' : balances.lots.paid.available > 0 ? 'paid' : null;
  if (lot === null) throw noCredits();
  append(state, now, { type: 'reserve', amount: 1, lot, genId });
  return lot;
}

function resolveReservation(state: State, genId: string, now: Date, type: Extract<LedgerEntryType, 'capture' | 'release'>): void {
  const lot = balancesOf(state).openReservations.get(genId);
  if (lot === undefined) throw new Error(`generation ${genId} holds no open reservation`);
  append(state, now, { type, amount: 1, lot, genId });
}

/** Spends a generation's reserved credit (on `complete`). */
export function captureCredit(state: State, genId: string, now: Date): void {
  resolveReservation(state, genId, now, 'capture');
}

/** Gives a generation's reserved credit back (on `failed` and `canceled`). */
export function releaseCredit(state: State, genId: string, now: Date): void {
  resolveReservation(state, genId, now, 'release');
}

/** Adds redeemed credits to the paid lot (one `redeem` entry); the caller records the voucher in the same mutation. */
export function redeemCredits(state: State, now: Date, credits: number, note: string): LedgerEntry {
  if (!Number.isInteger(credits) || credits < 1) throw new Error(`cannot redeem ${credits} credits`);
  return append(state, now, { type: 'redeem', amount: credits, lot: 'paid', note });
}
