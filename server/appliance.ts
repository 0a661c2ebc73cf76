/**
 * A running appliance from a configuration: the store (and the first start), the engine host processes, the
 * features (services.ts), the sweeps and a listening HTTP server. server/index.ts starts it; so do the tests
 * where a process matters (crashes, restarts, retention, real engines, the browser).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeGracefully, limitConnections } from './api/connections.ts';
import type { Config } from './config.ts';
import { EngineRegistry } from './engines/registry.ts';
import type { EngineSpec } from './engines/types.ts';
import { createApp } from './http-app.ts';
import { archiveCold, sweep } from './jobs/retention.ts';
import type { TerminalNotifier } from './jobs/notifier.ts';
import type { JobRunner } from './jobs/runner.ts';
import { firstStart, startServices, type Services, type ServicesOptions } from './services.ts';
import type { Archive } from './store/archive.ts';
import { Store } from './store/db.ts';
import { ensureVisionModels } from './vision/models.ts';
import type { WebhookDispatcher } from './webhooks/dispatcher.ts';
import type { LookupFn } from './webhooks/send.ts';

/** How long a stopping appliance lets requests in flight finish. */
export const SHUTDOWN_GRACE_MS = 5_000;

export interface ApplianceOptions {
  config: Config;
  engines: EngineSpec[];
  clock?: () => Date;
  log?: (message: string, error?: unknown) => void;
  /** Resolves webhook hosts (default: the system resolver); tests inject their own. */
  webhookLookup?: LookupFn;
  /** A secret the Electron shell gives its window so that the GUI signs in without a key or PIN. */
  guiLaunchToken?: string;
}

/** A started appliance. */
export interface Appliance {
  url: string;
  port: number;
  store: Store;
  archive: Archive;
  runner: JobRunner;
  engines: EngineRegistry;
  webhooks: WebhookDispatcher;
  /** Wakes the requests waiting on a try-on; tests read how many wait. */
  notifier: TerminalNotifier;
  /** The first admin key, only on the very first start of a data directory. */
  firstAdminKey: string | null;
  /** Stops cleanly (idempotent): waiting requests answer, running try-ons go back to the queue. */
  close(): Promise<void>;
}

/** Opens the data directory, starts engines and the runner, and listens. */
export async function startAppliance(options: ApplianceOptions): Promise<Appliance> {
  const { config } = options;
  const clock = options.clock ?? (() => new Date());
  const log = options.log ?? ((message: string, error?: unknown) => console.error(`fittingroom: ${message}`, error ?? ''));
  const store = await Store.open(config.dataDir);
  let engines: EngineRegistry | undefined;
  let server: Server | undefined;
  let services: Services | undefined;
  try {
    const firstAdminKey = await firstStart(store, config, clock());
    // npm converts the vision models after install; an install that skipped scripts gets them here, in the background.
    ensureVisionModels({ log }).catch((error) => log('preparing the vision models failed', error));
    engines = new EngineRegistry(options.engines, { memoryLimitMb: config.engineMemoryLimitMb, log: (message) => log(message) });
    await engines.start();
    const servicesOptions: ServicesOptions = { config, store, engines, clock, log };
    if (options.webhookLookup) servicesOptions.webhookLookup = options.webhookLookup;
    if (options.guiLaunchToken) servicesOptions.guiLaunchToken = options.guiLaunchToken;
    services = await startServices(servicesOptions);
    const { archive, runner, notifier } = services;
    const { webhooks } = services.deps;
    server = createServer(createApp(services.deps));
    const port = await listen(server, config);
    // One sweep or move at a time: both append to the archive and then trim the state.
    let housekeeping = Promise.resolve();
    const housekeep = (name: string, work: () => Promise<unknown>) => {
      housekeeping = housekeeping.then(work).then(
        () => undefined,
        (error) => log(`${name} failed`, error),
      );
    };
    const sweeper = setInterval(
      () => housekeep('retention sweep', () => sweep(store, clock(), archive, config.archiveMinEntries)),
      config.sweepIntervalSeconds * 1000,
    );
    const archiver = setInterval(
      () => housekeep('moving finished try-ons to the archive', () => archiveCold(store, archive, config.archiveMinEntries)),
      config.archiveIntervalSeconds * 1000,
    );
    sweeper.unref();
    archiver.unref();
    const listening = server;
    const registry = engines;
    const running = services;
    let closing: Promise<void> | undefined;
    const shutdown = async (): Promise<void> => {
      clearInterval(sweeper);
      clearInterval(archiver);
      // Waiting requests are answered with their current state; requests in flight get time to finish.
      await closeGracefully(listening, SHUTDOWN_GRACE_MS, () => running.releaseWaiters());
      await running.stop();
      await registry.stop();
      await housekeeping;
      await store.close();
    };
    return {
      url: urlOf(config, port),
      port,
      store,
      archive,
      runner,
      engines: registry,
      webhooks,
      notifier,
      firstAdminKey,
      close() {
        closing ??= shutdown();
        return closing;
      },
    };
  } catch (error) {
    server?.close();
    await services?.stop();
    await engines?.stop();
    await store.close();
    throw error;
  }
}

/** Listens on the configured address with the appliance's connection limits; the port it got. */
export async function listen(server: Server, config: Config): Promise<number> {
  // Receiving a request (a 50 MB body on a slow link) may take a while; waits are on the response side.
  server.requestTimeout = 120_000;
  limitConnections(server, { total: config.maxConnections, perAddress: config.maxConnectionsPerAddress });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  return (server.address() as AddressInfo).port;
}

/** The base URL of a listening appliance. */
export function urlOf(config: Config, port: number): string {
  return `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
}
