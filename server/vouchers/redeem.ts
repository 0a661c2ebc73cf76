/** Redeeming a verified voucher: one ledger entry and one voucher record, in one mutation. */
import { ApiError } from '../kernel/errors.ts';
import { accountSummary, redeemCredits } from '../credits/ledger.ts';
import type { State } from '../store/schema.ts';
import type { VoucherPayload } from './voucher.ts';

/** The reply to POST /api/v1/credits/redeem. */
export interface Redemption {
  voucherId: string;
  creditsAdded: number;
  creditsRemaining: number;
}

/**
 * Credits a verified voucher, once per voucher id (409 `conflict` afterwards).
 * Runs inside `Store.mutate`: it checks before it changes anything.
 */
export function redeemVoucher(state: State, voucher: VoucherPayload, keyId: string, now: Date): Redemption {
  const earlier = state.vouchers[voucher.id];
  if (earlier) throw new ApiError('conflict', `The voucher ${voucher.id} was already redeemed at ${earlier.redeemedAt}.`);
  redeemCredits(state, now, voucher.credits, `voucher ${voucher.id}`);
  state.vouchers[voucher.id] = { id: voucher.id, credits: voucher.credits, redeemedAt: now.toISOString(), keyId };
  return { voucherId: voucher.id, creditsAdded: voucher.credits, creditsRemaining: accountSummary(state, now).creditsRemaining };
}
