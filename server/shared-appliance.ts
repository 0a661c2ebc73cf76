/**
 * The appliance on a shared PostgreSQL database (`serve --database postgres://…`): the same HTTP API and GUI as on
 * one PC, over the database's stores (state/postgres/), so that several API processes and GPU workers on other
 * machines serve one shop. Beside the API this process
 * - runs its own engines as a member of the fleet, when it has ready ones (state/fleet-worker.ts);
 * - hears other nodes' settles and submits (postgres/notices.ts), waking its bounded waits, its webhook deliveries
 *   and its claim loop;
 * - delivers webhooks, each event claimed by one dispatcher of the fleet at a time (postgres/deliveries.ts);
 * - sweeps retention on its timer, one node at a time (postgres/retention.ts).
 * Images are in PostgreSQL, or in a directory every node mounts (`--images-dir`).
 */
import { chmod, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { closeGracefully } from './api/connections.ts';
import { listen, SHUTDOWN_GRACE_MS, urlOf } from './appliance.ts';
import type { Config } from './config.ts';
import { EngineRegistry } from './engines/registry.ts';
import type { EngineSpec } from './engines/types.ts';
import { FramingGuide } from './gui/framing.ts';
import { createApp } from './http-app.ts';
import { isTerminal } from './jobs/generations.ts';
import { TerminalNotifier } from './jobs/notifier.ts';
import type { LiveProgress } from './jobs/runner.ts';
import { mkdirDurably, writeFileDurably } from './kernel/durable-fs.ts';
import { generateKey } from './keys/api-keys.ts';
import { redactUrl } from './kernel/redact.ts';
import { composeDeps, webhookDispatcher } from './services.ts';
import { DirectoryCataloguePhotos } from './state/catalogue-photos.ts';
import { FleetCatalog } from './state/fleet.ts';
import { joinFleet, type FleetWorker } from './state/fleet-worker.ts';
import { DirectoryImageStore, type ImageStore } from './state/images.ts';
import type { AccountStore } from './state/accounts.ts';
import { PgAccounts } from './state/postgres/accounts.ts';
import { PgCataloguePhotos } from './state/postgres/catalogue-photos.ts';
import { PgDeliveries, type SigningSecrets } from './state/postgres/deliveries.ts';
import { PgState } from './state/postgres/gateway.ts';
import { PgImageStore } from './state/postgres/images.ts';
import { PgJobQueue } from './state/postgres/jobs.ts';
import { PgNotices } from './state/postgres/notices.ts';
import { PgRetention } from './state/postgres/retention.ts';
import type { StateGateway } from './state/types.ts';
import type { TryOnJobs } from './tryons/service.ts';
import { ensureVisionModels } from './vision/models.ts';
import type { LookupFn } from './webhooks/send.ts';

/** A worker not seen for this long (three missed heartbeats) is no longer shown as running its engines. */
const FLEET_STALE_SECONDS = 30;
const FLEET_REFRESH_MS = 2_000;

export interface SharedApplianceOptions {
  config: Config;
  /** The PostgreSQL connection string. */
  database: string;
  engines: EngineSpec[];
  clock?: () => Date;
  log?: (message: string, error?: unknown) => void;
  webhookLookup?: LookupFn;
  guiLaunchToken?: string;
}

export interface SharedAppliance {
  url: string;
  port: number;
  /** This process's place in the fleet (no engines: it runs none). */
  worker: Pick<FleetWorker, 'id' | 'engines'>;
  /** This process's own engines (the fleet's are in GET /api/v1/engines). */
  engines: EngineRegistry;
  /** The first admin key, only for the process that installed the shop in an empty database. */
  firstAdminKey: string | null;
  /** Stops cleanly (idempotent): waits answered, running try-ons given back to the fleet, connections closed. */
  close(): Promise<void>;
}

/** The database could not be reached, signed in to, or brought up to this version's schema (or is newer). */
export class DatabaseOpenError extends Error {
  constructor(url: string, cause: unknown) {
    super(`the database ${redactUrl(url)} could not be opened: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'DatabaseOpenError';
  }
}

/** Connects to the database (migrating it), joins the fleet, and listens. */
export async function startSharedAppliance(options: SharedApplianceOptions): Promise<SharedAppliance> {
  const { config } = options;
  const clock = options.clock ?? (() => new Date());
  const log = options.log ?? ((message: string, error?: unknown) => console.error(`fittingroom: ${message}`, error ?? ''));
  const state = await PgState.open(options.database).catch((error: unknown) => {
    throw new DatabaseOpenError(options.database, error);
  });
  const stops: (() => unknown)[] = [];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop();
    stops.length = 0;
  };
  stops.push(() => state.close());
  try {
    const accounts = new PgAccounts(state.db);
    const images: ImageStore = config.imagesDir ? new DirectoryImageStore(config.imagesDir) : new PgImageStore(state.db);
    const firstAdminKey = await install(accounts, state, config, clock());

    // npm converts the vision models after install; an install that skipped scripts gets them here, in the background.
    ensureVisionModels({ log }).catch((error) => log('preparing the vision models failed', error));
    const engines = new EngineRegistry(options.engines, { memoryLimitMb: config.engineMemoryLimitMb, log: (message) => log(message) });
    stops.push(() => engines.stop());
    await engines.start();
    const worker = await joinFleet({ db: state.db, engines, images, config, log });
    stops.push(() => worker.stop());
    const queue = new PgJobQueue(state.db);
    const catalog = new FleetCatalog(engines, {
      fleet: () => queue.fleet(clock(), FLEET_STALE_SECONDS),
      refreshMs: FLEET_REFRESH_MS,
      log,
    });
    await catalog.start();
    stops.push(() => catalog.stop());

    const notifier = new TerminalNotifier();
    const notices = await PgNotices.start(state.db, {
      settled: (id) => {
        notifier.publish(id);
        // Canceled or erased by another node while it runs here: stop the engine now.
        worker.loop?.cancel(id);
      },
      queued: (engine) => (worker.engines.includes(engine) ? worker.loop?.wake() : undefined),
      // Notices sent while the connection was down are lost: what is waited for is read again.
      gap: () => {
        for (const id of notifier.waitedIds())
          void state.generation(id).then(
            (record) => (record && isTerminal(record) ? notifier.publish(id) : undefined),
            () => undefined,
          );
        worker.loop?.wake();
      },
      log,
    });
    stops.push(() => notices.close());

    const webhooks = webhookDispatcher(new PgDeliveries(state.db, signingSecretsOf(accounts)), {
      config,
      clock,
      log,
      webhookLookup: options.webhookLookup,
    });
    notifier.watch(() => webhooks.wake());
    stops.push(() => webhooks.stop());
    await webhooks.start();

    const retention = new PgRetention(state, images);
    const sweeper = setInterval(() => {
      retention.sweep(clock()).catch((error) => log('retention sweep failed', error));
    }, config.sweepIntervalSeconds * 1000);
    sweeper.unref();
    stops.push(() => clearInterval(sweeper));
    await retention.sweep(clock());

    const framing = new FramingGuide({ log });
    stops.push(() => framing.dispose());
    const deps = composeDeps({
      config,
      accounts,
      state,
      images,
      cataloguePhotos: config.imagesDir ? new DirectoryCataloguePhotos(config.imagesDir) : new PgCataloguePhotos(state.db),
      engines: catalog,
      jobs: sharedJobs(state, worker),
      notifier,
      webhooks,
      vouchersRedeemed: null,
      clock,
      log,
      framing,
      guiLaunchToken: options.guiLaunchToken ?? null,
    });
    const server: Server = createServer(createApp(deps));
    const port = await listen(server, config);
    let closing: Promise<void> | undefined;
    return {
      url: urlOf(config, port),
      port,
      worker: { id: worker.id, engines: worker.engines },
      engines,
      firstAdminKey,
      close() {
        closing ??= (async () => {
          // Waiting requests are answered with their current state; requests in flight get time to finish.
          await closeGracefully(server, SHUTDOWN_GRACE_MS, () => notifier.releaseAll());
          await stopAll();
        })();
        return closing;
      },
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/**
 * Installs the shop in an empty database: its id, the first admin key and the trial credits, once however many
 * processes start at once. Only the process whose install won has the key; it saves it in its data directory as on
 * one PC (written before the install, removed if another process won).
 */
async function install(accounts: AccountStore, state: StateGateway, config: Config, now: Date): Promise<string | null> {
  if (await accounts.installation()) return null;
  const key = generateKey();
  // The data directory holds only this key on a database; a new machine may not have it yet.
  await mkdirDurably(config.dataDir);
  const path = join(config.dataDir, 'first-admin-key');
  await writeFileDurably(path, `${key}\n`);
  await chmod(path, 0o600);
  const { created } = await accounts.install(now, key);
  // Granted once ever, whoever asks: a process that died between the two leaves it to the next start.
  await state.grantTrial(config.trialCredits, config.trialDays, now);
  if (created) return key;
  await rm(path, { force: true });
  return null;
}

/** Try-ons as the API sees them on a shared database: the queue is the database's, the runs the fleet's. */
function sharedJobs(state: PgState, worker: FleetWorker): TryOnJobs {
  return {
    // The submit's own notice wakes the fleet's idle workers, this process's among them.
    enqueue: () => undefined,
    // Stopped here if this process runs it; a worker elsewhere hears the settle notice (or loses its next renewal).
    cancel: (id) => worker.loop?.cancel(id),
    depth: () => state.pendingCount(),
    // Stages are reported by an engine to its own process only: here a running try-on shows as generating.
    live: (id): LiveProgress => ({ stage: worker.loop?.runningIds().includes(id) ? 'generating' : 'queued', progress: 0 }),
  };
}

/** The webhook signing secrets as the deliveries read them, from the account store. */
function signingSecretsOf(accounts: AccountStore): SigningSecrets {
  return {
    ensureSecret: async (now) => void (await accounts.webhookSecret(now)),
    signingSecrets: (now) => accounts.signingSecrets(now),
  };
}
