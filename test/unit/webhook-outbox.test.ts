import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { ApiError } from '../../server/kernel/errors.ts';
import { grantTrial } from '../../server/credits/ledger.ts';
import { cancelGeneration, completeGeneration, createGeneration, failGeneration } from '../../server/jobs/generations.ts';
import { emptyState, type State, type WebhookEvent } from '../../server/store/schema.ts';
import { newId } from '../../server/kernel/ids.ts';
import { pruneSettledEvents, recordAttempt, redeliverEvent } from '../../server/webhooks/outbox.ts';
import { ensureSecret, rotateSecret, secretView, signingSecrets } from '../../server/webhooks/secrets.ts';
import { plainParams } from '../helpers/inputs.ts';

const t0 = new Date('2026-03-01T12:00:00Z');
const later = (ms: number) => new Date(t0.getTime() + ms);
const IMAGE = { file: 'x.jpg', format: 'jpeg' as const, width: 1, height: 1 };
const BASE = 'http://shop.local:8787/api/v1/try-on';

function submit(state: State, webhookUrl?: string): string {
  const id = newId('gen', t0.getTime());
  createGeneration(
    state,
    {
      id,
      keyId: 'key',
      engine: 'e',
      params: plainParams(webhookUrl ? { webhookUrl } : {}),
      inputs: { selfie: IMAGE, items: [IMAGE] },
      retentionDays: 7,
      statusUrl: `${BASE}/${id}`,
    },
    t0,
  );
  return id;
}

function fresh(): State {
  const state = emptyState();
  grantTrial(state, t0, 5, 30);
  return state;
}

function onlyEvent(state: State): WebhookEvent {
  const events = Object.values(state.webhookEvents);
  assert.equal(events.length, 1);
  return events[0]!;
}

test('a terminal transition with a webhookUrl writes exactly one event, in the same change', () => {
  const state = fresh();
  const plain = submit(state);
  completeGeneration(state, plain, IMAGE, later(1000));
  assert.deepEqual(state.webhookEvents, {}, 'no webhookUrl, no event');
  assert.equal(state.generations[plain]!.statusUrl, undefined, 'the base URL is kept only for webhooks');

  const id = submit(state, 'http://127.0.0.1:9/hook');
  assert.ok(completeGeneration(state, id, IMAGE, later(2000)));
  const event = onlyEvent(state);
  assert.match(event.id, /^evt_[0-9A-Z]{26}$/);
  assert.equal(state.generations[id]!.webhookEventId, event.id);
  assert.equal(event.state, 'pending');
  assert.equal(event.nextAttemptAt, later(2000).toISOString());
  assert.equal(event.url, 'http://127.0.0.1:9/hook');
  assert.deepEqual(JSON.parse(event.body), {
    id: event.id,
    type: 'try_on.completed',
    createdAt: later(2000).toISOString(),
    data: { genId: id, status: 'complete', statusUrl: `${BASE}/${id}`, imageUrl: `${BASE}/${id}/image`, creditsRemaining: 3 },
  });
  assert.ok(!completeGeneration(state, id, IMAGE, later(3000)));
  assert.equal(Object.keys(state.webhookEvents).length, 1, 'a second transition attempt adds nothing');
});

test('failed and canceled generations send their type, the error and the released credit', () => {
  const state = fresh();
  const failed = submit(state, 'https://hooks.example/a');
  failGeneration(state, failed, { code: 'no_person_detected', message: 'No person.' }, later(1000));
  const canceled = submit(state, 'https://hooks.example/b');
  cancelGeneration(state, canceled, later(2000));
  const bodies = Object.values(state.webhookEvents).map((event) => JSON.parse(event.body) as Record<string, any>);
  const f = bodies.find((body) => body.data.genId === failed)!;
  assert.equal(f.type, 'try_on.failed');
  assert.deepEqual(f.data.error, { code: 'no_person_detected', message: 'No person.' });
  assert.equal(f.data.imageUrl, undefined);
  assert.equal(f.data.creditsRemaining, 5, 'the released credit counts');
  const c = bodies.find((body) => body.data.genId === canceled)!;
  assert.equal(c.type, 'try_on.canceled');
  assert.equal(c.data.status, 'canceled');
  assert.equal(c.data.creditsRemaining, 5);
});

