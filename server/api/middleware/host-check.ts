/**
 * Answers only requests addressed to the appliance itself. A web page on another site can make a browser send
 * requests to the appliance under the site's own name (DNS rebinding); the Host header then names that site.
 * Accepted: localhost and the loopback addresses, this machine's name (and `.local`), every address of its
 * network interfaces (read again every few seconds, so a new DHCP lease works), the name of `--public-url`,
 * and the operator's `--allowed-hosts`. A request without a Host header (HTTP/1.0) is not from a browser.
 */
import type { RequestHandler } from 'express';
import { hostname, networkInterfaces } from 'node:os';
import { ApiError } from '../../kernel/errors.ts';

const INTERFACES_TTL_MS = 10_000;

/** The host part of a Host header (`[::1]:8787` → `::1`), lower case, without a trailing dot. */
export function hostOf(header: string): string {
  const host = header.startsWith('[') ? header.slice(1, header.indexOf(']')) : header.replace(/:\d*$/, '');
  return host.toLowerCase().replace(/\.$/, '');
}

export function hostCheck(options: { allowedHosts: readonly string[]; publicBaseUrl: string | null }): RequestHandler {
  const fixed = new Set(['localhost', '127.0.0.1', '::1', ...options.allowedHosts.map((host) => hostOf(host))]);
  if (options.publicBaseUrl) fixed.add(hostOf(new URL(options.publicBaseUrl).host));
  let own = new Set<string>();
  let readAt = -Infinity;
  const ownHosts = (): Set<string> => {
    if (performance.now() - readAt > INTERFACES_TTL_MS) {
      const name = hostname().toLowerCase();
      const addresses = Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((entry) => entry.address.toLowerCase()));
      own = new Set([...fixed, name, `${name}.local`, ...addresses]);
      readAt = performance.now();
    }
    return own;
  };
  return (req, _res, next) => {
    const header = req.headers.host;
    if (header === undefined || ownHosts().has(hostOf(header))) return next();
    next(
      new ApiError(
        'forbidden',
        `This appliance does not answer to the name "${hostOf(header)}". If it is really its name, start it with --allowed-hosts ${hostOf(header)}.`,
      ),
    );
  };
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '::1']);

/**
 * The base URL another device on the shop's network (a customer's phone) reaches the appliance by: `--public-url`
 * when set; otherwise the request's own Host, unless that is this machine's loopback, which a phone cannot reach:
 * then the first IPv4 address of a network interface, with the request's port.
 */
export function reachableBaseUrl(protocol: string, hostHeader: string | undefined, publicBaseUrl: string | null): string {
  if (publicBaseUrl) return publicBaseUrl.replace(/\/$/, '');
  const header = hostHeader ?? '127.0.0.1';
  if (!LOOPBACK.has(hostOf(header))) return `${protocol}://${header}`;
  const port = /:(\d+)$/.exec(header)?.[1];
  const lan = Object.values(networkInterfaces())
    .flatMap((list) => list ?? [])
    .find((entry) => entry.family === 'IPv4' && !entry.internal);
  return `${protocol}://${lan?.address ?? hostOf(header)}${port ? `:${port}` : ''}`;
}
