/**
 * Starts a real appliance on an ephemeral port with its own data directory,
 * for integration tests over real HTTP. On teardown it closes the appliance
 * and asserts the ledger invariants on the durable state.
 */
import { rmSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { TestContext } from 'node:test';
import { startAppliance, type Appliance } from '../../server/appliance.ts';
import { defaultConfig, type Config } from '../../server/config.ts';
import type { EngineSpec } from '../../server/engines/types.ts';
import type { LookupFn } from '../../server/webhooks/send.ts';
import type { ComposeEngineOptions } from './engines/compose-engine.ts';
import { assertDurableInvariants } from './invariants.ts';
import { checkAgainstOpenApi } from './openapi-check.ts';

export const COMPOSE_ENGINE = resolve(import.meta.dirname, 'engines/compose-engine.ts');

/** An engine spec for the compose test engine. */
export function composeEngine(options: ComposeEngineOptions = {}, concurrency?: number): EngineSpec {
  const spec: EngineSpec = { module: COMPOSE_ENGINE, options };
  if (concurrency !== undefined) spec.concurrency = concurrency;
  return spec;
}

export interface TestAppliance {
  appliance: Appliance;
  url: string;
  dataDir: string;
  adminKey: string;
  /** fetch against the appliance with the admin key (or `key`) as bearer; every response is checked against the OpenAPI document. */
  call(
    method: string,
    path: string,
    options?: { body?: unknown; headers?: Record<string, string>; key?: string | null },
  ): Promise<Response>;
}

const dataDirs: string[] = [];
process.once('exit', () => {
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

/** A fresh data directory, removed when the test process exits (after every teardown has read it). */
export async function tempDataDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'fittingroom-test-'));
  dataDirs.push(dir);
  return dir;
}

/** Starts an appliance for one test; closes it and checks the ledger afterwards. */
export async function startTestAppliance(
  t: TestContext,
  options: { engines?: EngineSpec[]; config?: Partial<Config>; dataDir?: string; clock?: () => Date; webhookLookup?: LookupFn } = {},
): Promise<TestAppliance> {
  const dataDir = options.dataDir ?? (await tempDataDir());
  const config = defaultConfig({ port: 0, dataDir, submitsPerMinute: 100_000, ...options.config });
  const startOptions: Parameters<typeof startAppliance>[0] = {
    config,
    engines: options.engines ?? [composeEngine()],
    log: () => undefined,
  };
  if (options.clock) startOptions.clock = options.clock;
  if (options.webhookLookup) startOptions.webhookLookup = options.webhookLookup;
  const appliance = await startAppliance(startOptions);
  const adminKey = appliance.firstAdminKey ?? '';
  let closed = false;
  t.after(async () => {
    if (!closed) await appliance.close();
    closed = true;
    await assertDurableInvariants(dataDir);
  });
  return {
    appliance,
    url: appliance.url,
    dataDir,
    adminKey,
    async call(method, path, { body, headers = {}, key } = {}) {
      const all: Record<string, string> = { ...headers };
      const bearer = key === undefined ? adminKey : key;
      if (bearer !== null) all.authorization = `Bearer ${bearer}`;
      let payload: string | undefined;
      if (body !== undefined) {
        payload = typeof body === 'string' ? body : JSON.stringify(body);
        all['content-type'] ??= 'application/json';
      }
      const url = `${appliance.url}${path}`;
      const response = await fetch(url, { method, headers: all, body: payload ?? null });
      const copy = response.clone();
      checkAgainstOpenApi(method, url, copy.status, copy.headers.get('content-type'), await copy.text());
      return response;
    },
  };
}
