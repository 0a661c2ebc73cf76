import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import sharp from 'sharp';
import { composeEngine, startTestApp, startTestAppliance, until } from '../helpers/appliance.ts';
import { submission } from '../helpers/inputs.ts';

test('a submission is accepted with 202, Location and a reserved credit, and completes with an image', async (t) => {
  const app = await startTestApp(t);
  const response = await app.call('POST', '/api/v1/try-on', { body: await submission({ outputFormat: 'png' }) });
  assert.equal(response.status, 202);
  const accepted = (await response.json()) as { genId: string; status: string; statusUrl: string; creditsRemaining: number };
  assert.match(accepted.genId, /^gen_[0-9A-Z]{26}$/);
  assert.equal(accepted.status, 'pending');
  assert.equal(response.headers.get('location'), accepted.statusUrl);
  assert.equal(accepted.statusUrl, `${app.url}/api/v1/try-on/${accepted.genId}`);
  assert.equal(accepted.creditsRemaining, 24);

  const done = await app.call('GET', `/api/v1/try-on/${accepted.genId}?wait=10`);
  assert.equal(done.status, 200);
  const status = (await done.json()) as Record<string, unknown>;
  assert.equal(status.status, 'complete');
  assert.equal(status.creditCharged, true);
  assert.equal(status.creditsRemaining, 24);
  assert.equal(status.imageUrl, `${accepted.statusUrl}/image`);
  const inline = Buffer.from(status.image as string, 'base64');
  assert.equal((await sharp(inline).metadata()).format, 'png');

  const image = await app.call('GET', `/api/v1/try-on/${accepted.genId}/image`);
  assert.equal(image.status, 200);
  assert.equal(image.headers.get('content-type'), 'image/png');
  assert.deepEqual(Buffer.from(await image.arrayBuffer()), inline);

  const account = (await (await app.call('GET', '/api/v1/account')).json()) as Record<string, unknown>;
  assert.equal(account.creditsRemaining, 24);
  assert.equal(account.creditsReserved, 0);
  assert.equal(account.trialCreditsRemaining, 24);
});

test('wait returns as soon as the job finishes, and at the bound with the pending state and Retry-After', async (t) => {
  const app = await startTestApp(t, { engines: [composeEngine({ delayMs: 1500 })] });
  const { genId } = (await (await app.call('POST', '/api/v1/try-on', { body: await submission() })).json()) as { genId: string };

  let started = performance.now();
  const early = await app.call('GET', `/api/v1/try-on/${genId}?wait=1`);
  const earlyMs = performance.now() - started;
  const pending = (await early.json()) as Record<string, unknown>;
  assert.equal(early.status, 200);
  assert.equal(pending.status, 'pending');
  assert.equal(early.headers.get('retry-after'), '1');
  assert.ok(['queued', 'preprocessing', 'generating', 'finishing'].includes(pending.stage as string));
  // Loose upper bounds: CI machines are shared; what matters is held ≈ the bound, not far past it.
  assert.ok(earlyMs >= 950 && earlyMs < 5000, `bound of 1 s held for ${earlyMs} ms`);

  started = performance.now();
  const finished = await app.call('GET', `/api/v1/try-on/${genId}`, { headers: { prefer: 'wait=30' } });
  const finishedMs = performance.now() - started;
  assert.equal(finished.headers.get('preference-applied'), 'wait=30');
  assert.equal(((await finished.json()) as { status: string }).status, 'complete');
  assert.ok(finishedMs < 10_000, `returned ${finishedMs} ms after asking with a 30 s bound; the job had under 1 s left`);
});

test('wait values outside 1–120 are refused; Prefer values are clamped', async (t) => {
  const app = await startTestApp(t);
  const { genId } = (await (await app.call('POST', '/api/v1/try-on', { body: await submission() })).json()) as { genId: string };
  for (const bad of ['0', '121', 'abc', '-1', '1.5']) {
    const response = await app.call('GET', `/api/v1/try-on/${genId}?wait=${bad}`);
    assert.equal(response.status, 400, `wait=${bad}`);
    assert.equal(response.headers.get('content-type'), 'application/problem+json; charset=utf-8');
  }
  const clamped = await app.call('GET', `/api/v1/try-on/${genId}`, { headers: { prefer: 'wait=3600' } });
  assert.equal(clamped.headers.get('preference-applied'), 'wait=120');
});

