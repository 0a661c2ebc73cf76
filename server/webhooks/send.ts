/**
 * One webhook attempt over HTTP(S): resolve the host once, vet every address
 * it resolves to, then connect to a vetted address by IP (with the Host header
 * and TLS server name of the URL), so nothing is resolved again between the
 * check and the connection (no DNS rebinding). Redirects are never followed
 * (Node's http client does not follow them); the response body is read up to
 * 64 KB and dropped.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { DESTINATION_NOT_ALLOWED, parseIp, type AddressPolicy } from './address-policy.ts';

/** Resolves a host name to every address it has (injectable for tests). */
export type LookupFn = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

/** The default resolver: the system's, every address. */
export const systemLookup: LookupFn = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** How much of a response body is read before it is dropped. */
const MAX_RESPONSE_BYTES = 64 * 1024;

export interface SendRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  policy: AddressPolicy;
  lookup: LookupFn;
  /** Aborts the attempt (the appliance is stopping). */
  signal: AbortSignal;
}

/** The receiver's status, or why there is none. */
export type SendOutcome =
  | { status: number }
  | { error: typeof DESTINATION_NOT_ALLOWED | 'invalid-url' | 'dns-failed' | 'timeout' | 'connection-failed' | 'aborted' };

/** Makes one attempt; never throws. */
export async function sendWebhook(request: SendRequest): Promise<SendOutcome> {
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    return { error: 'invalid-url' };
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password) return { error: 'invalid-url' };
  const timeout = AbortSignal.timeout(request.timeoutMs);
  const signal = AbortSignal.any([request.signal, timeout]);
  const aborted = (): SendOutcome => ({ error: timeout.aborted ? 'timeout' : 'aborted' });

  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  let addresses: string[];
  if (parseIp(host)) {
    addresses = [host];
  } else {
    try {
      addresses = (await untilAborted(request.lookup(host), signal)).map((entry) => entry.address);
    } catch {
      return signal.aborted ? aborted() : { error: 'dns-failed' };
    }
    if (addresses.length === 0) return { error: 'dns-failed' };
  }
  // One refused address refuses the destination: a name that also points at metadata is not trusted.
  if (!addresses.every((address) => request.policy.allows(address))) return { error: DESTINATION_NOT_ALLOWED };
  // Each address in turn until one accepts the connection: `localhost` may resolve to ::1 first while the
  // receiver listens on 127.0.0.1 only. Once connected, that attempt's outcome stands.
  let outcome: SendOutcome = { error: 'connection-failed' };
  for (const address of addresses) {
    const attempt = await post(url, host, address, request, signal, aborted);
    outcome = attempt.outcome;
    if (attempt.connected || signal.aborted) break;
  }
  return outcome;
}

/** Names that reach cloud metadata services without resolving to a link-local address everywhere. */
const METADATA_NAMES = new Set(['metadata.google.internal', 'metadata.goog', 'metadata', 'instance-data', 'instance-data.ec2.internal']);

/** How long a submit waits for the webhook host to resolve before accepting it (delivery vets it again). */
const VET_LOOKUP_MS = 2000;

/**
 * Why a webhook URL would be refused at delivery, checked at submit so that no credit is reserved for it: a
 * metadata name, or any address the host resolves to that the policy refuses. A name that does not resolve
 * now is accepted (a shop's DNS may be down); delivery resolves and vets it again.
 */
export async function destinationProblem(value: string, policy: AddressPolicy, lookup: LookupFn): Promise<string | null> {
  const url = new URL(value);
  const host = (url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname).toLowerCase().replace(/\.$/, '');
  const refused = 'points at an address webhooks may not reach (link-local, cloud metadata, multicast, or outside the allowed ranges)';
  if (METADATA_NAMES.has(host)) return refused;
  if (parseIp(host)) return policy.allows(host) ? null : refused;
  let addresses: string[];
  try {
    addresses = (await untilAborted(lookup(host), AbortSignal.timeout(VET_LOOKUP_MS))).map((entry) => entry.address);
  } catch {
    return null;
  }
  return addresses.every((address) => policy.allows(address)) ? null : refused;
}

function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (signal.aborted) reject(signal.reason);
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function post(
  url: URL,
  host: string,
  address: string,
  request: SendRequest,
  signal: AbortSignal,
  aborted: () => SendOutcome,
): Promise<{ outcome: SendOutcome; connected: boolean }> {
  const secure = url.protocol === 'https:';
  const options: https.RequestOptions = {
    method: 'POST',
    // An IP address: the client connects to exactly the address that was vetted, with no lookup of its own.
    hostname: address,
    port: url.port === '' ? (secure ? 443 : 80) : Number(url.port),
    path: `${url.pathname}${url.search}`,
    headers: { ...request.headers, host: url.host, 'content-length': String(Buffer.byteLength(request.body)) },
    agent: false,
    signal,
  };
  if (secure && !parseIp(host)) options.servername = host;
  return new Promise((resolve) => {
    let done = false;
    let connected = false;
    const finish = (outcome: SendOutcome) => {
      if (done) return;
      done = true;
      resolve({ outcome, connected });
    };
    const req = (secure ? https : http).request(options, (response) => {
      const status = response.statusCode ?? 0;
      let received = 0;
      response.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received >= MAX_RESPONSE_BYTES) {
          response.destroy();
          finish({ status });
        }
      });
      // The status is what counts; a body cut short by the timeout or the cap does not change it.
      response.on('end', () => finish({ status }));
      response.on('close', () => finish({ status }));
      response.on('error', () => finish({ status }));
    });
    req.on('socket', (socket) => socket.once('connect', () => (connected = true)));
    req.on('error', () => finish(signal.aborted ? aborted() : { error: 'connection-failed' }));
    req.end(request.body);
  });
}
