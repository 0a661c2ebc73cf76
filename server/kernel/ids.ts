/**
 * Identifiers: a prefix and a ULID (time first, so ids sort by creation, and
 * monotonic within one millisecond so that order is exact within a process).
 */
import { randomBytes } from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
let lastTime = -1;
let lastRandom: number[] = [];

function encodeTime(ms: number): string {
  let out = '';
  for (let i = 0; i < 10; i++) {
    out = CROCKFORD[ms % 32]! + out;
    ms = Math.floor(ms / 32);
  }
  return out;
}

function freshRandom(): number[] {
  return [...randomBytes(16)].map((byte) => byte % 32);
}

function increment(digits: number[]): number[] {
  const next = [...digits];
  for (let i = next.length - 1; i >= 0; i--) {
    if (next[i]! < 31) {
      next[i]! += 1;
      return next;
    }
    next[i] = 0;
  }
  return freshRandom();
}

/** A new ULID, greater than every one made before it in this process. */
export function ulid(now: number = Date.now()): string {
  if (now <= lastTime) {
    lastRandom = increment(lastRandom);
  } else {
    lastTime = now;
    lastRandom = freshRandom();
  }
  return encodeTime(lastTime) + lastRandom.map((digit) => CROCKFORD[digit]).join('');
}

/** A prefixed id such as `gen_01J…`. */
export function newId(prefix: string, now?: number): string {
  return `${prefix}_${ulid(now)}`;
}
