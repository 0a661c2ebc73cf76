/** Engines and health (contract 2.10). */
import { Router } from 'express';
import type { AppDeps } from '../../app.ts';

/** GET /api/v1/engines (authenticated). */
export function engineRoutes({ engines }: AppDeps): Router {
  const router = Router();
  router.get('/engines', (_req, res) => {
    res.json(engines.list());
  });
  return router;
}

/** GET /api/v1/health (no authentication). */
export function healthRoutes({ engines, runner, version }: AppDeps): Router {
  const router = Router();
  router.get('/health', (_req, res) => {
    const list = engines.list();
    res.json({
      status: list.some((engine) => engine.ready) ? 'ok' : 'degraded',
      version,
      engines: list.map((engine) => ({ id: engine.id, ready: engine.ready })),
      queueDepth: runner.depth(),
    });
  });
  return router;
}
