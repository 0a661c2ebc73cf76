/**
 * A GPU worker on a shared PostgreSQL database (`fittingroom worker --database …`): the engines in their host
 * processes, no HTTP API. It claims try-ons for the engines that are ready here (state/worker-loop.ts), reads their
 * inputs from the shop's image store into a work directory, runs the engine, stores the result there and settles
 * the try-on. Images live in PostgreSQL by default, or in a directory every node mounts (`--images-dir`).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Config } from './config.ts';
import { EngineRegistry } from './engines/registry.ts';
import { EngineError, type EngineSpec } from './engines/types.ts';
import { engineRequest, resultImage } from './jobs/runner.ts';
import { newId } from './kernel/ids.ts';
import { DirectoryImageStore, type ImageStore } from './state/images.ts';
import { PgState } from './state/postgres/gateway.ts';
import { PgImageStore } from './state/postgres/images.ts';
import { PgJobQueue } from './state/postgres/jobs.ts';
import { WorkerLoop, type JobOutcome } from './state/worker-loop.ts';
import type { GenerationRecord } from './store/schema.ts';

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
  try {
    const ready = (await engines.start()).filter((engine) => engine.ready);
    const images: ImageStore = config.imagesDir ? new DirectoryImageStore(config.imagesDir) : new PgImageStore(state.db);
    const id = newId('wrk');
    const loop = new WorkerLoop({
      queue: new PgJobQueue(state.db, { maxAttempts: config.maxAttempts }),
      worker: {
        id,
        host: hostname(),
        pid: process.pid,
        engines: ready.map((engine) => engine.id),
        device: [...new Set(ready.map((engine) => engine.device))].join(', ') || 'none',
      },
      // One job per engine host process, as on one PC.
      concurrency: Math.max(1, ...ready.map((engine) => engines.concurrencyOf(engine.id))),
      run: (record, signal) => runJob(record, signal, { engines, images, timeoutMs: config.jobTimeoutSeconds * 1000 }),
      log,
    });
    await loop.start();
    let closing: Promise<void> | undefined;
    return {
      id,
      engines: ready.map((engine) => engine.id),
      close() {
        closing ??= (async () => {
          await loop.stop();
          await engines.stop();
          await state.close();
        })();
        return closing;
      },
    };
  } catch (error) {
    await engines.stop();
    await state.close();
    throw error;
  }
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