test('progress is reported while generating', async (t) => {
  const app = await startTestApp(t, { engines: [composeEngine({ delayMs: 2000 })] });
  const { genId } = (await (await app.call('POST', '/api/v1/try-on', { body: await submission() })).json()) as { genId: string };
  const seen: Array<{ stage: string; progress: number }> = [];
  for (let i = 0; i < 40; i++) {
    const status = (await (await app.call('GET', `/api/v1/try-on/${genId}`)).json()) as { status: string; stage: string; progress: number };
    if (status.status !== 'pending') break;
    seen.push({ stage: status.stage, progress: status.progress });
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.ok(
    seen.some((s) => s.stage === 'generating' && s.progress > 0 && s.progress < 1),
    JSON.stringify(seen),
  );
  for (let i = 1; i < seen.length; i++) assert.ok(seen[i]!.progress >= seen[i - 1]!.progress, 'progress never goes back');
});

test('the image of a pending generation is a 409 problem; unknown ids are 404', async (t) => {
  const app = await startTestApp(t, { engines: [composeEngine({ delayMs: 3000 })] });
  const { genId } = (await (await app.call('POST', '/api/v1/try-on', { body: await submission() })).json()) as { genId: string };
  const image = await app.call('GET', `/api/v1/try-on/${genId}/image`);
  assert.equal(image.status, 409);
  assert.equal(((await image.json()) as { code: string }).code, 'conflict');
  const missing = await app.call('GET', '/api/v1/try-on/gen_01M00000000000000000000000');
  assert.equal(missing.status, 404);
  const problem = (await missing.json()) as Record<string, unknown>;
  assert.equal(problem.code, 'not_found');
  assert.match(problem.requestId as string, /^req_/);
  assert.equal(missing.headers.get('x-request-id'), problem.requestId);
});

test('cancel releases the credit, is final, and a second cancel is 409', async (t) => {
  const app = await startTestApp(t, { engines: [composeEngine({ delayMs: 5000 })] });
  const { genId } = (await (await app.call('POST', '/api/v1/try-on', { body: await submission() })).json()) as { genId: string };
  const canceled = await app.call('POST', `/api/v1/try-on/${genId}/cancel`);
  assert.equal(canceled.status, 200);
  const body = (await canceled.json()) as Record<string, unknown>;
  assert.equal(body.status, 'canceled');
  assert.equal(body.creditCharged, false);
  assert.equal(body.creditsRemaining, 25);
  assert.equal((await app.call('POST', `/api/v1/try-on/${genId}/cancel`)).status, 409);
  const later = (await (await app.call('GET', `/api/v1/try-on/${genId}?wait=1`)).json()) as Record<string, unknown>;
  assert.equal(later.status, 'canceled');
});

test('a failing engine fails the generation with its code and releases the credit', async (t) => {
  const app = await startTestApp(t, { engines: [composeEngine({ fail: 'no_person_detected' })] });
  const { genId } = (await (await app.call('POST', '/api/v1/try-on', { body: await submission() })).json()) as { genId: string };
  const status = (await (await app.call('GET', `/api/v1/try-on/${genId}?wait=10`)).json()) as Record<string, unknown>;
  assert.equal(status.status, 'failed');
  assert.equal((status.error as { code: string }).code, 'no_person_detected');
  assert.equal(status.creditCharged, false);
  assert.equal(status.creditsRemaining, 25);
  assert.equal(status.image, undefined);
});

test('an engine that crashes its process fails that generation; the server keeps serving', async (t) => {
  const app = await startTestAppliance(t, { engines: [composeEngine({ crash: 'abort' })] });
  const { genId } = (await (await app.call('POST', '/api/v1/try-on', { body: await submission() })).json()) as { genId: string };
  const status = (await (await app.call('GET', `/api/v1/try-on/${genId}?wait=20`)).json()) as Record<string, unknown>;
  assert.equal(status.status, 'failed');
  assert.equal((status.error as { code: string }).code, 'engine_failed');
  assert.equal((await app.call('GET', '/api/v1/health', { key: null })).status, 200);
});

test('erasing removes the images and keeps the record', async (t) => {
  const app = await startTestApp(t);
  const { genId } = (await (await app.call('POST', '/api/v1/try-on', { body: await submission() })).json()) as { genId: string };
  await app.call('GET', `/api/v1/try-on/${genId}?wait=10`);
  assert.ok(existsSync(join(app.dataDir, 'images', genId)));
  assert.equal((await app.call('DELETE', `/api/v1/try-on/${genId}`)).status, 204);
  assert.ok(!existsSync(join(app.dataDir, 'images', genId)));
  const status = (await (await app.call('GET', `/api/v1/try-on/${genId}`)).json()) as Record<string, unknown>;
  assert.equal(status.status, 'complete');
  assert.equal(status.erased, true);
  assert.equal(status.creditCharged, true);
  assert.equal(status.image, undefined);
  assert.equal((await app.call('GET', `/api/v1/try-on/${genId}/image`)).status, 404);
});

test('erasing a pending generation cancels it and releases its credit', async (t) => {
  const app = await startTestApp(t, { engines: [composeEngine({ delayMs: 5000 })] });
  const { genId } = (await (await app.call('POST', '/api/v1/try-on', { body: await submission() })).json()) as { genId: string };
  assert.equal((await app.call('DELETE', `/api/v1/try-on/${genId}`)).status, 204);
  const status = (await (await app.call('GET', `/api/v1/try-on/${genId}`)).json()) as Record<string, unknown>;
  assert.equal(status.status, 'canceled');
  assert.equal(status.erased, true);
  assert.equal(status.creditsRemaining, 25);
});

test('the list is newest first, filters by status and pages with a cursor', async (t) => {
  const app = await startTestApp(t, { engines: [composeEngine({ delayMs: 10_000 })] });
  const ids: string[] = [];
  for (let i = 0; i < 5; i++)
    ids.push(((await (await app.call('POST', '/api/v1/try-on', { body: await submission() })).json()) as { genId: string }).genId);
  await app.call('POST', `/api/v1/try-on/${ids[1]}/cancel`);
  const first = (await (await app.call('GET', '/api/v1/try-on?limit=2')).json()) as {
    data: Array<{ genId: string; image?: string }>;
    nextCursor: string;
  };
  assert.deepEqual(
    first.data.map((g) => g.genId),
    [ids[4], ids[3]],
  );
  assert.ok(first.data.every((g) => g.image === undefined));
  const second = (await (await app.call('GET', `/api/v1/try-on?limit=2&cursor=${first.nextCursor}`)).json()) as {
    data: Array<{ genId: string }>;
    nextCursor: string;
  };
  assert.deepEqual(
    second.data.map((g) => g.genId),
    [ids[2], ids[1]],
  );
  const canceled = (await (await app.call('GET', '/api/v1/try-on?status=canceled')).json()) as {
    data: Array<{ genId: string }>;
    nextCursor: string | null;
  };
  assert.deepEqual(
    canceled.data.map((g) => g.genId),
    [ids[1]],
  );
  assert.equal(canceled.nextCursor, null);
  assert.equal((await app.call('GET', '/api/v1/try-on?limit=0')).status, 400);
  assert.equal((await app.call('GET', '/api/v1/try-on?status=done')).status, 400);
});

test('with no engine installed, engines says so and a submit is refused before any credit moves', async (t) => {
  const app = await startTestApp(t, { engines: [] });
  assert.deepEqual(await (await app.call('GET', '/api/v1/engines')).json(), []);
  const health = (await (await app.call('GET', '/api/v1/health', { key: null })).json()) as Record<string, unknown>;
  assert.equal(health.status, 'degraded');
  assert.deepEqual(health.engines, []);
  const refused = await app.call('POST', '/api/v1/try-on', { body: await submission() });
  assert.equal(refused.status, 503);
  assert.equal(((await refused.json()) as { code: string }).code, 'engine_unavailable');
  const account = (await (await app.call('GET', '/api/v1/account')).json()) as { creditsRemaining: number; creditsReserved: number };
  assert.deepEqual([account.creditsRemaining, account.creditsReserved], [25, 0]);
  assert.equal(app.appliance.store.state.ledger.length, 1);
});

test('an unknown engine id is a 422 naming the field', async (t) => {
  const app = await startTestApp(t);
  const response = await app.call('POST', '/api/v1/try-on', { body: await submission({ engine: 'nope' }) });
  assert.equal(response.status, 422);
  const problem = (await response.json()) as { errors: Array<{ field: string }> };
  assert.equal(problem.errors[0]!.field, 'engine');
});

test('a full queue refuses submits with 503 queue_full and Retry-After, moving no credit', async (t) => {
  const app = await startTestApp(t, { engines: [composeEngine({ delayMs: 30_000 })], config: { maxQueueDepth: 2 } });
  for (let i = 0; i < 2; i++) assert.equal((await app.call('POST', '/api/v1/try-on', { body: await submission() })).status, 202);
  const refused = await app.call('POST', '/api/v1/try-on', { body: await submission() });
  assert.equal(refused.status, 503);
  assert.equal(((await refused.json()) as { code: string }).code, 'queue_full');
  assert.ok(Number(refused.headers.get('retry-after')) >= 1);
  const account = (await (await app.call('GET', '/api/v1/account')).json()) as { creditsRemaining: number; creditsReserved: number };
  assert.deepEqual([account.creditsRemaining, account.creditsReserved], [23, 2]);
  const health = (await (await app.call('GET', '/api/v1/health', { key: null })).json()) as { queueDepth: number };
  assert.equal(health.queueDepth, 2);
});

test('stopping the appliance answers waiting requests at once with the pending state', async (t) => {
  const app = await startTestApp(t, { engines: [composeEngine({ delayMs: 30_000 })] });
  const { genId } = (await (await app.call('POST', '/api/v1/try-on', { body: await submission() })).json()) as { genId: string };
  const started = performance.now();
  const waiting = app.call('GET', `/api/v1/try-on/${genId}?wait=60`);
  await until(() => app.appliance.notifier.waiting() === 1, 'the request waits');
  await app.appliance.close();
  const response = await waiting;
  assert.equal(response.status, 200);
  assert.equal(((await response.json()) as { status: string }).status, 'pending');
  assert.ok(performance.now() - started < 30_000, 'answered long before its 60 s bound');
  assert.equal(app.appliance.store.state.generations[genId]!.stage, 'queued', 'the running try-on went back to the queue');
});

test('the root address answers a browser with a page pointing at the API', async (t) => {
  const app = await startTestApp(t);
  const response = await fetch(`${app.url}/`);
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type') ?? '', /^text\/html/);
  assert.match(await response.text(), /\/api\/v1\/openapi\.json/);
});

test('replies that carry a customer image are never cached, and no reply names a path on disk', async (t) => {
  const app = await startTestAppliance(t, { engines: [composeEngine(), composeEngine({ id: 'broken', device: 'other', failLoad: true })] });
  const { genId } = (await (await app.call('POST', '/api/v1/try-on', { body: await submission() })).json()) as { genId: string };
  const done = await app.call('GET', `/api/v1/try-on/${genId}?wait=20`);
  assert.ok(((await done.json()) as { image?: string }).image, 'the status carries the image');
  for (const path of [`/api/v1/try-on/${genId}`, `/api/v1/try-on/${genId}/image`, '/api/v1/try-on']) {
    const response = await app.call('GET', path);
    await response.body?.cancel();
    assert.equal(response.headers.get('cache-control'), 'no-store', path);
  }

  const engines = await (await app.call('GET', '/api/v1/engines')).text();
  assert.match(engines, /told to fail loading/, 'the reason is there');
  assert.ok(!engines.includes(join(import.meta.dirname, '..', 'helpers')), 'without the path it was loaded from');
  assert.ok(engines.includes('…/engines/compose-engine.ts'));
  const refused = await app.call('POST', '/api/v1/try-on', { body: await submission({ engine: 'broken' }) });
  assert.equal(refused.status, 503);
  const detail = ((await refused.json()) as { detail: string }).detail;
  assert.match(detail, /told to fail loading: …\/engines\/compose-engine\.ts is missing/);
});

test('requests naming another host (DNS rebinding) are refused; own names and --allowed-hosts are answered', async (t) => {
  const app = await startTestApp(t, { config: { allowedHosts: ['till.shop.example'] } });
  const port = new URL(app.url).port;
  // fetch sets Host from the URL; node:http sends the one given.
  const withHost = (
    host: string,
    path = '/api/v1/account',
    init: { method?: string; headers?: Record<string, string>; body?: string } = {},
  ) =>
    new Promise<Response>((resolve, reject) => {
      const req = request(
        `${app.url}${path}`,
        { method: init.method ?? 'GET', headers: { authorization: `Bearer ${app.adminKey}`, host, ...init.headers } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            const headers = new Headers();
            for (const [name, value] of Object.entries(res.headers)) if (value !== undefined) headers.set(name, [value].flat().join(', '));
            resolve(new Response(Buffer.concat(chunks), { status: res.statusCode ?? 0, headers }));
          });
        },
      );
      req.on('error', reject);
      req.end(init.body);
    });
  const refused = await withHost(`evil.example:${port}`);
  assert.equal(refused.status, 403);
  assert.match(((await refused.json()) as { detail: string }).detail, /--allowed-hosts evil\.example/);
  // The attack the audit made: sign in by PIN from the rebound page, with matching Host and Origin.
  const signIn = await withHost(`evil.example:${port}`, '/gui/api/session', {
    method: 'POST',
    headers: { origin: `http://evil.example:${port}`, 'content-type': 'application/json' },
    body: JSON.stringify({ method: 'key', key: app.adminKey }),
  });
  assert.equal(signIn.status, 403);
  assert.equal(signIn.headers.get('set-cookie'), null);
  for (const host of [
    `localhost:${port}`,
    `127.0.0.1:${port}`,
    `[::1]:${port}`,
    `till.shop.example:${port}`,
    `TILL.shop.example.:${port}`,
  ]) {
    const response = await withHost(host);
    await response.body?.cancel();
    assert.equal(response.status, 200, host);
  }
  const submitted = await withHost(`till.shop.example:${port}`, '/api/v1/try-on', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(await submission()),
  });
  assert.equal(((await submitted.json()) as { statusUrl: string }).statusUrl.startsWith(`http://till.shop.example:${port}/`), true);
});
