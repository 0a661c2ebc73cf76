/**
 * GET /: what a person who opens the appliance's address in a browser sees
 * until the shop-floor GUI (renderer/) is served here: where the API is.
 */
import { Router } from 'express';

/** The landing page. */
export function landingRoutes(version: string): Router {
  const router = Router();
  const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>fittingroom</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:18px/1.5 system-ui,sans-serif;max-width:40em;margin:3em auto;padding:0 1em;color:#222}code{background:#f3f3f3;padding:0 .2em}</style>
</head><body>
<h1>fittingroom ${version}</h1>
<p>The try-on appliance is running. The shop-floor screens are not part of this version yet; apps use the HTTP API:</p>
<ul>
<li><a href="/api/v1/health">/api/v1/health</a>: status, engines and queue</li>
<li><a href="/api/v1/openapi.json">/api/v1/openapi.json</a>: the API description (OpenAPI 3.1)</li>
<li>Every other call needs <code>Authorization: Bearer &lt;API key&gt;</code>; the first admin key is in the data directory's <code>first-admin-key</code> file.</li>
</ul>
</body></html>`;
  router.get('/', (_req, res) => {
    res.type('html').setHeader('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'");
    res.send(page);
  });
  return router;
}
