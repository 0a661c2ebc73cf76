/** Credit calls of contract 2.8 beyond the account: redeem, usage, ledger. */
import { Router } from 'express';
import { ApiError, validationError } from '../../kernel/errors.ts';
import { requireScope } from '../middleware/api-key.ts';
import { parseUsageQuery } from '../../credits/usage.ts';
import type { AppDeps } from '../deps.ts';
import { trustedIssuers, verifyVoucher, VoucherError, type VoucherPayload } from '../../vouchers/voucher.ts';

const LEDGER_LIMIT = { default: 100, max: 500 };

/** Routes under /api/v1 for vouchers, usage and the ledger. Throws at start-up on a bad trusted issuer key. */
export function creditRoutes({ state, accounts, clock, config, vouchersRedeemed, log }: AppDeps): Router {
  const issuers = trustedIssuers(config.trustedIssuerKeys);
  const router = Router();

  router.post('/credits/redeem', requireScope('admin'), async (req, res) => {
    const text = (req.body as { voucher?: unknown } | undefined)?.voucher;
    if (typeof text !== 'string' || text === '') throw validationError([{ field: 'voucher', message: 'is required (a voucher text)' }]);
    const installId = (await accounts.installation())?.id;
    if (!installId) throw new ApiError('internal', 'The installation has no id.');
    let voucher: VoucherPayload;
    try {
      voucher = verifyVoucher(text, { issuers, now: clock(), installId });
    } catch (error) {
      if (error instanceof VoucherError) throw validationError([{ field: 'voucher', message: error.message }]);
      throw error;
    }
    if (vouchersRedeemed?.has(voucher.id))
      throw new ApiError('conflict', `The voucher ${voucher.id} was already redeemed on this installation.`);
    const keyId = req.auth!.key.id;
    const now = clock();
    const redemption = await state.redeemVoucher(voucher, keyId, now);
    // The credit is in: a journal write that fails now is made at the next start, from the state.
    await vouchersRedeemed?.add(voucher.id, now).catch((error) => log(`recording voucher ${voucher.id} in the journal failed`, error));
    res.json(redemption);
  });

  router.get('/usage', async (req, res) => {
    const query = parseUsageQuery(req.query as Record<string, unknown>, clock());
    res.json(await state.usage(query));
  });

  router.get('/ledger', requireScope('admin'), async (req, res) => {
    const query = req.query as Record<string, unknown>;
    const limit = query.limit === undefined ? LEDGER_LIMIT.default : Number(query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > LEDGER_LIMIT.max) {
      throw new ApiError('invalid_request', `limit must be an integer from 1 to ${LEDGER_LIMIT.max}.`);
    }
    const cursor = query.cursor;
    if (cursor !== undefined && (typeof cursor !== 'string' || !/^[1-9][0-9]{0,14}$/.test(cursor))) {
      throw new ApiError('invalid_request', 'cursor is not a cursor from a previous page.');
    }
    const page = await state.ledgerPage(cursor === undefined ? null : Number(cursor), limit);
    res.json({ data: page.entries, nextCursor: page.nextBefore === null ? null : String(page.nextBefore) });
  });

  return router;
}
