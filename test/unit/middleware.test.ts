/**
 * The HTTP middleware one by one, each in a bare Express app of its own (no appliance, no store, no engine):
 * request ids, the JSON body rules, the per-key rate limit on an injected clock, and the final problem+json
 * handler with the 404 for unmatched paths. (The API-key middleware has its own file.)
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { describe, test, type TestContext } from 'node:test';
import express, { type Express, type RequestHandler } from 'express';
import { jsonBody } from '../../server/api/middleware/json-body.ts';
import { notFound, problemHandler } from '../../server/api/middleware/problems.ts';
import { rateLimit } from '../../server/api/middleware/rate-limit.ts';
import { requestId } from '../../server/api/middleware/request-id.ts';
import { ApiError } from '../../server/kernel/errors.ts';

/** Serves `app` on a free port for the test; resolves with its base URL. */
async function serve(t: TestContext, app: Express): Promise<string> {
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  t.after(() => new Promise((resolve) => server.close(resolve)));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** An app with the given middleware, an echo route, and the final handlers as the appliance has them. */
function appWith(
  middleware: Array<RequestHandler | express.ErrorRequestHandler>,
  log: (m: string, e: unknown) => void = () => {},
): Express {
  const app = express();
  app.use(requestId(), ...middleware);
  app.post('/echo', (req, res) => res.json({ body: req.body as unknown }));
  app.get('/fail', () => {
    throw new Error('a bug');
  });
  app.get('/refuse', () => {
    throw new ApiError('conflict', 'already done');
  });
  app.use(notFound());
  app.use(problemHandler(log));
  return app;
}

describe('HTTP middleware', () => {
  test('requestId: a sane X-Request-Id is kept and echoed; anything else is replaced with a fresh id', async (t) => {
    const url = await serve(t, appWith([]));
    const kept = await fetch(`${url}/nowhere`, { headers: { 'X-Request-Id': 'till-3.order:981' } });
    assert.equal(kept.headers.get('x-request-id'), 'till-3.order:981');
    assert.equal(((await kept.json()) as { requestId: string }).requestId, 'till-3.order:981');
    const replaced = await fetch(`${url}/nowhere`, { headers: { 'X-Request-Id': 'no spaces <script>' } });
    assert.match(replaced.headers.get('x-request-id') ?? '', /^req_[A-Za-z0-9_-]{12}$/);
  });

  test('jsonBody: JSON parses; another type is 415, past the limit 413, malformed JSON 400', async (t) => {
    const url = await serve(t, appWith(jsonBody({ limitBytes: 64 })));
    const post = (body: string, type = 'application/json') =>
      fetch(`${url}/echo`, { method: 'POST', headers: { 'Content-Type': type }, body });
    const ok = await post('{"size":"M"}');
    assert.deepEqual(await ok.json(), { body: { size: 'M' } });
    const codeOf = async (res: Response) => [res.status, ((await res.json()) as { code: string }).code];
    assert.deepEqual(await codeOf(await post('size=M', 'application/x-www-form-urlencoded')), [415, 'unsupported_media_type']);
    assert.deepEqual(await codeOf(await post(JSON.stringify({ pad: 'x'.repeat(100) }))), [413, 'payload_too_large']);
    assert.deepEqual(await codeOf(await post('{"size":')), [400, 'invalid_request']);
  });

  test('rateLimit: a bucket per key lineage; empty is 429 with Retry-After; it refills with the clock', async (t) => {
    let now = Date.parse('2026-11-23T12:00:00Z');
    const as: RequestHandler = (req, _res, next) => {
      req.auth = { key: { lineageId: req.get('x-key') ?? 'a' } } as never;
      next();
    };
    const url = await serve(t, appWith([as, rateLimit({ perMinute: 2, clock: () => new Date(now) }), ...jsonBody({ limitBytes: 1000 })]));
    const send = (key = 'a') =>
      fetch(`${url}/echo`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Key': key }, body: '{}' });
    assert.equal((await send()).status, 200);
    assert.equal((await send()).status, 200);
    const limited = await send();
    assert.equal(limited.status, 429);
    assert.equal(((await limited.json()) as { code: string }).code, 'rate_limited');
    assert.equal(limited.headers.get('retry-after'), '30');
    assert.equal((await send('b')).status, 200, 'another key has its own bucket');
    now += 30_000;
    assert.equal((await send()).status, 200, 'half a minute later one token is back');
    assert.equal((await send()).status, 429);
  });

  test('problemHandler and notFound: problem+json with the request id; an unknown error is a logged bare 500', async (t) => {
    const logged: unknown[] = [];
    const url = await serve(
      t,
      appWith([], (_m, e) => logged.push(e)),
    );
    const refused = await fetch(`${url}/refuse`, { headers: { 'X-Request-Id': 'r1' } });
    assert.equal(refused.status, 409);
    assert.match(refused.headers.get('content-type') ?? '', /^application\/problem\+json/);
    const body = (await refused.json()) as { code: string; detail: string; requestId: string; status: number };
    assert.deepEqual([body.code, body.detail, body.requestId, body.status], ['conflict', 'already done', 'r1', 409]);
    const missing = await fetch(`${url}/nowhere`);
    assert.deepEqual([missing.status, ((await missing.json()) as { code: string }).code], [404, 'not_found']);
    const failed = await fetch(`${url}/fail`);
    const problem = (await failed.json()) as { code: string; detail: string };
    assert.equal(failed.status, 500);
    assert.equal(problem.code, 'internal');
    assert.ok(!problem.detail.includes('a bug'), 'the error itself is not shown to the client');
    assert.equal((logged[0] as Error).message, 'a bug');
  });
});
