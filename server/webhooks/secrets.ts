/**
 * The installation's webhook signing secret: `whsec_` + base64 of 32 random
 * bytes (Standard Webhooks). A rotation keeps the old secret signing until its
 * overlap ends, so receivers can switch without dropping a webhook. These
 * functions run inside `Store.mutate`, except the read-only ones.
 */
import { randomBytes } from 'node:crypto';
import type { State, WebhookSecret } from '../store/schema.ts';

/** A fresh signing secret. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** The current secret (the one without an expiry), if one was made. */
export function currentSecret(state: State): WebhookSecret | undefined {
  return state.webhookSecrets.find((secret) => secret.expiresAt === undefined);
}

/** The current secret, made now if there is none. */
export function ensureSecret(state: State, now: Date): WebhookSecret {
  const existing = currentSecret(state);
  if (existing) return existing;
  const secret: WebhookSecret = { secret: newWebhookSecret(), createdAt: now.toISOString() };
  state.webhookSecrets.push(secret);
  return secret;
}

/**
 * Replaces the current secret; the old one signs too until now + `overlapHours`.
 * A secret left over from an earlier rotation stops signing now: there is one previous secret at most.
 */
export function rotateSecret(state: State, now: Date, overlapHours: number): WebhookSecret {
  const old = currentSecret(state);
  const fresh: WebhookSecret = { secret: newWebhookSecret(), createdAt: now.toISOString() };
  state.webhookSecrets = old ? [{ ...old, expiresAt: new Date(now.getTime() + overlapHours * 3_600_000).toISOString() }, fresh] : [fresh];
  return fresh;
}

/** The secrets that sign at `now`: the current one first, then a previous one still in its overlap. */
export function signingSecrets(state: State, now: Date): string[] {
  const current = currentSecret(state);
  const previous = state.webhookSecrets.filter((secret) => secret.expiresAt !== undefined && Date.parse(secret.expiresAt) > now.getTime());
  return [...(current ? [current.secret] : []), ...previous.map((secret) => secret.secret)];
}

/** What GET /api/v1/webhooks/secret shows. */
export interface SecretView {
  secret: string;
  previousSecret?: string;
  previousExpiresAt?: string;
}

/** The view of the secrets at `now` (a previous secret only while it still signs). */
export function secretView(current: WebhookSecret, state: State, now: Date): SecretView {
  const view: SecretView = { secret: current.secret };
  const previous = state.webhookSecrets.find((secret) => secret.expiresAt !== undefined && Date.parse(secret.expiresAt) > now.getTime());
  if (previous) {
    view.previousSecret = previous.secret;
    view.previousExpiresAt = previous.expiresAt!;
  }
  return view;
}
