/**
 * Sessions of the shop-floor GUI. A session is an HttpOnly, SameSite=Strict
 * cookie holding a random token; the state keeps only its SHA-256. A session
 * acts as an admin key: the one it signed in with, or the GUI's own key for
 * PIN and shell (Electron) sign-ins. State-changing requests must also carry
 * the session's CSRF token (derived from the cookie token, so it needs no
 * storage) in `X-CSRF-Token`, and must not come from another site.
 */
import { createHash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';
import { ApiError } from '../kernel/errors.ts';
import { createKey, generateKey, isKeyActive } from '../keys/api-keys.ts';
import { newId } from '../kernel/ids.ts';
import type { ApiKeyRecord, GuiSession, State } from '../store/schema.ts';
import type { Store } from '../store/db.ts';

export const SESSION_COOKIE = 'fr_session';
export const CSRF_HEADER = 'x-csrf-token';
/** Sessions end this long after sign-in (a working day and then some). */
export const SESSION_HOURS = 12;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const PIN_PATTERN = /^[0-9]{4,12}$/;

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** The CSRF token that belongs to a session's cookie token. */
export function csrfTokenFor(token: string): string {
  return createHash('sha256').update(`csrf\n${token}`).digest('base64url');
}

/** The session token from the request's Cookie header, if any. */
export function sessionTokenOf(req: Request): string | undefined {
  const header = req.get('cookie');
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const [name, ...rest] = part.trim().split('=');
    if (name === SESSION_COOKIE) return rest.join('=') || undefined;
  }
  return undefined;
}

/** The live session and key behind a cookie token, if both are still valid. */
export function findSession(state: State, token: string, now: Date): { session: GuiSession; key: ApiKeyRecord } | undefined {
  if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return undefined;
  const hash = sha256(token);
  const session = Object.values(state.gui.sessions).find((candidate) => candidate.hash === hash);
  if (!session || now.getTime() >= Date.parse(session.expiresAt)) return undefined;
  const key = state.keys.find((candidate) => candidate.id === session.keyId);
  return key && isKeyActive(key, now) ? { session, key } : undefined;
}

/**
 * Refuses a state-changing session request that lacks the session's CSRF
 * token or comes from another site (403 problem); safe methods pass.
 */
export function checkCsrf(req: Request, token: string): void {
  if (SAFE_METHODS.has(req.method)) return;
  const site = req.get('sec-fetch-site');
  if (site === 'cross-site' || site === 'same-site') {
    throw new ApiError('forbidden', 'A request from another site cannot use the GUI session.');
  }
  const origin = req.get('origin');
  if (origin && origin !== 'null' && origin !== `${req.protocol}://${req.get('host') ?? ''}`) {
    throw new ApiError('forbidden', 'A request from another origin cannot use the GUI session.');
  }
  if (origin === 'null') throw new ApiError('forbidden', 'A request from an opaque origin cannot use the GUI session.');
  const sent = req.get(CSRF_HEADER) ?? '';
  const expected = csrfTokenFor(token);
  if (sent.length !== expected.length || !timingSafeEqual(Buffer.from(sent), Buffer.from(expected))) {
    throw new ApiError('forbidden', `A state-changing call with the GUI session needs its ${CSRF_HEADER} header.`);
  }
}

/**
 * Signing in to /api/v1 with the GUI's session cookie, as the API-key middleware takes it (its SessionAuth):
 * the session's admin key, CSRF checked on state-changing calls.
 */
export function guiSessionAuth(state: () => State): {
  tokenOf(req: Request): string | undefined;
  find(token: string, now: Date): { sessionId: string; key: ApiKeyRecord; staff: boolean } | undefined;
  checkCsrf(req: Request, token: string): void;
} {
  return {
    tokenOf: sessionTokenOf,
    find(token, now) {
      const found = findSession(state(), token, now);
      return found && { sessionId: found.session.id, key: found.key, staff: found.session.via === 'pin' };
    },
    checkCsrf,
  };
}

/** Creates a session for a key; returns the cookie token (never stored). Expired sessions are pruned. */
export function createSession(state: State, keyId: string, via: GuiSession['via'], now: Date): string {
  for (const [id, session] of Object.entries(state.gui.sessions)) {
    if (now.getTime() >= Date.parse(session.expiresAt)) delete state.gui.sessions[id];
  }
  const token = randomBytes(32).toString('base64url');
  const id = newId('ses', now.getTime());
  state.gui.sessions[id] = {
    id,
    hash: sha256(token),
    keyId,
    via,
    createdAt: now.toISOString(),
    expiresAt: new Date(now.getTime() + SESSION_HOURS * 3_600_000).toISOString(),
  };
  return token;
}

