import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkAgainstOpenApi } from '../helpers/openapi-check.ts';
import { openApiDocument } from '../../server/api/openapi.ts';
import { startTestApp } from '../helpers/appliance.ts';

const U = 'http://127.0.0.1:1';

test('the checker refuses undocumented statuses, content types and bodies that break the schema', () => {
  const ok = JSON.stringify({ creditsRemaining: 1, creditsReserved: 0, trialCreditsRemaining: 1, trialExpiresAt: null });
  checkAgainstOpenApi('GET', `${U}/api/v1/account`, 200, 'application/json', ok);
  assert.throws(
    () => checkAgainstOpenApi('GET', `${U}/api/v1/account`, 200, 'application/json', JSON.stringify({ creditsRemaining: -1 })),
    /does not match/,
  );
  assert.throws(() => checkAgainstOpenApi('GET', `${U}/api/v1/account`, 418, 'application/json', ok), /does not list/);
  assert.throws(() => checkAgainstOpenApi('GET', `${U}/api/v1/account`, 200, 'text/html', ok), /not documented/);
  assert.throws(() => checkAgainstOpenApi('PUT', `${U}/api/v1/account`, 200, 'application/json', ok), /not documented/);
  assert.throws(() => checkAgainstOpenApi('GET', `${U}/api/v1/nowhere`, 200, 'application/json', '{}'), /not in the OpenAPI document/);
});

test('every documented operation exists on the server (401 without a key, not 404)', async (t) => {
  const app = await startTestApp(t);
  const doc = openApiDocument('x') as { paths: Record<string, Record<string, { security?: unknown[] }>> };
  for (const [template, operations] of Object.entries(doc.paths)) {
    const path = template.replace('{genId}', 'gen_01M00000000000000000000000').replace('{id}', 'key_01M00000000000000000000000');
    for (const [method, operation] of Object.entries(operations)) {
      const response = await app.call(method.toUpperCase(), path, { key: null });
      const open = Array.isArray(operation.security) && operation.security.length === 0;
      assert.equal(response.status, open ? 200 : 401, `${method} ${template}`);
    }
  }
  const served = (await (await app.call('GET', '/api/v1/openapi.json', { key: null })).json()) as {
    openapi: string;
    info: { version: string };
  };
  assert.equal(served.openapi, '3.1.0');
});