test('attempts: 2xx delivers, 410 is gone, a refused destination fails at once, others retry on the schedule with jitter, then fail', () => {
  const schedule = [5, 30];
  const outcomes = (attempts: Array<{ status?: number; error?: string }>, random = () => 0.5) => {
    const state = fresh();
    const id = submit(state, 'http://127.0.0.1:9/');
    completeGeneration(state, id, IMAGE, t0);
    const event = onlyEvent(state);
    attempts.forEach((attempt, i) =>
      recordAttempt(state, event.id, { at: t0.toISOString(), durationMs: 1, ...attempt }, later(i), schedule, random),
    );
    return event;
  };
  assert.equal(outcomes([{ status: 204 }]).state, 'delivered');
  assert.equal(outcomes([{ status: 204 }]).nextAttemptAt, null);
  assert.equal(outcomes([{ status: 410 }]).state, 'gone');
  assert.equal(outcomes([{ error: 'destination-not-allowed' }]).state, 'failed');
  assert.equal(outcomes([{ status: 302 }]).state, 'pending', 'a redirect is a failure to retry');

  const low = outcomes([{ status: 500 }], () => 0);
  assert.equal(low.nextAttemptAt, later(4000).toISOString(), '5 s − 20 %');
  const high = outcomes([{ error: 'timeout' }], () => 0.999999);
  assert.ok(Date.parse(high.nextAttemptAt!) - t0.getTime() <= 6000, '5 s + 20 % at most');
  const second = outcomes([{ status: 500 }, { status: 503 }]);
  assert.equal(second.nextAttemptAt, later(1 + 30_000).toISOString());
  const exhausted = outcomes([{ status: 500 }, { status: 500 }, { status: 500 }]);
  assert.equal(exhausted.state, 'failed');
  assert.equal(exhausted.attempts.length, 3);
  assert.equal(recordAttempt(fresh(), 'evt_missing', { at: '', durationMs: 0 }, t0, schedule, Math.random), null);
});

test('a redelivery is pending and due at once with a new schedule; refused while pending or without an event', () => {
  const state = fresh();
  const id = submit(state, 'http://127.0.0.1:9/');
  assert.throws(
    () => redeliverEvent(state, state.generations[id]!, t0),
    (error) => error instanceof ApiError && error.code === 'conflict',
  );
  completeGeneration(state, id, IMAGE, t0);
  const event = onlyEvent(state);
  for (let i = 0; i < 3; i++) recordAttempt(state, event.id, { at: '', status: 500, durationMs: 1 }, t0, [1, 1], () => 0.5);
  assert.equal(event.state, 'failed');
  redeliverEvent(state, state.generations[id]!, later(10_000));
  assert.equal(event.state, 'pending');
  assert.equal(event.nextAttemptAt, later(10_000).toISOString());
  assert.equal(event.attempts.length, 3, 'history kept');
  recordAttempt(state, event.id, { at: '', status: 500, durationMs: 1 }, later(10_000), [1, 1], () => 0.5);
  assert.equal(event.state, 'pending', 'the new schedule starts over');

  const plain = submit(state);
  completeGeneration(state, plain, IMAGE, t0);
  assert.throws(
    () => redeliverEvent(state, state.generations[plain]!, t0),
    (error) => error instanceof ApiError && error.code === 'conflict',
  );
});

test('settled events are pruned after their time; pending ones stay', () => {
  const state = fresh();
  const a = submit(state, 'http://127.0.0.1:9/');
  completeGeneration(state, a, IMAGE, t0);
  const b = submit(state, 'http://127.0.0.1:9/');
  completeGeneration(state, b, IMAGE, t0);
  recordAttempt(state, state.generations[a]!.webhookEventId!, { at: '', status: 200, durationMs: 1 }, t0, [], () => 0);
  assert.equal(pruneSettledEvents(state, later(1)), 1);
  assert.deepEqual(Object.keys(state.webhookEvents), [state.generations[b]!.webhookEventId]);
});

test('secrets: whsec_ and 32 bytes; a rotation signs with both during the overlap, then only the new one', () => {
  const state = fresh();
  const first = ensureSecret(state, t0);
  assert.match(first.secret, /^whsec_[A-Za-z0-9+/]+=*$/);
  assert.equal(Buffer.from(first.secret.slice(6), 'base64').length, 32);
  assert.equal(ensureSecret(state, later(1)), first, 'made once');
  assert.deepEqual(signingSecrets(state, t0), [first.secret]);

  const second = rotateSecret(state, later(1000), 24);
  assert.notEqual(second.secret, first.secret);
  assert.deepEqual(signingSecrets(state, later(2000)), [second.secret, first.secret]);
  assert.deepEqual(secretView(second, state, later(2000)), {
    secret: second.secret,
    previousSecret: first.secret,
    previousExpiresAt: later(1000 + 24 * 3_600_000).toISOString(),
  });
  assert.deepEqual(signingSecrets(state, later(1000 + 24 * 3_600_000)), [second.secret]);
  assert.deepEqual(secretView(second, state, later(1000 + 24 * 3_600_000)), { secret: second.secret });

  const third = rotateSecret(state, later(5000), 24);
  assert.deepEqual(signingSecrets(state, later(6000)), [third.secret, second.secret], 'one previous secret at most');

  const now = new Date();
  const both = signingSecrets(state, later(6000))
    .map((secret) => new Webhook(secret).sign('evt_1', now, '{}'))
    .join(' ');
  const headers = { 'webhook-id': 'evt_1', 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)), 'webhook-signature': both };
  for (const secret of [third.secret, second.secret]) assert.deepEqual(new Webhook(secret).verify('{}', headers), {});
  assert.throws(() => new Webhook(first.secret).verify('{}', headers));
});
