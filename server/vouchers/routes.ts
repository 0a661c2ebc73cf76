/** Credit calls of contract 2.8 beyond the account: redeem, usage, ledger. */
import { Router } from 'express';
import type { AppDeps } from '../app.ts';

/** Routes under /api/v1 for vouchers, usage and the ledger. */
export function creditRoutes(_deps: AppDeps): Router {
  return Router();
}
