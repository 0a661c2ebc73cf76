/**
 * Where the dispatcher finds due webhook events and records its attempts, on whichever store the appliance runs.
 * On a shared database several dispatchers (one per API process) deliver one outbox, so a due event is *claimed*
 * by one dispatcher for a lease before it is sent: no two nodes send one event at once, and an event whose
 * dispatcher died is claimed again once its lease runs out (at least once, the same `webhook-id` each time, as the
 * contract allows). `LowdbDeliveries` is the one-PC store (claims in memory: one process delivers);
 * `state/postgres/deliveries.ts` the shared one. `test/unit/deliveries-contract.test.ts` holds both to one suite.
 */
import type { Store } from '../store/db.ts';
import type { WebhookAttempt, WebhookEvent } from '../store/schema.ts';
import { pruneSettledEvents, recordAttempt } from './outbox.ts';
import { ensureSecret, signingSecrets } from './secrets.ts';

export interface DeliveryStore {
  /** Makes sure a signing secret exists. */
  ensureSecret(now: Date): Promise<void>;
  /** The secrets to sign with at `now`: the current one, and the previous one during a rotation. */
  signingSecrets(now: Date): Promise<string[]>;
  /**
   * Claims up to `limit` pending events that are due and unclaimed (or whose claim ran out) for `dispatcherId`
   * until `now + leaseSeconds`, the longest due first; with when the next unclaimed pending event falls due (ms
   * since the epoch), if one does.
   */
  claimDue(
    dispatcherId: string,
    now: Date,
    limit: number,
    leaseSeconds: number,
  ): Promise<{ events: WebhookEvent[]; nextDueAt: number | null }>;
  /**
   * Records an attempt on an event `dispatcherId` holds, and ends the claim; null (nothing written) if it does not
   * hold it any more (its lease ran out and another took it) or the event is settled.
   */
  recordAttempt(
    eventId: string,
    dispatcherId: string,
    attempt: WebhookAttempt,
    now: Date,
    retrySeconds: readonly number[],
    random: () => number,
  ): Promise<WebhookEvent | null>;
  /** Gives up a claim without an attempt (a stopping dispatcher), so another may send the event at once. */
  abandon(eventId: string, dispatcherId: string): Promise<void>;
  /** Removes settled events created before `before`; how many went. */
  prune(before: Date): Promise<number>;
}

interface Claim {
  by: string;
  until: number;
}

/** The outbox in the state document of one PC. */
export class LowdbDeliveries implements DeliveryStore {
  private readonly claims = new Map<string, Claim>();

  constructor(private readonly store: Store) {}

  async ensureSecret(now: Date): Promise<void> {
    if (!this.store.state.webhookSecrets.some((secret) => secret.expiresAt === undefined))
      await this.store.mutate((state) => ensureSecret(state, now));
  }

  async signingSecrets(now: Date): Promise<string[]> {
    return signingSecrets(this.store.state, now);
  }

  async claimDue(dispatcherId: string, now: Date, limit: number, leaseSeconds: number) {
    const at = now.getTime();
    const due: WebhookEvent[] = [];
    let nextDueAt: number | null = null;
    for (const event of Object.values(this.store.state.webhookEvents)) {
      if (event.state !== 'pending' || event.nextAttemptAt === null) continue;
      const claim = this.claims.get(event.id);
      if (claim && claim.until > at) continue;
      const dueAt = Date.parse(event.nextAttemptAt);
      if (dueAt <= at) due.push(event);
      else nextDueAt = Math.min(nextDueAt ?? dueAt, dueAt);
    }
    due.sort((a, b) => (a.nextAttemptAt! < b.nextAttemptAt! ? -1 : a.nextAttemptAt! > b.nextAttemptAt! ? 1 : 0));
    const events = due.slice(0, Math.max(0, limit));
    for (const event of events) this.claims.set(event.id, { by: dispatcherId, until: at + leaseSeconds * 1000 });
    return { events, nextDueAt };
  }

  async recordAttempt(...[eventId, dispatcherId, attempt, now, retrySeconds, random]: Parameters<DeliveryStore['recordAttempt']>) {
    if (this.claims.get(eventId)?.by !== dispatcherId) return null;
    try {
      return await this.store.mutate((state) => recordAttempt(state, eventId, attempt, now, retrySeconds, random));
    } finally {
      if (this.claims.get(eventId)?.by === dispatcherId) this.claims.delete(eventId);
    }
  }

  async abandon(eventId: string, dispatcherId: string): Promise<void> {
    if (this.claims.get(eventId)?.by === dispatcherId) this.claims.delete(eventId);
  }

  async prune(before: Date): Promise<number> {
    const stale = Object.values(this.store.state.webhookEvents).some(
      (event) => event.state !== 'pending' && Date.parse(event.createdAt) < before.getTime(),
    );
    return stale ? this.store.mutate((state) => pruneSettledEvents(state, before)) : 0;
  }
}
