/**
 * Sessions of the shop-floor GUI. A session is an HttpOnly, SameSite=Strict
 * cookie holding a random token; the account store keeps only its SHA-256. A session
 * acts as an admin key: the one it signed in with, or the GUI's own key for
 * PIN and shell (Electron) sign-ins. State-changing requests must also carry
 * the session's CSRF token (derived from the cookie token, so it needs no
 * storage) in `X-CSRF-Token`, and must not come from another site.
 */
import { createHash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';
import { ApiError } from '../kernel/errors.ts';
import type { AccountStore, LiveSession } from '../state/accounts.ts';
import type { ApiKeyRecord, GuiSession } from '../store/schema.ts';

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

/** The hash the store keeps of a cookie token; undefined for a token no sign-in could have made. */
function tokenHash(token: string): string | undefined {
  return /^[A-Za-z0-9_-]{43}$/.test(token) ? sha256(token) : undefined;
}

/** The live session and key behind a cookie token, if both are still valid. */
export async function findSession(accounts: AccountStore, token: string, now: Date): Promise<LiveSession | undefined> {
  const hash = tokenHash(token);
  return hash === undefined ? undefined : accounts.liveSession(hash, now);
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
export function guiSessionAuth(accounts: AccountStore): {
  tokenOf(req: Request): string | undefined;
  find(token: string, now: Date): Promise<{ sessionId: string; key: ApiKeyRecord; staff: boolean } | undefined>;
  checkCsrf(req: Request, token: string): void;
} {
  return {
    tokenOf: sessionTokenOf,
    async find(token, now) {
      const found = await findSession(accounts, token, now);
      return found && { sessionId: found.session.id, key: found.key, staff: found.session.via === 'pin' };
    },
    checkCsrf,
  };
}

/**
 * Signs in: records a session acting as `keyId`, or as the GUI's own key when null (PIN and shell), and sets
 * `newPinHash` as the PIN in the same change if given. Returns the cookie token; the store keeps only its hash.
 * 401 or 403 if the key cannot sign in (as AccountStore.startSession).
 */
export async function signIn(
  accounts: AccountStore,
  session: { via: GuiSession['via']; keyId: string | null; newPinHash?: string },
  now: Date,
): Promise<string> {
  const token = randomBytes(32).toString('base64url');
  await accounts.startSession(
    {
      hash: sha256(token),
      via: session.via,
      keyId: session.keyId,
      expiresAt: new Date(now.getTime() + SESSION_HOURS * 3_600_000),
      ...(session.newPinHash === undefined ? {} : { newPinHash: session.newPinHash }),
    },
    now,
  );
  return token;
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

/** How long sign-in by PIN waits after `failures` wrong PINs in a row. */
function pinWaitMs(failures: number): number {
  return failures < FREE_TRIES ? 0 : Math.min(MAX_WAIT_MS, FIRST_WAIT_MS * 2 ** (failures - FREE_TRIES));
}

/**
 * Slows down PIN guessing. A try is taken before the slow hash, so parallel guesses cannot outrun the count:
 * at most the remaining free tries are checked at once, and one at a time after them (in this process; the
 * count itself is the account store's). Failures and the wait are kept in the store, so a restart does not reset
 * them; a right PIN, or signing in with the admin key, does. After the free tries each wrong PIN doubles the wait
 * from 30 s up to 5 minutes.
 */
export class PinThrottle {
  private inFlight = 0;

  constructor(private readonly accounts: AccountStore) {}

  /** Takes one try, or throws 429; call the returned function when the PIN has been checked. */
  async begin(now: Date): Promise<() => void> {
    const throttle = (await this.accounts.shopFloor()).pinThrottle;
    const failures = throttle?.failures ?? 0;
    const blockedUntil = throttle?.blockedUntil ? Date.parse(throttle.blockedUntil) : 0;
    const wait = Math.ceil((blockedUntil - now.getTime()) / 1000);
    if (wait > 0) throw new ApiError('rate_limited', `Too many wrong PINs; try again in ${wait} seconds.`, { retryAfterSeconds: wait });
    // Counted after the read, with no await in between: tries begun at once in this process each see the others.
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
    await this.accounts.pinFailed(now, pinWaitMs);
  }

  /** Clears the count after a right PIN or an admin key sign-in. */
  async succeed(): Promise<void> {
    await this.accounts.pinSucceeded();
  }
}
