/** Webhook calls (contract 2.9): secret, rotation, deliveries, redelivery. */
import { Router } from 'express';
import type { AppDeps } from '../app.ts';

/** Routes under /api/v1 for webhooks. */
export function webhookRoutes(_deps: AppDeps): Router {
  return Router();
}
