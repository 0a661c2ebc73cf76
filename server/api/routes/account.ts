/** Account and credit packs (contract 2.8). */
import { Router } from 'express';
import { CREDIT_PACKS } from '../../credits/packs.ts';
import type { AppDeps } from '../deps.ts';

/** Routes /api/v1/account and /api/v1/credit-packs. */
export function accountRoutes({ state, clock }: AppDeps): Router {
  const router = Router();
  router.get('/account', async (_req, res) => {
    res.json(await state.account(clock()));
  });
  router.get('/credit-packs', (_req, res) => {
    res.json(CREDIT_PACKS);
  });
  return router;
}
