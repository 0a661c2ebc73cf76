/**
 * The official client of the fittingroom v1 API (`fittingroom/client`).
 *
 *   const fr = new FittingroomClient({ baseUrl: 'http://127.0.0.1:8787', apiKey });
 *   const { genId } = await fr.submit({ selfie, items: [shirt], size: 'M' });
 *   const done = await fr.waitFor(genId);
 */
import type { TryOnRequest } from '../server/tryons/validate.ts';
import type { Account, Engine, Granularity, LedgerPage, Problem, Redemption, TryOn, Usage } from './types.ts';

export { verifyWebhook, WebhookSignatureError } from './verify-webhook.ts';
export type {
  Account,
  ApiKey,
  Engine,
  Granularity,
  LedgerPage,
  LedgerEntry,
  Problem,
  Redemption,
  TryOn,
  Usage,
  WebhookPayload,
  WebhookSecret,
} from './types.ts';
export type { TryOnRequest };

/** An image as bytes, or already as base64 / a data URL. */
export type ImageInput = string | Uint8Array;

/** A submission; images may be given as bytes. */
export type SubmitRequest = Omit<TryOnRequest, 'selfie' | 'items'> & { selfie: ImageInput; items: ImageInput[] };

/** The 202 reply of a submit. */
export interface Accepted {
  genId: string;
  status: 'pending';
  statusUrl: string;
  creditsRemaining: number;
}

export interface ClientOptions {
  /** The appliance, e.g. http://127.0.0.1:8787 */
  baseUrl: string;
  apiKey: string;
  /** A fetch implementation (default: the global one). */
  fetch?: typeof fetch;
}

/** An error reply of the API (application/problem+json); branch on `code`. */
export class FittingroomError extends Error {
  readonly status: number;
  readonly code: string;
  readonly problem: Problem | undefined;
  readonly retryAfterSeconds: number | undefined;

  constructor(status: number, problem: Problem | undefined, retryAfter: string | null) {
    super(problem ? `${problem.code}: ${problem.detail}` : `HTTP ${status}`);
    this.name = 'FittingroomError';
    this.status = status;
    this.code = problem?.code ?? 'http_error';
    this.problem = problem;
    const seconds = retryAfter === null ? NaN : Number(retryAfter);
    this.retryAfterSeconds = Number.isFinite(seconds) ? seconds : undefined;
  }
}

const TERMINAL = new Set(['complete', 'failed', 'canceled']);

function base64(image: ImageInput): string {
  return typeof image === 'string' ? image : Buffer.from(image).toString('base64');
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason);
    });
  });
}

export class FittingroomClient {
  private readonly baseUrl: string;
  private readonly apiKey: string;
  private readonly fetchFn: typeof fetch;

  constructor(options: ClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.apiKey = options.apiKey;
    this.fetchFn = options.fetch ?? fetch;
  }

  /** Submits a try-on (reserves 1 credit). Pass an idempotency key to retry safely. */
  submit(request: SubmitRequest, options: { idempotencyKey?: string; signal?: AbortSignal } = {}): Promise<Accepted> {
    const body: TryOnRequest = { ...request, selfie: base64(request.selfie), items: request.items.map(base64) };
    const headers: Record<string, string> = {};
    if (options.idempotencyKey) headers['idempotency-key'] = options.idempotencyKey;
    return this.json<Accepted>('POST', '/api/v1/try-on', { body, headers, signal: options.signal });
  }

  /** The status of a try-on; with `wait`, held until it is terminal or the bound (seconds, or true: the server's default) passes. */
  get(genId: string, options: { wait?: true | number; signal?: AbortSignal } = {}): Promise<TryOn> {
    const query =
      options.wait === undefined ? '' : `?wait=${options.wait === true ? 'true' : Math.max(1, Math.min(120, Math.round(options.wait)))}`;
    return this.json<TryOn>('GET', `/api/v1/try-on/${encodeURIComponent(genId)}${query}`, { signal: options.signal });
  }

