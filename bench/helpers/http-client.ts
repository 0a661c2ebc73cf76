/**
 * A small HTTP/1.1 client on node:http with one keep-alive agent, so the
 * load generator spends as little CPU as possible per request (bodies are
 * prepared once, as Buffers).
 */
import { Agent, request } from 'node:http';

/** A reply: status, headers and the body as text, with the client-side latency. */
export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  ms: number;
  /** performance.now() when the request was fully handed to the socket. */
  sentAt: number;
  /** performance.now() when the reply's body ended. */
  endedAt: number;
}

/** A keep-alive client bound to one base URL and API key. */
export class BenchClient {
  readonly agent: Agent;
  private readonly base: URL;
  private readonly key: string;

  constructor(baseUrl: string, key: string, maxSockets = 1024) {
    this.base = new URL(baseUrl);
    this.key = key;
    this.agent = new Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets });
  }

  /** Sends one request; `body` is sent as application/json. */
  send(method: string, path: string, body?: Buffer): Promise<Reply> {
    const headers: Record<string, string | number> = { authorization: `Bearer ${this.key}` };
    if (body) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = body.length;
    }
    return new Promise((resolve, reject) => {
      const started = performance.now();
      let sentAt = Number.NaN;
      const req = request({ host: this.base.hostname, port: this.base.port, method, path, headers, agent: this.agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const endedAt = performance.now();
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
            ms: endedAt - started,
            sentAt,
            endedAt,
          });
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.on('finish', () => {
        sentAt = performance.now();
      });
      req.end(body);
    });
  }

  /** Sends and insists on `status`; returns the parsed JSON body and the latency. */
  async json<T>(method: string, path: string, status: number, body?: Buffer): Promise<{ data: T; ms: number }> {
    const reply = await this.send(method, path, body);
    if (reply.status !== status) throw new Error(`${method} ${path}: expected ${status}, got ${reply.status}: ${reply.body.slice(0, 300)}`);
    return { data: JSON.parse(reply.body) as T, ms: reply.ms };
  }

  /** Closes every pooled socket. */
  close(): void {
    this.agent.destroy();
  }
}
