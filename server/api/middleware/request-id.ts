import type { RequestHandler } from 'express';
import { randomBytes } from 'node:crypto';
import '../request-context.ts';

const INCOMING = /^[A-Za-z0-9._:-]{1,128}$/;

/** Gives every request an id (the client's X-Request-Id when it is sane) and echoes it. */
export function requestId(): RequestHandler {
  return (req, res, next) => {
    // Mounted again under some routers; the first id a request got stands.
    if (req.requestId) return next();
    const incoming = req.get('x-request-id');
    req.requestId = incoming && INCOMING.test(incoming) ? incoming : `req_${randomBytes(9).toString('base64url')}`;
    res.setHeader('X-Request-Id', req.requestId);
    next();
  };
}
