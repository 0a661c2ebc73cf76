/**
 * Assembles a running appliance from a configuration: the store (and the
 * first-start bootstrap), engines, job runner, sweeps and the HTTP app.
 * server/index.ts and the tests both start the appliance through here.
 */
import { chmod } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createApp } from './http-app.ts';
import type { Config } from './config.ts';
import { grantTrial } from './credits/ledger.ts';
import { EngineRegistry } from './engines/registry.ts';
import type { EngineSpec } from './engines/types.ts';
import { TryOnService } from './tryons/service.ts';
import { IdempotencyGuard } from './idempotency/idempotency.ts';
import { TerminalNotifier } from './jobs/notifier.ts';
import { archiveCold, cleanOrphans, sweep } from './jobs/retention.ts';
import { JobRunner } from './jobs/runner.ts';
import { FramingGuide } from './gui/framing.ts';
import { createKey, generateKey } from './keys/api-keys.ts';
import { Store } from './store/db.ts';
import { Archive } from './store/archive.ts';
import { RedemptionJournal } from './vouchers/journal.ts';
import { limitConnections } from './api/connections.ts';
import { writeFileDurably } from './kernel/durable-fs.ts';
import { newId } from './kernel/ids.ts';
import { VERSION } from './version.ts';
import { ensureVisionModels } from './vision/models.ts';
import { WebhookDispatcher } from './webhooks/dispatcher.ts';
import type { LookupFn } from './webhooks/send.ts';

/** How long a stopping appliance lets requests in flight finish. */
const SHUTDOWN_GRACE_MS = 5_000;

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
  /** The first admin key, only on the very first start of a data directory. */
  firstAdminKey: string | null;
  /** Stops cleanly (idempotent): waiting requests answer, running try-ons go back to the queue. */
  close(): Promise<void>;
}

/**
 * First start of a data directory: an installation id, the trial credits and
 * an admin key. The key file is written before the state that makes this
 * start "not the first", so a crash in between only means a new key next time.
 */
async function bootstrap(store: Store, config: Config, now: Date): Promise<string | null> {
  if (store.state.installation) return null;
  const key = generateKey();
  const path = join(config.dataDir, 'first-admin-key');
  await writeFileDurably(path, `${key}\n`);
  await chmod(path, 0o600);
  await store.mutate((state) => {
    state.installation = { id: newId('inst', now.getTime()), createdAt: now.toISOString() };
    grantTrial(state, now, config.trialCredits, config.trialDays);
    createKey(state, 'first admin key', 'admin', now, { key });
  });
  return key;
}

