/**
 * The webhook outbox (contract 2.9): an event is written in the same
 * mutation that makes its generation terminal, so a durable terminal state
 * always has its event, and the dispatcher delivers it from there (at least
 * once, the same `webhook-id` on every attempt). Every function here runs
 * inside `Store.mutate` and checks before it changes.
 */
import { ApiError } from '../kernel/errors.ts';
import { accountSummary } from '../credits/ledger.ts';
import { newId } from '../kernel/ids.ts';
import type { GenerationRecord, State, WebhookAttempt, WebhookEvent, WebhookEventType } from '../store/schema.ts';

const TYPES: Record<Exclude<GenerationRecord['status'], 'pending'>, WebhookEventType> = {
  complete: 'try_on.completed',
  failed: 'try_on.failed',
  canceled: 'try_on.canceled',
};

/** The body of a webhook, as sent (client/types.ts WebhookPayload). */
interface WebhookBody {
  id: string;
  type: WebhookEventType;
  createdAt: string;
  data: {
    genId: string;
    status: GenerationRecord['status'];
    statusUrl: string;
    imageUrl?: string;
    creditsRemaining: number;
    error?: { code: string; message: string };
  };
}

/**
 * Adds the webhook event of a generation that has just become terminal, if
 * it was submitted with a webhookUrl; call it after the ledger entry of the
 * transition, so that `creditsRemaining` includes it.
 */
export function addTerminalEvent(state: State, record: GenerationRecord, now: Date): WebhookEvent | null {
  if (record.webhookEventId) return null;
  const event = terminalEvent(record, accountSummary(state, now).creditsRemaining, now);
  if (!event) return null;
  state.webhookEvents[event.id] = event;
  record.webhookEventId = event.id;
  return event;
}

/**
 * The webhook event of a generation that has just become terminal, or null when it has no webhookUrl; any store
 * writes it with the terminal state. `creditsRemaining` is the balance after the transition's ledger entry.
 */
export function terminalEvent(record: GenerationRecord, creditsRemaining: number, now: Date): WebhookEvent | null {
  const url = record.params.webhookUrl;
  if (!url || record.status === 'pending') return null;
  const id = newId('evt', now.getTime());
  const createdAt = now.toISOString();
  // Generations submitted before webhooks were delivered have no recorded base URL: a path is the best there is.
  const statusUrl = record.statusUrl ?? `/api/v1/try-on/${record.id}`;
  const body: WebhookBody = {
    id,
    type: TYPES[record.status],
    createdAt,
    data: { genId: record.id, status: record.status, statusUrl, creditsRemaining },
  };
  if (record.status === 'complete') body.data.imageUrl = `${statusUrl}/image`;
  if (record.error) body.data.error = { code: record.error.code, message: record.error.message };
  return {
    id,
    genId: record.id,
    type: body.type,
    url,
    body: JSON.stringify(body),
    createdAt,
    state: 'pending',
    attempts: [],
    nextAttemptAt: createdAt,
  };
}

/** Attempt errors that retrying cannot fix. */
const FINAL_ERRORS = new Set(['destination-not-allowed', 'invalid-url']);

/**
 * Records one attempt and decides what follows: any 2xx delivers, 410 is
 * `gone`, a refused destination fails at once, anything else is retried after
 * `retrySeconds[n-1]` (n: attempts in this schedule) ±20 %, then fails.
 */
export function recordAttempt(
  state: State,
  eventId: string,
  attempt: WebhookAttempt,
  now: Date,
  retrySeconds: readonly number[],
  random: () => number,
): WebhookEvent | null {
  const event = state.webhookEvents[eventId];
  if (!event || event.state !== 'pending') return null;
  return applyAttempt(event, attempt, now, retrySeconds, random);
}

/** `recordAttempt` on the event itself, wherever a store keeps it; the event must be pending. */
export function applyAttempt(
  event: WebhookEvent,
  attempt: WebhookAttempt,
  now: Date,
  retrySeconds: readonly number[],
  random: () => number,
): WebhookEvent {
  event.attempts.push(attempt);
  const status = attempt.status;
  if (status !== undefined && status >= 200 && status < 300) return settle(event, 'delivered');
  if (status === 410) return settle(event, 'gone');
  if (attempt.error !== undefined && FINAL_ERRORS.has(attempt.error)) return settle(event, 'failed');
  const n = event.attempts.length - (event.scheduleFrom ?? 0);
  const delay = retrySeconds[n - 1];
  if (delay === undefined) return settle(event, 'failed');
  const jitter = 0.8 + 0.4 * random();
  event.nextAttemptAt = new Date(now.getTime() + delay * 1000 * jitter).toISOString();
  return event;
}

function settle(event: WebhookEvent, state: Exclude<WebhookEvent['state'], 'pending'>): WebhookEvent {
  event.state = state;
  event.nextAttemptAt = null;
  return event;
}

/**
 * Sends a generation's event again: pending, due now, a new retry schedule,
 * its attempt history kept. 409 if the generation is not terminal or has no event.
 */
export function redeliverEvent(state: State, record: GenerationRecord, now: Date): WebhookEvent {
  return restartDelivery(record, record.webhookEventId ? state.webhookEvents[record.webhookEventId] : undefined, now);
}

/** `redeliverEvent` on the event itself (undefined: the try-on has none), wherever a store keeps it. */
export function restartDelivery(record: GenerationRecord, event: WebhookEvent | undefined, now: Date): WebhookEvent {
  if (record.status === 'pending')
    throw new ApiError('conflict', `The try-on ${record.id} is still pending; its webhook is sent when it ends.`);
  if (!event) throw new ApiError('conflict', `The try-on ${record.id} has no webhook event to send again.`);
  event.state = 'pending';
  event.nextAttemptAt = now.toISOString();
  event.scheduleFrom = event.attempts.length;
  return event;
}

/** The events of a generation (at most one today), oldest first. */
export function eventsOf(state: State, record: GenerationRecord): WebhookEvent[] {
  const event = record.webhookEventId ? state.webhookEvents[record.webhookEventId] : undefined;
  return event ? [event] : [];
}

/** Removes settled events created before `before`; returns how many. */
export function pruneSettledEvents(state: State, before: Date): number {
  let removed = 0;
  for (const event of Object.values(state.webhookEvents)) {
    if (event.state !== 'pending' && Date.parse(event.createdAt) < before.getTime()) {
      delete state.webhookEvents[event.id];
      removed++;
    }
  }
  return removed;
}

/** A delivery as GET …/webhook-deliveries shows it. */
export interface DeliveryView {
  eventId: string;
  type: WebhookEventType;
  url: string;
  state: WebhookEvent['state'];
  createdAt: string;
  attempts: WebhookAttempt[];
  nextAttemptAt: string | null;
}

/** The wire view of an event (its body is not repeated: it is the generation's status). */
export function deliveryView(event: WebhookEvent): DeliveryView {
  return {
    eventId: event.id,
    type: event.type,
    url: event.url,
    state: event.state,
    createdAt: event.createdAt,
    attempts: event.attempts.map((attempt) => ({ ...attempt })),
    nextAttemptAt: event.nextAttemptAt,
  };
}
