/**
 * Idempotency-Key with Stripe's semantics (contract 2.5).
 *
 * A request with a key is identified by a fingerprint of its method, path and
 * parsed JSON body, with images replaced by the SHA-256 of their decoded
 * bytes. While one request with a key executes, it is marked in flight in
 * memory; the stored reply is written in the same durable mutation as the
 * request's side effects, so a reply is remembered exactly when it happened.
 * In-flight marks need no persistence: a request that died with its process
 * committed nothing.
 */
import { createHash } from 'node:crypto';
import { ApiError } from '../kernel/errors.ts';
import type { IdempotencyRecord, State } from '../store/schema.ts';

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** The Idempotency-Key header, validated; undefined when absent. */
export function parseIdempotencyKey(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (!KEY_PATTERN.test(header)) {
    throw new ApiError('idempotency_key_invalid', 'An Idempotency-Key is 1 to 255 visible ASCII characters.');
  }
  return header;
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
    );
  }
  return value;
}

/** The fingerprint of a request: equal exactly when two requests are "the same". */
export function fingerprint(method: string, path: string, body: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify([method.toUpperCase(), path, canonical(body)]))
    .digest('hex');
}

function recordKey(scope: string, key: string): string {
  return `${scope}\n${key}`;
}

/** What to do with a request that carries a key. */
export type Admission = { kind: 'replay'; record: IdempotencyRecord } | { kind: 'execute'; done: () => void };

/** Tracks keys in flight and looks up stored replies. */
export class IdempotencyGuard {
  private readonly inFlight = new Map<string, string>();

  /** Admits a request: replay its stored reply, execute it (call `done` when finished), or refuse (409/422). */
  admit(state: State, scope: string, key: string, print: string, now: Date): Admission {
    const id = recordKey(scope, key);
    const stored = state.idempotency[id];
    if (stored && Date.parse(stored.expiresAt) > now.getTime()) {
      if (stored.fingerprint !== print) {
        throw new ApiError('idempotency_key_reused', 'This Idempotency-Key was used with a different request.');
      }
      return { kind: 'replay', record: stored };
    }
    const running = this.inFlight.get(id);
    if (running !== undefined) {
      if (running !== print) throw new ApiError('idempotency_key_reused', 'This Idempotency-Key was used with a different request.');
      throw new ApiError('idempotency_key_in_use', 'A request with this Idempotency-Key is still executing.', { retryAfterSeconds: 1 });
    }
    this.inFlight.set(id, print);
    return { kind: 'execute', done: () => this.inFlight.delete(id) };
  }
}

/** Remembers a reply; call inside the mutation that makes the request's side effects. */
export function rememberReply(
  state: State,
  entry: { scope: string; key: string; fingerprint: string; status: number; headers: Record<string, string>; body: string },
  now: Date,
  retentionHours: number,
): void {
  state.idempotency[recordKey(entry.scope, entry.key)] = {
    ...entry,
    createdAt: now.toISOString(),
    expiresAt: new Date(now.getTime() + retentionHours * 3_600_000).toISOString(),
  };
}

/** Forgets replies past their retention. Returns how many went. */
export function sweepIdempotency(state: State, now: Date): number {
  let removed = 0;
  for (const [id, record] of Object.entries(state.idempotency)) {
    if (Date.parse(record.expiresAt) <= now.getTime()) {
      delete state.idempotency[id];
      removed++;
    }
  }
  return removed;
}

/** A submit under a claim this process no longer holds: refused, nothing written. */
export function claimLost(): ApiError {
  return new ApiError('idempotency_key_in_use', 'This request no longer holds its Idempotency-Key; try again.', { retryAfterSeconds: 1 });
}
