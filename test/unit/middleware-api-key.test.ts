/**
 * The API-key middleware on its own, with an injected GUI session (it imports no feature): a bearer key
 * authenticates; a missing, malformed or revoked one is 401; a session cookie authenticates as its key only when
 * sessions are given, and a state-changing call that fails the session's CSRF check is refused with its error.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Request } from 'express';
import { apiKey, requireScope, type SessionAuth } from '../../server/api/middleware/api-key.ts';
import { ApiError } from '../../server/kernel/errors.ts';
import { createKey, revokeKey } from '../../server/keys/api-keys.ts';
import { emptyState } from '../../server/store/schema.ts';
import { findActiveKey } from '../../server/keys/api-keys.ts';

const NOW = new Date('2026-11-23T12:00:00Z');

function request(headers: Record<string, string>, method = 'GET'): Request {
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  return { method, get: (name: string) => lower[name.toLowerCase()] } as unknown as Request;
}

/** Runs a middleware; what it passed to next() and the request, at once (next() called in the same tick). */
function run(handler: ReturnType<typeof apiKey>, req: Request): { error: unknown; req: Request } {
  let error: unknown = 'next() was not called';
  handler(req, {} as never, (e?: unknown) => {
    error = e;
  });
  return { error, req };
}

/** Runs a middleware that may answer later (a session looked up in a store); resolves when it calls next(). */
function settle(handler: ReturnType<typeof apiKey>, req: Request): Promise<{ error: unknown; req: Request }> {
  return new Promise((resolve) => handler(req, {} as never, (error?: unknown) => resolve({ error, req })));
}

describe('apiKey() middleware', () => {
  const state = emptyState();
  const admin = createKey(state, 'till', 'admin', NOW);
  const standard = createKey(state, 'kiosk', 'standard', NOW);
  const revoked = createKey(state, 'old', 'standard', NOW);
  revokeKey(state, revoked.record.id, NOW);
  const clock = () => NOW;
  const activeKey = (secret: string) => findActiveKey(state, secret, NOW);

  test('a bearer key authenticates as that key; a missing, malformed, unknown or revoked one is 401', () => {
    const ok = run(apiKey({ activeKey, clock }), request({ Authorization: `Bearer ${standard.key}` }));
    assert.equal(ok.error, undefined);
    assert.equal(ok.req.auth?.key.id, standard.record.id);
    for (const headers of <Record<string, string>[]>[
      {},
      { Authorization: 'Basic abc' },
      { Authorization: 'Bearer fr_nope' },
      { Authorization: `Bearer ${revoked.key}` },
    ]) {
      const { error } = run(apiKey({ activeKey, clock }), request(headers));
      assert.ok(error instanceof ApiError && error.code === 'unauthorized', JSON.stringify(headers));
    }
  });

  test('a session cookie counts only when sessions are injected, as the session’s key, with its CSRF rule', async () => {
    const csrfChecked: string[] = [];
    const sessions: SessionAuth = {
      tokenOf: (req) => req.get('cookie')?.replace('s=', ''),
      find: async (token) => (token === 'live' ? { sessionId: 'ses_1', key: admin.record, staff: false } : undefined),
      checkCsrf: (req, token) => {
        csrfChecked.push(token);
        if (req.method === 'POST' && req.get('x-csrf-token') !== 'right') throw new ApiError('forbidden', 'no CSRF token');
      },
    };
    const without = run(apiKey({ activeKey, clock }), request({ Cookie: 's=live' }));
    assert.ok(without.error instanceof ApiError && without.error.code === 'unauthorized', 'no sessions: a cookie is nothing');

    const signedIn = await settle(apiKey({ activeKey, clock, sessions }), request({ Cookie: 's=live' }));
    assert.equal(signedIn.error, undefined);
    assert.deepEqual(signedIn.req.auth, { key: admin.record, sessionId: 'ses_1' });

    const ended = await settle(apiKey({ activeKey, clock, sessions }), request({ Cookie: 's=gone' }));
    assert.ok(ended.error instanceof ApiError && ended.error.code === 'unauthorized');

    const forged = await settle(apiKey({ activeKey, clock, sessions }), request({ Cookie: 's=live' }, 'POST'));
    assert.ok(forged.error instanceof ApiError && forged.error.code === 'forbidden');
    const sent = await settle(apiKey({ activeKey, clock, sessions }), request({ Cookie: 's=live', 'X-CSRF-Token': 'right' }, 'POST'));
    assert.equal(sent.error, undefined);
    // Asked on every request that signs in with the session (safe methods pass inside checkCsrf).
    assert.deepEqual(csrfChecked, ['live', 'live', 'live']);
  });

  test('a session store that fails passes its error on, and the request is not signed in', async () => {
    const broken = new Error('the database is gone');
    const sessions: SessionAuth = {
      tokenOf: () => 'live',
      find: () => Promise.reject(broken),
      checkCsrf: () => assert.fail('CSRF is not checked for a session that could not be found'),
    };
    const failed = await settle(apiKey({ activeKey, clock, sessions }), request({ Cookie: 's=live' }));
    assert.equal(failed.error, broken);
    assert.equal(failed.req.auth, undefined);
  });

  test('requireScope: admin passes, standard is 403 for admin calls, none is 401', () => {
    const asKey = (key: typeof admin.record | undefined) => ({ auth: key ? { key } : undefined }) as unknown as Request;
    const check = (key: typeof admin.record | undefined) => run(requireScope('admin') as never, asKey(key)).error;
    assert.equal(check(admin.record), undefined);
    assert.equal((check(standard.record) as ApiError).code, 'forbidden');
    assert.equal((check(undefined) as ApiError).code, 'unauthorized');
  });

  test('requireScope: staff signed in with the PIN do the shop floor’s work, never administration', () => {
    const staff = { auth: { key: admin.record, sessionId: 'ses_1', staff: true } } as unknown as Request;
    const refused = run(requireScope('admin') as never, staff).error as ApiError;
    assert.equal(refused.code, 'forbidden');
    assert.match(refused.message, /sign in with the admin key/);
    assert.equal(run(requireScope('admin', { shopFloor: true }) as never, staff).error, undefined);
  });
});
