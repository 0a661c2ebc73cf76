import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  accountSummary,
  balancesOf,
  captureCredit,
  expireDueCredits,
  grantTrial,
  releaseCredit,
  reserveCredit,
} from '../../server/credits/ledger.ts';
import { ApiError } from '../../server/kernel/errors.ts';
import { emptyState, type State } from '../../server/store/schema.ts';
import { assertLedgerInvariants } from '../helpers/invariants.ts';

const t0 = new Date('2026-01-01T00:00:00Z');
const days = (n: number) => new Date(t0.getTime() + n * 86_400_000);

function withGenerations(state: State, ids: string[]): void {
  for (const id of ids) {
    state.generations[id] = {
      id,
      keyId: 'k',
      engine: 'e',
      status: 'pending',
      stage: 'queued',
      params: { size: 'M', personSize: 'M', fit: 'regular', styling: [], categories: ['auto'], outputFormat: 'jpeg' },
      inputs: null,
      result: null,
      attempts: 0,
      credit: 'reserved',
      createdAt: '',
      expiresAt: '',
      erased: false,
    };
  }
}

test('the trial is granted once', () => {
  const state = emptyState();
  grantTrial(state, t0, 25, 30);
  grantTrial(state, t0, 25, 30);
  assert.equal(state.ledger.length, 1);
  assert.deepEqual(accountSummary(state, t0), {
    creditsRemaining: 25,
    creditsReserved: 0,
    trialCreditsRemaining: 25,
    trialExpiresAt: days(30).toISOString(),
  });
});

test('reserve, capture and release move credits between available, reserved and spent', () => {
  const state = emptyState();
  grantTrial(state, t0, 2, 30);
  reserveCredit(state, 'a', t0);
  reserveCredit(state, 'b', t0);
  assert.deepEqual(accountSummary(state, t0).creditsRemaining, 0);
  assert.deepEqual(accountSummary(state, t0).creditsReserved, 2);
  assert.throws(
    () => reserveCredit(state, 'c', t0),
    (error: unknown) => error instanceof ApiError && error.code === 'insufficient_credits',
  );
  assert.equal(state.ledger.length, 3, 'a refused reservation appends nothing');
  captureCredit(state, 'a', t0);
  releaseCredit(state, 'b', t0);
  assert.deepEqual(
    [accountSummary(state, t0).creditsRemaining, accountSummary(state, t0).creditsReserved, balancesOf(state).spent],
    [1, 0, 1],
  );
  assert.throws(() => releaseCredit(state, 'b', t0), /no open reservation/, 'a reservation resolves at most once');
  assert.throws(() => captureCredit(state, 'a', t0), /no open reservation/);
});

test('trial credits are spent before paid ones', () => {
  const state = emptyState();
  grantTrial(state, t0, 1, 30);
  state.ledger.push({ id: 'le_paid', seq: 2, type: 'redeem', amount: 5, lot: 'paid', at: t0.toISOString() });
  assert.equal(reserveCredit(state, 'a', t0), 'trial');
  assert.equal(reserveCredit(state, 'b', t0), 'paid');
  withGenerations(state, ['a', 'b']);
  assertLedgerInvariants(state);
});

test('expired trial credits are recorded once, and a trial credit released after expiry expires too', () => {
  const state = emptyState();
  grantTrial(state, t0, 3, 30);
  reserveCredit(state, 'a', t0);
  assert.equal(expireDueCredits(state, days(29)), 0);
  assert.equal(expireDueCredits(state, days(31)), 2);
  assert.equal(expireDueCredits(state, days(31)), 0);
  assert.equal(accountSummary(state, days(31)).creditsRemaining, 0);
  releaseCredit(state, 'a', days(32));
  assert.equal(accountSummary(state, days(32)).creditsRemaining, 0, 'the released trial credit is already past its date');
  assert.equal(expireDueCredits(state, days(32)), 1);
  withGenerations(state, ['a']);
  state.generations.a!.status = 'failed';
  state.generations.a!.credit = 'released';
  assertLedgerInvariants(state);
});

test('balances follow a new ledger array after a reload', () => {
  const state = emptyState();
  grantTrial(state, t0, 4, 30);
  assert.equal(accountSummary(state, t0).creditsRemaining, 4);
  state.ledger = [...state.ledger];
  state.ledger.push({ id: 'le_adj', seq: 2, type: 'adjust', amount: -1, lot: 'trial', at: t0.toISOString() });
  assert.equal(accountSummary(state, t0).creditsRemaining, 3);
});