/** The admin key that PIN and shell sessions act as; created (its secret discarded) when missing or revoked. */
export function ensureGuiKey(state: State, now: Date): ApiKeyRecord {
  const existing = state.keys.find((key) => key.id === state.gui.keyId);
  if (existing && isKeyActive(existing, now) && existing.expiresAt === undefined) return existing;
  // The key's secret is thrown away: only sessions can act as it.
  const { record } = createKey(state, 'shop-floor GUI (PIN and app sign-in)', 'admin', now, { key: generateKey() });
  state.gui.keyId = record.id;
  return record;
}

/** Sets the session cookie. */
export function setSessionCookie(res: Response, token: string): void {
  res.setHeader('Set-Cookie', `${SESSION_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${SESSION_HOURS * 3600}`);
}

/** Clears the session cookie. */
export function clearSessionCookie(res: Response): void {
  res.setHeader('Set-Cookie', `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`);
}

/** Checks a PIN's shape; 422 otherwise. */
export function checkPinShape(pin: unknown): string {
  if (typeof pin !== 'string' || !PIN_PATTERN.test(pin)) {
    throw new ApiError('validation_failed', 'pin: 4 to 12 digits are required', {
      errors: [{ field: 'pin', message: 'must be 4 to 12 digits' }],
    });
  }
  return pin;
}

function scryptAsync(pin: string, salt: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(pin, salt, 32, { N: 16384, r: 8, p: 1 }, (error, key) => (error ? reject(error) : resolve(key))),
  );
}

/** The stored form of a PIN: `scrypt$<salt>$<hash>`. */
export async function hashPin(pin: string): Promise<string> {
  const salt = randomBytes(16);
  return `scrypt$${salt.toString('base64')}$${(await scryptAsync(pin, salt)).toString('base64')}`;
}

/** Whether a PIN matches its stored form. */
export async function verifyPin(pin: string, stored: string): Promise<boolean> {
  const [scheme, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const actual = await scryptAsync(pin, Buffer.from(salt, 'base64'));
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** Wrong PINs allowed before sign-in by PIN starts to wait. */
const FREE_TRIES = 5;
/** The first wait after the free tries; each further wrong PIN doubles it, up to the cap. */
const FIRST_WAIT_MS = 30_000;
/** Long enough to make guessing a 4-digit PIN take weeks, short enough not to lock staff out of a shift. */
const MAX_WAIT_MS = 5 * 60_000;

/**
 * Slows down PIN guessing. A try is taken before the slow hash, so parallel guesses cannot outrun the count:
 * at most the remaining free tries are checked at once, and one at a time after them. Failures and the wait are
 * kept in the state, so a restart does not reset them; a right PIN, or signing in with the admin key, does.
 * After the free tries each wrong PIN doubles the wait from 30 s up to 5 minutes.
 */
export class PinThrottle {
  private inFlight = 0;

  constructor(private readonly store: Store) {}

  /** Takes one try, or throws 429; call the returned function when the PIN has been checked. */
  begin(now: Date): () => void {
    const { failures, blockedUntil } = this.current();
    const wait = Math.ceil(((blockedUntil ?? 0) - now.getTime()) / 1000);
    if (wait > 0) throw new ApiError('rate_limited', `Too many wrong PINs; try again in ${wait} seconds.`, { retryAfterSeconds: wait });
    const allowance = failures < FREE_TRIES ? FREE_TRIES - failures : 1;
    if (this.inFlight >= allowance)
      throw new ApiError('rate_limited', 'Another PIN is being checked; try again in a moment.', { retryAfterSeconds: 1 });
    this.inFlight++;
    let done = false;
    return () => {
      if (!done) this.inFlight--;
      done = true;
    };
  }

  /** Counts a wrong PIN, durably. */
  async fail(now: Date): Promise<void> {
    await this.store.mutate((state) => {
      const failures = (state.gui.pinThrottle?.failures ?? 0) + 1;
      const waitMs = failures < FREE_TRIES ? 0 : Math.min(MAX_WAIT_MS, FIRST_WAIT_MS * 2 ** (failures - FREE_TRIES));
      state.gui.pinThrottle = { failures, blockedUntil: waitMs > 0 ? new Date(now.getTime() + waitMs).toISOString() : null };
    });
  }

  /** Clears the count after a right PIN or an admin key sign-in. */
  async succeed(): Promise<void> {
    if (this.store.state.gui.pinThrottle === undefined) return;
    await this.store.mutate((state) => void delete state.gui.pinThrottle);
  }

  private current(): { failures: number; blockedUntil: number | null } {
    const throttle = this.store.state.gui.pinThrottle;
    return { failures: throttle?.failures ?? 0, blockedUntil: throttle?.blockedUntil ? Date.parse(throttle.blockedUntil) : null };
  }
}
