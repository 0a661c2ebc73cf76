/**
 * What strangers can hold open. A client that opens connections and never finishes a request (no key is
 * needed for that) must not use up the appliance's file handles: connections are capped overall and per
 * client address, headers must arrive within 10 s, and a body that stops sending is cut off.
 */
import type { RequestHandler } from 'express';
import type { Server } from 'node:http';
import { ApiError } from '../kernel/errors.ts';
import './request-context.ts';

/** This machine's own clients (the GUI, a till on the same PC) share the overall cap only. */
const OWN_ADDRESSES = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

/** Caps the server's connections overall and per client address, and times out slow headers. */
export function limitConnections(server: Server, limits: { total: number; perAddress: number }): void {
  server.maxConnections = limits.total;
  server.headersTimeout = 10_000;
  const open = new Map<string, number>();
  server.on('connection', (socket) => {
    const address = socket.remoteAddress ?? '';
    if (OWN_ADDRESSES.has(address)) return;
    const count = (open.get(address) ?? 0) + 1;
    if (count > limits.perAddress) {
      socket.destroy();
      return;
    }
    open.set(address, count);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left > 0) open.set(address, left);
      else open.delete(address);
    });
  });
}

/**
 * Cuts off a request whose body sends nothing for `idleMs`: a 408 if nothing was answered yet, then the
 * connection closes. A body arriving slowly but steadily (a big photo on a poor link) is not affected.
 *
 * It watches the bytes the socket has read rather than listening for the body's data, which would start the body
 * flowing before a parser listens: a middleware that waits on a store (the API key's lookup) would lose it.
 */
export function bodyIdleTimeout(idleMs: number): RequestHandler {
  return (req, res, next) => {
    const hasBody = req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
    if (!hasBody || req.readableEnded) return next();
    const socket = req.socket;
    let read = socket.bytesRead;
    let lastProgress = Date.now();
    const check = setInterval(
      () => {
        if (socket.bytesRead !== read) {
          read = socket.bytesRead;
          lastProgress = Date.now();
          return;
        }
        if (Date.now() - lastProgress < idleMs) return;
        stop();
        if (!res.headersSent) {
          const problem = new ApiError('request_timeout', `The request body stopped arriving for ${Math.round(idleMs / 1000)} s.`);
          res.writeHead(problem.status, { 'Content-Type': 'application/problem+json', Connection: 'close' });
          res.end(JSON.stringify(problem.toProblem(req.requestId ?? 'unknown')));
        }
        socket.destroySoon();
      },
      Math.max(10, Math.floor(idleMs / 4)),
    );
    const stop = () => clearInterval(check);
    req.once('end', stop);
    req.once('close', stop);
    next();
  };
}

/**
 * Stops accepting connections and resolves once every open one has closed: `beforeWaiting` answers the requests
 * that are waiting (so their replies go out now), keep-alive sockets close as soon as their last reply has gone,
 * and whatever is still open after `graceMs` (a submit between its checks and its commit) is cut.
 */
export async function closeGracefully(server: Server, graceMs: number, beforeWaiting: () => void): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  beforeWaiting();
  const idle = setInterval(() => server.closeIdleConnections(), 50);
  server.closeIdleConnections();
  const grace = setTimeout(() => server.closeAllConnections(), graceMs);
  await closed;
  clearTimeout(grace);
  clearInterval(idle);
}
