/**
 * Delivers the webhook outbox: claims due events (`pending`, `nextAttemptAt`
 * passed) from its DeliveryStore, at most `concurrency` at once, POSTs each
 * event's stored body with fresh Standard Webhooks headers, and records every
 * attempt durably. State lives in the store, so deliveries survive restarts:
 * on start every pending event is picked up, and an attempt cut short by a
 * stop or a crash is simply made again with the same `webhook-id`. On a shared
 * database each API process runs one; a claim keeps two from sending one
 * event at once (deliveries.ts).
 */
import { randomInt } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { newId } from '../kernel/ids.ts';
import { AddressPolicy } from './address-policy.ts';
import type { DeliveryStore } from './deliveries.ts';
import { destinationProblem, sendWebhook, systemLookup, type LookupFn, type SendOutcome } from './send.ts';
import type { WebhookAttempt, WebhookEvent } from '../store/schema.ts';

export interface DispatcherOptions {
  deliveries: DeliveryStore;
  clock: () => Date;
  /** Per attempt: resolve, connect, send, response headers. */
  timeoutMs: number;
  /** Delays before each retry, seconds (±20 % jitter). */
  retrySeconds: readonly number[];
  /** CIDR ranges (see address-policy.ts). */
  allow: readonly string[];
  deny: readonly string[];
  version: string;
  /** Settled events are removed this long after they were created. */
  keepSettledMs: number;
  lookup?: LookupFn;
  /** Attempts in flight at once (default 8). */
  concurrency?: number;
  /** A number in [0, 1) for jitter (default: crypto). */
  random?: () => number;
  log: (message: string, error?: unknown) => void;
}

/** Longest sleep between scans when nothing is due sooner (events written by others wake it via wake()). */
const IDLE_SCAN_MS = 2_000;
const PRUNE_EVERY_MS = 10 * 60_000;

/** The webhook delivery loop; start() after the store is open, stop() before it closes. */
export class WebhookDispatcher {
  /** Names this dispatcher's claims on a shared outbox. */
  readonly id = newId('dsp');
  private readonly options: DispatcherOptions;
  private readonly policy: AddressPolicy;
  private readonly lookup: LookupFn;
  private readonly random: () => number;
  /** How long a claim lasts: longer than any attempt (its timeout), so only a dead dispatcher's claim runs out. */
  private readonly leaseSeconds: number;
  private readonly inFlight = new Map<string, AbortController>();
  private readonly settled = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private scanning = false;
  private scanAgain = false;
  private lastPrune = 0;

  /** Throws if an allow or deny range does not parse. */
  constructor(options: DispatcherOptions) {
    this.options = options;
    this.policy = new AddressPolicy({ allow: options.allow, deny: options.deny });
    this.lookup = options.lookup ?? systemLookup;
    this.random = options.random ?? (() => randomInt(1_000_000) / 1_000_000);
    this.leaseSeconds = Math.ceil(options.timeoutMs / 1000) * 2 + 30;
  }

  /** Makes sure a signing secret exists, then starts delivering (pending events first). */
  async start(): Promise<void> {
    await this.options.deliveries.ensureSecret(this.options.clock());
    this.running = true;
    this.wake();
  }

  /** Why a webhook URL would be refused at delivery (null when it would not): a submit checks before it charges. */
  destinationProblem(url: string): Promise<string | null> {
    return destinationProblem(url, this.policy, this.lookup);
  }

  /** Looks for due events now (after a terminal transition or a redelivery). */
  wake(): void {
    if (!this.running) return;
    if (this.scanning) {
      this.scanAgain = true;
      return;
    }
    this.scanning = true;
    this.scan()
      .catch((error) => this.options.log('looking for due webhook events failed', error))
      .finally(() => {
        this.scanning = false;
        if (this.scanAgain) {
          this.scanAgain = false;
          this.wake();
        } else if (this.running && !this.timer) {
          // A scan that failed tries again after the idle wait.
          this.timer = setTimeout(() => this.wake(), IDLE_SCAN_MS);
          this.timer.unref();
        }
      });
  }

  /** Stops: no new attempts; attempts in flight are abandoned unrecorded (they are made again on the next start). */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    for (const controller of this.inFlight.values()) controller.abort();
    await Promise.allSettled([...this.settled]);
  }

  /** Attempts in flight now. */
  busy(): number {
    return this.inFlight.size;
  }

  private async scan(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const { deliveries, clock, concurrency = 8 } = this.options;
    const now = clock();
    this.prune(now.getTime());
    let next = now.getTime() + IDLE_SCAN_MS;
    // A full house is woken by the next attempt that ends.
    const free = concurrency - this.inFlight.size;
    if (free > 0) {
      const { events, nextDueAt } = await deliveries.claimDue(this.id, now, free, this.leaseSeconds);
      for (const event of events) this.begin(event);
      if (nextDueAt !== null) next = Math.min(next, nextDueAt);
    }
    if (!this.running) return;
    this.timer = setTimeout(() => this.wake(), Math.max(0, next - now.getTime()));
    this.timer.unref();
  }

  private begin(event: WebhookEvent): void {
    const controller = new AbortController();
    this.inFlight.set(event.id, controller);
    const done = this.attempt(event.id, event.url, event.body, controller)
      .catch((error) => this.options.log(`webhook ${event.id}: recording an attempt failed`, error))
      .finally(() => {
        this.inFlight.delete(event.id);
        this.settled.delete(done);
        this.wake();
      });
    this.settled.add(done);
  }

  private async attempt(id: string, url: string, body: string, controller: AbortController): Promise<void> {
    const { deliveries, clock, timeoutMs, retrySeconds, version } = this.options;
    const at = clock();
    const signature = (await deliveries.signingSecrets(at)).map((secret) => new Webhook(secret).sign(id, at, body)).join(' ');
    const started = performance.now();
    const outcome: SendOutcome = await sendWebhook({
      url,
      body,
      headers: {
        'content-type': 'application/json',
        'user-agent': `fittingroom-webhooks/${version}`,
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': signature,
      },
      timeoutMs,
      policy: this.policy,
      lookup: this.lookup,
      signal: controller.signal,
    });
    if ('error' in outcome && outcome.error === 'aborted') {
      await deliveries.abandon(id, this.id);
      return;
    }
    const record: WebhookAttempt = { at: at.toISOString(), durationMs: Math.round(performance.now() - started) };
    if ('status' in outcome) record.status = outcome.status;
    else record.error = outcome.error;
    await deliveries.recordAttempt(id, this.id, record, clock(), retrySeconds, this.random);
  }

  private prune(now: number): void {
    if (now - this.lastPrune < PRUNE_EVERY_MS) return;
    this.lastPrune = now;
    this.options.deliveries
      .prune(new Date(now - this.options.keepSettledMs))
      .catch((error) => this.options.log('pruning webhook events failed', error));
  }
}
