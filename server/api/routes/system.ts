/** Engines and health (contract 2.10). */
import { Router } from 'express';
import type { AppDeps } from '../deps.ts';
import { openApiDocument } from '../openapi.ts';
import { redactPaths } from '../../kernel/redact.ts';

/** GET /api/v1/engines (authenticated). */
export function engineRoutes({ engines }: AppDeps): Router {
  const router = Router();
  router.get('/engines', async (_req, res) => {
    // On a shared database the fleet is read now: a worker that joined a moment ago is shown.
    await engines.refresh?.();
    res.json(engines.list().map((engine) => (engine.reason === undefined ? engine : { ...engine, reason: redactPaths(engine.reason) })));
  });
  return router;
}

/** GET /api/v1/health and /api/v1/openapi.json (no authentication). */
export function healthRoutes({ engines, jobs, version }: AppDeps): Router {
  const router = Router();
  const openapi = JSON.stringify(openApiDocument(version));
  router.get('/openapi.json', (_req, res) => {
    res.type('application/json').send(openapi);
  });
  router.get('/health', async (_req, res) => {
    const list = engines.list();
    res.json({
      status: list.some((engine) => engine.ready) ? 'ok' : 'degraded',
      version,
      engines: list.map((engine) => ({ id: engine.id, ready: engine.ready })),
      queueDepth: await jobs.depth(),
    });
  });
  return router;
}
