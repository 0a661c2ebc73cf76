import type { RequestHandler } from 'express';
import { ApiError } from '../../kernel/errors.ts';
import '../request-context.ts';

export interface RateLimitOptions {
  /** Requests allowed per minute per API key (also the burst size). */
  perMinute: number;
  clock: () => Date;
}

interface Bucket {
  tokens: number;
  updatedMs: number;
}

/** A token bucket per API key; 429 with Retry-After when it is empty. */
export function rateLimit({ perMinute, clock }: RateLimitOptions): RequestHandler {
  const buckets = new Map<string, Bucket>();
  const perMs = perMinute / 60_000;
  return (req, res, next) => {
    const id = req.auth?.key.lineageId;
    if (!id || perMinute <= 0) {
      next();
      return;
    }
    const now = clock().getTime();
    const bucket = buckets.get(id) ?? { tokens: perMinute, updatedMs: now };
    bucket.tokens = Math.min(perMinute, bucket.tokens + (now - bucket.updatedMs) * perMs);
    bucket.updatedMs = now;
    buckets.set(id, bucket);
    res.setHeader('RateLimit-Limit', String(perMinute));
    if (bucket.tokens < 1) {
      res.setHeader('RateLimit-Remaining', '0');
      next(
        new ApiError('rate_limited', `This key may submit ${perMinute} try-ons per minute.`, {
          retryAfterSeconds: (1 - bucket.tokens) / perMs / 1000,
        }),
      );
      return;
    }
    bucket.tokens -= 1;
    res.setHeader('RateLimit-Remaining', String(Math.floor(bucket.tokens)));
    next();
  };
}
