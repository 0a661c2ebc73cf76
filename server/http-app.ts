/**
 * createApp(deps) builds the Express app without listening; only
 * server/index.ts listens. Tests pass their own store, engines and clock.
 */
import express, { type Express } from 'express';
import type { AppDeps } from './api/deps.ts';
import { apiKey, requireScope } from './api/middleware/api-key.ts';
import { bodyIdleTimeout } from './api/connections.ts';
import { hostCheck } from './api/middleware/host-check.ts';
import { jsonBody } from './api/middleware/json-body.ts';
import { notFound, problemHandler } from './api/middleware/problems.ts';
import { rateLimit } from './api/middleware/rate-limit.ts';
import { requestId } from './api/middleware/request-id.ts';
import { accountRoutes } from './api/routes/account.ts';
import { keyRoutes } from './api/routes/keys.ts';
import { engineRoutes, healthRoutes } from './api/routes/system.ts';
import { tryOnRoutes } from './api/routes/try-on.ts';
import { creditRoutes } from './api/routes/credits.ts';
import { webhookRoutes } from './api/routes/webhooks.ts';
import { guiPages } from './api/routes/gui-pages.ts';
import { guiRoutes } from './api/routes/gui.ts';
import { takeHomeRoutes } from './api/routes/take.ts';
import { guiSessionAuth } from './gui/session.ts';
import { activeKeyFor } from './state/accounts.ts';

/** Builds the appliance's HTTP app. */
export type { AppDeps };

export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  // Every request gets its id first, so that even a refused Host is answered with one.
  app.use(requestId(), hostCheck({ allowedHosts: deps.config.allowedHosts, publicBaseUrl: deps.config.publicBaseUrl }));
  app.use(bodyIdleTimeout(deps.config.bodyIdleTimeoutMs));

  const api = express.Router();
  api.use(healthRoutes(deps));
  // The GUI's session cookie signs in as its admin key: the middleware is given that, and knows no feature.
  api.use(
    apiKey({
      activeKey: (secret) => activeKeyFor(deps.accounts, secret, deps.clock()),
      clock: deps.clock,
      sessions: guiSessionAuth(deps.accounts),
    }),
  );
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
  app.use(takeHomeRoutes(deps));
  app.use(guiPages(deps.log));
  app.use(notFound());
  app.use(problemHandler(deps.log));
  return app;
}
