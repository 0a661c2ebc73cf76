/** Webhook calls (contract 2.9): secret, rotation, deliveries, redelivery. */
import { Router } from 'express';
import type { AppDeps } from '../deps.ts';
import { requireScope } from '../middleware/api-key.ts';
import { viewerOf } from '../request-context.ts';
import { deliveryView } from '../../webhooks/outbox.ts';

/** Routes under /api/v1 for webhooks. */
export function webhookRoutes(deps: AppDeps): Router {
  const { state, accounts, tryOns, clock, config, webhooks } = deps;
  const router = Router();

  router.get('/webhooks/secret', requireScope('admin'), async (_req, res) => {
    res.json(await accounts.webhookSecretView(clock()));
  });

  router.post('/webhooks/secret/rotate', requireScope('admin'), async (_req, res) => {
    res.json(await accounts.rotateWebhookSecret(clock(), config.webhookSecretOverlapHours));
  });

  router.get('/try-on/:genId/webhook-deliveries', async (req, res) => {
    const record = await tryOns.find(req.params.genId!, viewerOf(req));
    res.json({ data: (await state.webhookEvents(record.id)).map(deliveryView) });
  });

  router.post('/try-on/:genId/webhook-deliveries/redeliver', async (req, res) => {
    const id = req.params.genId!;
    await tryOns.find(id, viewerOf(req));
    const view = deliveryView(await state.redeliver(id, clock()));
    webhooks.wake();
    res.status(202).json(view);
  });

  return router;
}
