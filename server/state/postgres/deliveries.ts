/**
 * The webhook outbox on a shared database: every API process runs a dispatcher, and each due event is claimed by
 * one of them (`FOR UPDATE SKIP LOCKED`, then a lease on the row) before it is sent, so no two nodes send one event
 * at once and a dead dispatcher's event is sent again once its lease runs out. An attempt is recorded only by the
 * dispatcher that holds the claim, in the same statement that ends it.
 */
import type { WebhookAttempt, WebhookEvent } from '../../store/schema.ts';
import type { DeliveryStore } from '../../webhooks/deliveries.ts';
import { applyAttempt } from '../../webhooks/outbox.ts';
import type { PgDatabase } from './db.ts';

/** Where the signing secrets come from (the account store on a shared database). */
export type SigningSecrets = Pick<DeliveryStore, 'ensureSecret' | 'signingSecrets'>;

export class PgDeliveries implements DeliveryStore {
  constructor(
    private readonly db: PgDatabase,
    private readonly secrets: SigningSecrets,
  ) {}

  ensureSecret(now: Date): Promise<void> {
    return this.secrets.ensureSecret(now);
  }

  signingSecrets(now: Date): Promise<string[]> {
    return this.secrets.signingSecrets(now);
  }

  claimDue(dispatcherId: string, now: Date, limit: number, leaseSeconds: number) {
    return this.db.transaction(async (sql) => {
      const { rows } = await sql.query<{ event: WebhookEvent }>(
        `UPDATE webhook_events SET claimed_by = $1, lease_until = $2
         WHERE id IN (
           SELECT id FROM webhook_events
           WHERE delivery_state = 'pending' AND next_attempt_at <= $3 AND (lease_until IS NULL OR lease_until <= $3)
           ORDER BY next_attempt_at, id LIMIT $4 FOR UPDATE SKIP LOCKED)
         RETURNING event`,
        [dispatcherId, new Date(now.getTime() + leaseSeconds * 1000), now, Math.max(0, limit)],
      );
      const next = await sql.query<{ at: Date | null }>(
        `SELECT min(next_attempt_at) AS at FROM webhook_events
         WHERE delivery_state = 'pending' AND next_attempt_at > $1 AND (lease_until IS NULL OR lease_until <= $1)`,
        [now],
      );
      const events = rows.map((row) => row.event).sort((a, b) => (a.nextAttemptAt! < b.nextAttemptAt! ? -1 : 1));
      return { events, nextDueAt: next.rows[0]?.at?.getTime() ?? null };
    });
  }

  recordAttempt(
    eventId: string,
    dispatcherId: string,
    attempt: WebhookAttempt,
    now: Date,
    retrySeconds: readonly number[],
    random: () => number,
  ): Promise<WebhookEvent | null> {
    return this.db.transaction(async (sql) => {
      const { rows } = await sql.query<{ event: WebhookEvent }>(
        `SELECT event FROM webhook_events WHERE id = $1 AND claimed_by = $2 AND delivery_state = 'pending' FOR UPDATE`,
        [eventId, dispatcherId],
      );
      if (!rows[0]) return null;
      const event = applyAttempt(rows[0].event, attempt, now, retrySeconds, random);
      await sql.query('UPDATE webhook_events SET event = $2, claimed_by = NULL, lease_until = NULL WHERE id = $1', [eventId, event]);
      return event;
    });
  }

  async abandon(eventId: string, dispatcherId: string): Promise<void> {
    await this.db.query('UPDATE webhook_events SET claimed_by = NULL, lease_until = NULL WHERE id = $1 AND claimed_by = $2', [
      eventId,
      dispatcherId,
    ]);
  }

  async prune(before: Date): Promise<number> {
    const { rowCount } = await this.db.query(`DELETE FROM webhook_events WHERE delivery_state <> 'pending' AND created_at < $1`, [before]);
    return rowCount ?? 0;
  }
}
