import type { Request, RequestHandler } from 'express';
import { ApiError } from '../../kernel/errors.ts';
import type { ApiKeyRecord, KeyScope } from '../../store/schema.ts';
import '../request-context.ts';

/** Signing in through the GUI's session cookie (gui/session.ts provides it; the middleware knows no feature). */
export interface SessionAuth {
  /** The session token the request carries, if any. */
  tokenOf(req: Request): string | undefined;
  /** The live session's id, its admin key, and whether staff signed in with the PIN; undefined when it has ended. */
  find(token: string, now: Date): Promise<{ sessionId: string; key: ApiKeyRecord; staff: boolean } | undefined>;
  /** Throws a 403 ApiError when a state-changing request fails the session's CSRF rules. */
  checkCsrf(req: Request, token: string): void;
}

export interface ApiKeyOptions {
  /** The key a bearer secret names, if it is active (known, not revoked, not past its grace period). */
  activeKey: (secret: string) => Promise<ApiKeyRecord | undefined> | ApiKeyRecord | undefined;
  clock: () => Date;
  /** Without it, only `Authorization: Bearer` authenticates. */
  sessions?: SessionAuth;
}

/**
 * Authenticates `Authorization: Bearer <key>`; sets `req.auth`. Revoked keys
 * fail at once. Without that header, a GUI session cookie authenticates as the
 * session's admin key, and a state-changing call must carry the session's
 * CSRF token and come from this site (403 otherwise).
 */
export function apiKey({ activeKey, clock, sessions }: ApiKeyOptions): RequestHandler {
  return (req, _res, next) => {
    const header = req.get('authorization');
    const token = header === undefined ? sessions?.tokenOf(req) : undefined;
    if (sessions && token !== undefined) {
      sessions.find(token, clock()).then((found) => {
        if (!found) {
          next(new ApiError('unauthorized', 'The GUI session has ended; sign in again.'));
          return;
        }
        try {
          sessions.checkCsrf(req, token);
        } catch (error) {
          next(error);
          return;
        }
        req.auth = { key: found.key, sessionId: found.sessionId, ...(found.staff ? { staff: true } : {}) };
        next();
      }, next);
      return;
    }
    const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!match) {
      next(new ApiError('unauthorized', 'Send an API key as "Authorization: Bearer <key>".'));
      return;
    }
    const authenticate = (record: ApiKeyRecord | undefined) => {
      if (!record) {
        next(new ApiError('unauthorized', 'The API key is unknown, revoked or expired.'));
        return;
      }
      req.auth = { key: record };
      next();
    };
    // A store on a database answers later; one in memory at once (and the request goes on in the same tick).
    const found = activeKey(match[1]!);
    if (found instanceof Promise) found.then(authenticate, next);
    else authenticate(found);
  };
}

/**
 * Allows only keys with the given scope (`admin` keys may do everything). Staff signed in with the PIN act as an
 * admin key for the shop floor, but administration is refused them unless `shopFloor` says the call is theirs.
 */
export function requireScope(scope: KeyScope, options: { shopFloor?: boolean } = {}): RequestHandler {
  return (req, _res, next) => {
    const key = req.auth?.key;
    if (!key) next(new ApiError('unauthorized', 'An API key is required.'));
    else if (scope === 'admin' && key.scope !== 'admin') next(new ApiError('forbidden', 'This call needs an admin key.'));
    else if (scope === 'admin' && req.auth?.staff && !options.shopFloor)
      next(new ApiError('forbidden', 'Staff signed in with the PIN cannot change this; sign in with the admin key.'));
    else next();
  };
}
