/**
 * createApp(deps) builds the Express app without listening; only
 * server/index.ts listens. Tests pass their own store, engines and clock.
 */
import express, { type Express } from 'express';
import type { Config } from './config.ts';
import type { IdempotencyGuard } from './idempotency/idempotency.ts';
import type { EngineCatalog, JobRunner } from './jobs/runner.ts';
import type { TerminalNotifier } from './jobs/notifier.ts';
import type { FramingGuide } from './gui/framing.ts';
import type { Store } from './store/db.ts';
import type { Archive } from './store/archive.ts';
import type { WebhookDispatcher } from './webhooks/dispatcher.ts';
import { apiKey, requireScope } from './api/middleware/api-key.ts';
import { jsonBody } from './api/middleware/json-body.ts';
import { notFound, problemHandler } from './api/middleware/problems.ts';
import { rateLimit } from './api/middleware/rate-limit.ts';
import { requestId } from './api/middleware/request-id.ts';
import { accountRoutes } from './api/routes/account.ts';
import { keyRoutes } from './api/routes/keys.ts';
import { engineRoutes, healthRoutes } from './api/routes/system.ts';
import { tryOnRoutes } from './api/routes/try-on.ts';
import { creditRoutes } from './vouchers/routes.ts';
import { webhookRoutes } from './webhooks/routes.ts';
import { guiPages } from './gui/pages.ts';
import { guiRoutes } from './gui/routes.ts';

/** Everything the HTTP layer depends on. */
export interface AppDeps {
  config: Config;
  store: Store;
  archive: Archive;
  engines: EngineCatalog;
  runner: JobRunner;
  notifier: TerminalNotifier;
  idempotency: IdempotencyGuard;
  webhooks: WebhookDispatcher;
  clock: () => Date;
  version: string;
  log: (message: string, error?: unknown) => void;
  /** The camera's framing advice for the GUI (its models load on first use). */
  framing: FramingGuide;
  /** The token the Electron shell signs its window in with (none headless). */
  guiLaunchToken?: string | null;
}

/** Builds the appliance's HTTP app. */
export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');

  const api = express.Router();
  api.use(requestId());
  api.use(healthRoutes(deps));
  api.use(apiKey({ store: deps.store, clock: deps.clock }));
  // Rate limiting comes before the body is read, so a flood costs no parsing.
  api.post('/try-on', rateLimit({ perMinute: deps.config.submitsPerMinute, clock: deps.clock }));
  api.use(jsonBody({ limitBytes: deps.config.bodyLimitBytes }));
  api.use(tryOnRoutes(deps));
  api.use(accountRoutes(deps));
  api.use(engineRoutes(deps));
  api.use(creditRoutes(deps));
  api.use(webhookRoutes(deps));
  api.use('/keys', requireScope('admin'));
  api.use(keyRoutes(deps));

  app.use('/api/v1', api);
  app.use('/gui/api', guiRoutes(deps));
  app.use(guiPages(deps.log));
  app.use('/api', requestId(), notFound());
  app.use(requestId(), notFound());
  app.use(problemHandler(deps.log));
  return app;
}