  /**
   * Waits until a try-on is terminal and returns it. Uses bounded waits
   * (`wait=true`), so it costs one request per bound, and rides out the bound
   * passing, `429`/`503` with Retry-After, and brief network failures.
   */
  async waitFor(genId: string, options: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<TryOn> {
    const deadline = Date.now() + (options.timeoutMs ?? 10 * 60_000);
    let failures = 0;
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`try-on ${genId} did not finish in time`);
      try {
        const status = await this.get(genId, { wait: true, signal: options.signal });
        if (TERMINAL.has(status.status)) return status;
        failures = 0;
      } catch (error) {
        if (options.signal?.aborted) throw error;
        const retryable = error instanceof FittingroomError ? error.status === 429 || error.status === 503 : error instanceof TypeError;
        if (!retryable || ++failures > 5) throw error;
        const retryAfter = error instanceof FittingroomError ? error.retryAfterSeconds : undefined;
        await sleep(Math.min(left, (retryAfter ?? 2 ** failures) * 1000), options.signal);
      }
    }
  }

  /** The result image's bytes and content type. */
  async image(genId: string): Promise<{ bytes: Uint8Array; contentType: string }> {
    const response = await this.request('GET', `/api/v1/try-on/${encodeURIComponent(genId)}/image`);
    return { bytes: new Uint8Array(await response.arrayBuffer()), contentType: response.headers.get('content-type') ?? '' };
  }

  /** Cancels a pending try-on; its credit is released. */
  cancel(genId: string): Promise<TryOn> {
    return this.json<TryOn>('POST', `/api/v1/try-on/${encodeURIComponent(genId)}/cancel`);
  }

  /** Erases a try-on's images (the record stays). */
  async erase(genId: string): Promise<void> {
    await this.request('DELETE', `/api/v1/try-on/${encodeURIComponent(genId)}`);
  }

  /** Credits remaining, reserved and trial. */
  account(): Promise<Account> {
    return this.json<Account>('GET', '/api/v1/account');
  }

  /** The installed engines. */
  engines(): Promise<Engine[]> {
    return this.json<Engine[]>('GET', '/api/v1/engines');
  }

  /** Redeems a credit voucher (admin key). */
  redeem(voucher: string): Promise<Redemption> {
    return this.json<Redemption>('POST', '/api/v1/credits/redeem', { body: { voucher } });
  }

  /** Try-ons and credits per day or hour (default: the last 30 days). */
  usage(query: { from?: Date | string; to?: Date | string; granularity?: Granularity } = {}): Promise<Usage> {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) {
      if (value !== undefined) params.set(name, value instanceof Date ? value.toISOString() : value);
    }
    const search = params.size > 0 ? `?${params}` : '';
    return this.json<Usage>('GET', `/api/v1/usage${search}`);
  }

  /** One page of the credit ledger, newest first (admin key). */
  ledger(options: { cursor?: string; limit?: number } = {}): Promise<LedgerPage> {
    const params = new URLSearchParams();
    if (options.cursor !== undefined) params.set('cursor', options.cursor);
    if (options.limit !== undefined) params.set('limit', String(options.limit));
    const search = params.size > 0 ? `?${params}` : '';
    return this.json<LedgerPage>('GET', `/api/v1/ledger${search}`);
  }

  private async json<T>(
    method: string,
    path: string,
    options: { body?: unknown; headers?: Record<string, string>; signal?: AbortSignal | undefined } = {},
  ): Promise<T> {
    const response = await this.request(method, path, options);
    return (await response.json()) as T;
  }

  private async request(
    method: string,
    path: string,
    options: { body?: unknown; headers?: Record<string, string>; signal?: AbortSignal | undefined } = {},
  ): Promise<Response> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.apiKey}`, ...options.headers };
    const init: RequestInit = { method, headers };
    if (options.body !== undefined) {
      headers['content-type'] = 'application/json';
      init.body = JSON.stringify(options.body);
    }
    if (options.signal) init.signal = options.signal;
    const response = await this.fetchFn(`${this.baseUrl}${path}`, init);
    if (response.ok) return response;
    let problem: Problem | undefined;
    if ((response.headers.get('content-type') ?? '').includes('json'))
      problem = (await response.json().catch(() => undefined)) as Problem | undefined;
    throw new FittingroomError(response.status, problem, response.headers.get('retry-after'));
  }
}
