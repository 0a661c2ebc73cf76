/**
 * The appliance's features wired together into what the HTTP layer needs (AppDeps), around an open store and a
 * catalogue of engines, neither of which it starts. appliance.ts puts this between the engine host processes and
 * a listening server; the API tests put it between an in-process test engine and createApp(deps).
 */
import { chmod } from 'node:fs/promises';
import { join } from 'node:path';
import type { AppDeps } from './api/deps.ts';
import type { Config } from './config.ts';
import { grantTrial } from './credits/ledger.ts';
import { FramingGuide } from './gui/framing.ts';
import { TerminalNotifier } from './jobs/notifier.ts';
import { cleanOrphans, sweep } from './jobs/retention.ts';
import { JobRunner, type EngineCatalog } from './jobs/runner.ts';
import { writeFileDurably } from './kernel/durable-fs.ts';
import { newId } from './kernel/ids.ts';
import { createKey, generateKey } from './keys/api-keys.ts';
import { Archive } from './store/archive.ts';
import type { Store } from './store/db.ts';
import { LowdbAccounts } from './state/lowdb-accounts.ts';
import { DirectoryImageStore } from './state/images.ts';
import { DirectoryCataloguePhotos } from './state/catalogue-photos.ts';
import { LowdbState } from './state/lowdb.ts';
import { TryOnService } from './tryons/service.ts';
import { VERSION } from './version.ts';
import { RedemptionJournal } from './vouchers/journal.ts';
import { LowdbDeliveries, type DeliveryStore } from './webhooks/deliveries.ts';
import { WebhookDispatcher } from './webhooks/dispatcher.ts';
import type { LookupFn } from './webhooks/send.ts';

export interface ServicesOptions {
  config: Config;
  store: Store;
  engines: EngineCatalog;
  clock: () => Date;
  log: (message: string, error?: unknown) => void;
  /** Resolves webhook hosts (default: the system resolver); tests inject their own. */
  webhookLookup?: LookupFn;
  /** A secret the Electron shell gives its window so that the GUI signs in without a key or PIN. */
  guiLaunchToken?: string;
}

/** The running features: what createApp needs, and how to stop what runs in the background. */
export interface Services {
  deps: AppDeps;
  archive: Archive;
  runner: JobRunner;
  /** Wakes the requests waiting on a try-on. */
  notifier: TerminalNotifier;
  /** Answers waiting requests now, with their current state (the first step of stopping). */
  releaseWaiters(): void;
  /** Stops the framing models, the webhook deliveries and the job runner (jobs go back to the queue). */
  stop(): Promise<void>;
}

/**
 * First start of a data directory: an installation id, the trial credits and
 * an admin key. The key file is written before the state that makes this
 * start "not the first", so a crash in between only means a new key next time.
 */
export async function firstStart(store: Store, config: Config, now: Date): Promise<string | null> {
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

/** Opens the archive and the voucher journal, recovers interrupted jobs and starts webhook deliveries. */
export async function startServices(options: ServicesOptions): Promise<Services> {
  const { config, store, engines, clock, log } = options;
  const archive = await Archive.open(config.dataDir);
  const vouchersRedeemed = await RedemptionJournal.open(config.dataDir);
  const forgotten = await vouchersRedeemed.reconcile(store.state.vouchers);
  if (forgotten.length > 0)
    log(
      `the state file does not know ${forgotten.length} voucher redemption(s) this installation made (${forgotten.slice(0, 3).join(', ')}…): ` +
        'was state.json restored from an older copy? Those vouchers stay redeemed; credits spent since that copy are not restored.',
    );
  await cleanOrphans(store, archive);
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
  const webhooks = webhookDispatcher(new LowdbDeliveries(store), options);
  notifier.watch(() => webhooks.wake());
  try {
    await sweep(store, clock(), archive, config.archiveMinEntries);
    await runner.recover();
    await webhooks.start();
  } catch (error) {
    await webhooks.stop();
    throw error;
  }
  const framing = new FramingGuide({ log });
  const deps = composeDeps({
    config,
    accounts: new LowdbAccounts(store),
    state: new LowdbState(store, archive),
    images: new DirectoryImageStore(config.dataDir),
    cataloguePhotos: new DirectoryCataloguePhotos(config.dataDir),
    engines,
    jobs: runner,
    notifier,
    webhooks,
    vouchersRedeemed,
    clock,
    log,
    framing,
    guiLaunchToken: options.guiLaunchToken ?? null,
  });
  return {
    deps,
    archive,
    runner,
    notifier,
    releaseWaiters: () => notifier.releaseAll(),
    async stop() {
      await framing.dispose();
      await webhooks.stop();
      await runner.stop();
    },
  };
}

/** The stores and running parts that AppDeps is made of, on either kind of store. */
export interface DepsParts extends Omit<AppDeps, 'tryOns' | 'version'> {
  notifier: TerminalNotifier;
}

/** AppDeps around the given stores: the try-on service built on them, the version added. */
export function composeDeps(parts: DepsParts): AppDeps {
  const { config, notifier, ...rest } = parts;
  const tryOns = new TryOnService({
    jobs: parts.jobs,
    engines: parts.engines,
    notifier,
    state: parts.state,
    accounts: parts.accounts,
    images: parts.images,
    webhookDestinationProblem: (url) => parts.webhooks.destinationProblem(url),
    clock: parts.clock,
    limits: {
      imageLimits: config.imageLimits,
      maxQueueDepth: config.maxQueueDepth,
      maxWaiters: config.maxWaiters,
      maxWaitersPerKey: config.maxWaitersPerKey,
      imageRetentionDays: config.imageRetentionDays,
      idempotencyRetentionHours: config.idempotencyRetentionHours,
    },
  });
  return { config, ...rest, tryOns, version: VERSION };
}

/** The webhook dispatcher over a store's deliveries, with the configuration's limits and address policy. */
export function webhookDispatcher(
  deliveries: DeliveryStore,
  options: Pick<ServicesOptions, 'config' | 'clock' | 'log' | 'webhookLookup'>,
): WebhookDispatcher {
  const { config } = options;
  return new WebhookDispatcher({
    deliveries,
    clock: options.clock,
    timeoutMs: config.webhookTimeoutMs,
    retrySeconds: config.webhookRetrySeconds,
    allow: config.webhookAllow,
    deny: config.webhookDeny,
    version: VERSION,
    keepSettledMs: config.imageRetentionDays * 86_400_000,
    ...(options.webhookLookup ? { lookup: options.webhookLookup } : {}),
    log: options.log,
  });
}