/** Opens the data directory, starts engines and the runner, and listens. */
export async function startAppliance(options: ApplianceOptions): Promise<Appliance> {
  const { config } = options;
  const clock = options.clock ?? (() => new Date());
  const log = options.log ?? ((message: string, error?: unknown) => console.error(`fittingroom: ${message}`, error ?? ''));
  const store = await Store.open(config.dataDir);
  let engines: EngineRegistry | undefined;
  let server: Server | undefined;
  let webhooks: WebhookDispatcher | undefined;
  try {
    const firstAdminKey = await bootstrap(store, config, clock());
    // npm converts the vision models after install; an install that skipped scripts gets them here, in the background.
    ensureVisionModels({ log }).catch((error) => log('preparing the vision models failed', error));
    const archive = await Archive.open(config.dataDir);
    const vouchersRedeemed = await RedemptionJournal.open(config.dataDir);
    const forgotten = await vouchersRedeemed.reconcile(store.state.vouchers);
    if (forgotten.length > 0)
      log(
        `the state file does not know ${forgotten.length} voucher redemption(s) this installation made (${forgotten.slice(0, 3).join(', ')}…): ` +
          'was state.json restored from an older copy? Those vouchers stay redeemed; credits spent since that copy are not restored.',
      );
    await cleanOrphans(store, archive);
    engines = new EngineRegistry(options.engines, { memoryLimitMb: config.engineMemoryLimitMb, log: (message) => log(message) });
    await engines.start();
    const notifier = new TerminalNotifier();
    const runner = new JobRunner({
      store,
      archive,
      engines,
      notifier,
      clock,
      maxAttempts: config.maxAttempts,
      jobTimeoutMs: config.jobTimeoutSeconds * 1000,
      deviceConcurrency: config.deviceConcurrency,
      eraseInputsWhenDone: config.eraseInputsWhenDone,
      log,
    });
    webhooks = new WebhookDispatcher({
      store,
      clock,
      timeoutMs: config.webhookTimeoutMs,
      retrySeconds: config.webhookRetrySeconds,
      allow: config.webhookAllow,
      deny: config.webhookDeny,
      version: VERSION,
      keepSettledMs: config.imageRetentionDays * 86_400_000,
      ...(options.webhookLookup ? { lookup: options.webhookLookup } : {}),
      log,
    });
    const dispatcher = webhooks;
    notifier.watch(() => dispatcher.wake());
    await sweep(store, clock(), archive, config.archiveMinEntries);
    await runner.recover();
    await webhooks.start();
    const framing = new FramingGuide({ log });
    const idempotency = new IdempotencyGuard();
    const tryOns = new TryOnService({
      store,
      archive,
      runner,
      engines,
      notifier,
      idempotency,
      webhookDestinationProblem: (url) => dispatcher.destinationProblem(url),
      clock,
      limits: {
        imageLimits: config.imageLimits,
        maxQueueDepth: config.maxQueueDepth,
        maxWaiters: config.maxWaiters,
        maxWaitersPerKey: config.maxWaitersPerKey,
        imageRetentionDays: config.imageRetentionDays,
        idempotencyRetentionHours: config.idempotencyRetentionHours,
      },
    });
    const app = createApp({
      config,
      store,
      archive,
      engines,
      runner,
      notifier,
      idempotency,
      tryOns,
      webhooks,
      vouchersRedeemed,
      clock,
      version: VERSION,
      log,
      framing,
      guiLaunchToken: options.guiLaunchToken ?? null,
    });
    server = createServer(app);
    // Receiving a request (a 50 MB body on a slow link) may take a while; waits are on the response side.
    server.requestTimeout = 120_000;
    limitConnections(server, { total: config.maxConnections, perAddress: config.maxConnectionsPerAddress });
    server.keepAliveTimeout = 5_000;
    await new Promise<void>((resolve, reject) => {
      server!.once('error', reject);
      server!.listen(config.port, config.host, () => resolve());
    });
    const port = (server.address() as AddressInfo).port;
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
    let closing: Promise<void> | undefined;
    const shutdown = async (): Promise<void> => {
      clearInterval(sweeper);
      clearInterval(archiver);
      // Stop accepting, answer waiting requests now with their current state, give
      // requests in flight (a submit between its checks and its commit) time to finish.
      const closed = new Promise<void>((resolve) => listening.close(() => resolve()));
      notifier.releaseAll();
      // Keep-alive sockets turn idle as their last reply goes out; close each as soon as it does.
      const idle = setInterval(() => listening.closeIdleConnections(), 50);
      listening.closeIdleConnections();
      const grace = setTimeout(() => listening.closeAllConnections(), SHUTDOWN_GRACE_MS);
      await closed;
      clearTimeout(grace);
      clearInterval(idle);
      await framing.dispose();
      await dispatcher.stop();
      await runner.stop();
      await registry.stop();
      await housekeeping;
      await store.close();
    };
    return {
      url: `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`,
      port,
      store,
      archive,
      runner,
      engines: registry,
      webhooks: dispatcher,
      firstAdminKey,
      close() {
        closing ??= shutdown();
        return closing;
      },
    };
  } catch (error) {
    server?.close();
    await webhooks?.stop();
    await engines?.stop();
    await store.close();
    throw error;
  }
}
