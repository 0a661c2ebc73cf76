/**
 * A GPU worker on a shared PostgreSQL database (`fittingroom worker --database …`): the engines in their host
 * processes and the fleet's claim loop (state/fleet-worker.ts), no HTTP API. It claims try-ons for the engines that
 * are ready here, runs them and settles them. Images live in PostgreSQL by default, or in a directory every node
 * mounts (`--images-dir`).
 */
import type { Config } from './config.ts';
import { EngineRegistry } from './engines/registry.ts';
import type { EngineSpec } from './engines/types.ts';
import { joinFleet, type FleetWorker } from './state/fleet-worker.ts';
import { DirectoryImageStore, type ImageStore } from './state/images.ts';
import { PgState } from './state/postgres/gateway.ts';
import { PgImageStore } from './state/postgres/images.ts';
import { PgNotices } from './state/postgres/notices.ts';
import { ensureVisionModels } from './vision/models.ts';

export interface WorkerOptions {
  config: Config;
  /** The PostgreSQL connection string. */
  database: string;
  engines: EngineSpec[];
  log?: (message: string, error?: unknown) => void;
}

export interface Worker {
  id: string;
  /** The engines this worker runs (the ready ones). */
  engines: string[];
  /** Gives back what it runs (no attempt spent), retires from the fleet, stops the engines. Idempotent. */
  close(): Promise<void>;
}

/** Starts the engines and the claim loop. */
export async function startWorker(options: WorkerOptions): Promise<Worker> {
  const { config } = options;
  const log = options.log ?? ((message: string, error?: unknown) => console.error(`fittingroom worker: ${message}`, error ?? ''));
  const state = await PgState.open(options.database);
  const engines = new EngineRegistry(options.engines, { memoryLimitMb: config.engineMemoryLimitMb, log: (message) => log(message) });
  let worker: FleetWorker | undefined;
  try {
    // A worker is for running engines: the vision models they need are converted first if an install skipped it.
    await ensureVisionModels({ log }).catch((error) => log('preparing the vision models failed', error));
    await engines.start();
    const images: ImageStore = config.imagesDir ? new DirectoryImageStore(config.imagesDir) : new PgImageStore(state.db);
    worker = await joinFleet({ db: state.db, engines, images, config, log });
    // A submit's notice wakes the idle claim loop at once (the loop's poll is the fallback); a cancel's stops a run.
    const { loop } = worker;
    const ready = new Set(worker.engines);
    const notices =
      loop &&
      (await PgNotices.start(state.db, {
        queued: (engine) => (ready.has(engine) ? loop.wake() : undefined),
        // A try-on canceled while it runs here stops now, not at the next renewal.
        settled: (id) => loop.cancel(id),
        gap: () => loop.wake(),
        log,
      }));
    const joined = worker;
    let closing: Promise<void> | undefined;
    return {
      id: joined.id,
      engines: joined.engines,
      close() {
        closing ??= (async () => {
          await notices?.close();
          await joined.stop();
          await engines.stop();
          await state.close();
        })();
        return closing;
      },
    };
  } catch (error) {
    await worker?.stop();
    await engines.stop();
    await state.close();
    throw error;
  }
}
