/**
 * This process's place in a shared database's fleet of workers: the ready engines of its registry, a claim loop
 * (worker-loop.ts) over the shop's queue, and the run of one claimed try-on (its inputs from the image store into
 * a work directory, the engine, the result back into the image store). `fittingroom worker` (server/worker.ts) is
 * only this; an API process on a database runs one beside its HTTP API when it has engines of its own.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Config } from '../config.ts';
import type { EngineRegistry } from '../engines/registry.ts';
import { EngineError } from '../engines/types.ts';
import { engineRequest, resultImage } from '../jobs/runner.ts';
import { newId } from '../kernel/ids.ts';
import type { GenerationRecord } from '../store/schema.ts';
import type { ImageStore } from './images.ts';
import type { PgDatabase } from './postgres/db.ts';
import { PgJobQueue } from './postgres/jobs.ts';
import { WorkerLoop, type JobOutcome } from './worker-loop.ts';

export interface FleetWorkerOptions {
  db: PgDatabase;
  /** Started already; its ready engines are the ones this worker announces and claims for. */
  engines: EngineRegistry;
  images: ImageStore;
  config: Pick<Config, 'maxAttempts' | 'jobTimeoutSeconds'>;
  log: (message: string, error?: unknown) => void;
}

export interface FleetWorker {
  id: string;
  /** The engines it runs (the ready ones); none: it did not join the fleet. */
  engines: string[];
  loop: WorkerLoop | null;
  /** Gives back what it runs (no attempt spent) and retires from the fleet; the engines are the caller's. */
  stop(): Promise<void>;
}

/** Joins the fleet with the registry's ready engines and starts claiming (nothing, if none is ready). */
export async function joinFleet(options: FleetWorkerOptions): Promise<FleetWorker> {
  const { engines, images, log } = options;
  const id = newId('wrk');
  const ready = engines.list().filter((engine) => engine.ready);
  if (ready.length === 0) return { id, engines: [], loop: null, stop: async () => {} };
  const loop = new WorkerLoop({
    queue: new PgJobQueue(options.db, { maxAttempts: options.config.maxAttempts }),
    worker: {
      id,
      host: hostname(),
      pid: process.pid,
      engines: ready.map((engine) => engine.id),
      device: [...new Set(ready.map((engine) => engine.device))].join(', '),
    },
    // One job per engine host process, as on one PC.
    concurrency: Math.max(1, ...ready.map((engine) => engines.concurrencyOf(engine.id))),
    run: (record, signal) => runJob(record, signal, { engines, images, timeoutMs: options.config.jobTimeoutSeconds * 1000 }),
    log,
  });
  await loop.start();
  return { id, engines: ready.map((engine) => engine.id), loop, stop: () => loop.stop() };
}

/** One try-on on this machine: inputs from the image store to a work directory, the engine, the result back. */
async function runJob(
  record: GenerationRecord,
  signal: AbortSignal,
  context: { engines: EngineRegistry; images: ImageStore; timeoutMs: number },
): Promise<JobOutcome> {
  const { engines, images } = context;
  const workDir = await mkdtemp(join(tmpdir(), `fittingroom-${record.id}-`));
  try {
    const inputs = record.inputs;
    if (!inputs) return { error: { code: 'engine_failed', message: 'The inputs of this try-on were erased.' } };
    const local = new Map<string, string>();
    await Promise.all(
      [inputs.selfie, ...inputs.items].map(async (image, i) => {
        const path = join(workDir, `input-${i}.${image.format}`);
        await writeFile(path, await images.get(image));
        local.set(image.file, path);
      }),
    );
    const request = engineRequest(record, (image) => local.get(image.file)!, workDir);
    const result = await engines.run(record.engine, request, { signal, timeoutMs: context.timeoutMs });
    const format = record.params.outputFormat;
    const image = await resultImage(result, format);
    return await images.put(record.id, 'result', image.bytes, { format, width: image.width, height: image.height });
  } catch (error) {
    if (error instanceof EngineError) return { error: { code: error.code, message: error.message }, retryable: error.retryable };
    throw error;
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}
