/**
 * What the middleware adds to each request, declared once.
 * requestId: set by requestId(); auth: set by apiKey() on authenticated routes.
 */
import type { ApiKeyRecord } from '../store/schema.ts';
import type { Viewer } from '../tryons/service.ts';

/** The caller, as established by apiKey(). */
export interface AuthContext {
  key: ApiKeyRecord;
  /** Set when the caller is a signed-in GUI session acting as `key`. */
  sessionId?: string;
  /** A session signed in with the staff PIN: shop-floor work only (try on, catalogue, history), never administration. */
  staff?: boolean;
}

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      requestId: string;
      auth?: AuthContext;
    }
  }
}

/** The authenticated caller of a request behind apiKey(); a programming error otherwise. */
export function authOf(req: { auth?: AuthContext }): AuthContext {
  if (!req.auth) throw new Error('route is not behind the apiKey middleware');
  return req.auth;
}

/** The caller as a viewer of try-ons: an admin key sees all of them, a standard key its own lineage's. */
export function viewerOf(req: { auth?: AuthContext }): Viewer {
  const { key } = authOf(req);
  return { lineageId: key.lineageId, seesAll: key.scope === 'admin' };
}
