/**
 * The two tiers of HTTP tests, each on an ephemeral port with its own data directory, and both closing down and
 * asserting the ledger invariants on the durable state afterwards:
 * - startTestApp: createApp(deps) in the test's process, with the engines run in process and a test clock. For
 *   everything that is about the API itself. Tests where time matters pass their own clock.
 * - startTestAppliance: a whole appliance with engine host child processes, where a process matters (crashes,
 *   hangs, memory, restarts, retention sweeps, real engines, the browser).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import type { TestContext } from 'node:test';
import { closeGracefully } from '../../server/api/connections.ts';
import { startAppliance } from '../../server/appliance.ts';
import { defaultConfig, type Config } from '../../server/config.ts';
import type { EngineSpec } from '../../server/engines/types.ts';
import { createApp } from '../../server/http-app.ts';
import type { TerminalNotifier } from '../../server/jobs/notifier.ts';
import type { EngineCatalog, JobRunner } from '../../server/jobs/runner.ts';
import { firstStart, startServices, type ServicesOptions } from '../../server/services.ts';
import type { Archive } from '../../server/store/archive.ts';
import { Store } from '../../server/store/db.ts';
import type { WebhookDispatcher } from '../../server/webhooks/dispatcher.ts';
import { InProcessEngines } from './in-process-engines.ts';
import type { LookupFn } from '../../server/webhooks/send.ts';
import type { ComposeEngineOptions } from './engines/compose-engine.ts';
import { assertDurableInvariants } from './invariants.ts';
import { checkAgainstOpenApi } from './openapi-check.ts';
import { tempDir } from './temp-dir.ts';

export const COMPOSE_ENGINE = resolve(import.meta.dirname, 'engines/compose-engine.ts');

/** An engine spec for the compose test engine. */
export function composeEngine(options: ComposeEngineOptions = {}, concurrency?: number): EngineSpec {
  const spec: EngineSpec = { module: COMPOSE_ENGINE, options };
  if (concurrency !== undefined) spec.concurrency = concurrency;
  return spec;
}

/** What a test may reach inside either tier. */
export interface Running {
  url: string;
  store: Store;
  archive: Archive;
  runner: JobRunner;
  engines: EngineCatalog;
  webhooks: WebhookDispatcher;
  notifier: TerminalNotifier;
  firstAdminKey: string | null;
  close(): Promise<void>;
}

export interface TestAppliance {
  appliance: Running;
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

/** A fresh data directory, removed when the test process exits (after every teardown has read it). */
export function tempDataDir(): Promise<string> {
  return tempDir('fittingroom-test-');
}

export interface TestOptions {
  engines?: EngineSpec[];
  config?: Partial<Config>;
  dataDir?: string;
  clock?: () => Date;
  webhookLookup?: LookupFn;
}

/** Builds createApp(deps) in this process, with the engines in process too, for one test. */
export async function startTestApp(t: TestContext, options: TestOptions = {}): Promise<TestAppliance> {
  const dataDir = options.dataDir ?? (await tempDataDir());
  const config = defaultConfig({ port: 0, dataDir, submitsPerMinute: 100_000, ...options.config });
  const clock = options.clock ?? ((): Date => new Date());
  const log = (): void => undefined;
  const store = await Store.open(dataDir);
  const firstAdminKey = await firstStart(store, config, clock());
  const engines = new InProcessEngines(options.engines ?? [composeEngine()]);
  await engines.start();
  const servicesOptions: ServicesOptions = { config, store, engines, clock, log };
  if (options.webhookLookup) servicesOptions.webhookLookup = options.webhookLookup;
  const services = await startServices(servicesOptions);
  const server = createServer(createApp(services.deps));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  let closing: Promise<void> | undefined;
  const running: Running = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    store,
    archive: services.archive,
    runner: services.runner,
    engines,
    webhooks: services.deps.webhooks,
    notifier: services.notifier,
    firstAdminKey,
    close() {
      closing ??= (async () => {
        await closeGracefully(server, 5_000, () => services.releaseWaiters());
        await services.stop();
        await engines.stop();
        await store.close();
      })();
      return closing;
    },
  };
  return harness(t, running, dataDir);
}

/** Starts an appliance for one test; closes it and checks the ledger afterwards. */
export async function startTestAppliance(t: TestContext, options: TestOptions = {}): Promise<TestAppliance> {
  const dataDir = options.dataDir ?? (await tempDataDir());
  const config = defaultConfig({ port: 0, dataDir, submitsPerMinute: 100_000, ...options.config });
  const startOptions: Parameters<typeof startAppliance>[0] = {
    config,
    engines: options.engines ?? [composeEngine()],
    log: () => undefined,
  };
  if (options.clock) startOptions.clock = options.clock;
  if (options.webhookLookup) startOptions.webhookLookup = options.webhookLookup;
  return harness(t, await startAppliance(startOptions), dataDir);
}

/** Closes `appliance` after the test and checks its ledger; calls go to it with the first admin key. */
function harness(t: TestContext, appliance: Running, dataDir: string): TestAppliance {
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

/** Resolves once `happened()` is true (checked every 5 ms): waiting for an event, not for a guessed time. */
export async function until(happened: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!happened()) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
