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
  return post(url, host, addresses[0]!, request, signal, aborted);
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
): Promise<SendOutcome> {
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
  return new Promise<SendOutcome>((resolve) => {
    let done = false;
    const finish = (outcome: SendOutcome) => {
      if (done) return;
      done = true;
      resolve(outcome);
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
    req.on('error', () => finish(signal.aborted ? aborted() : { error: 'connection-failed' }));
    req.end(request.body);
  });
}
