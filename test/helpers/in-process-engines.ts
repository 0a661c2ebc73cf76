/**
 * A test double for the engine registry: the same engine modules, created and run in the test's own process, so
 * that an API test needs no engine host child. Engines that must crash, hang or eat memory need a real process:
 * those tests start a whole appliance (startTestAppliance).
 */
import { pathToFileURL } from 'node:url';
import { abortError } from '../../server/engines/engine-host.ts';
import {
  EngineError,
  type CreateEngine,
  type Engine,
  type EngineDescription,
  type EngineProgress,
  type EngineRequest,
  type EngineResult,
  type EngineSpec,
} from '../../server/engines/types.ts';
import type { EngineCatalog } from '../../server/jobs/runner.ts';

interface Loaded {
  engine: Engine;
  description: EngineDescription;
  size: number;
  busy: number;
  waiting: Array<() => void>;
}

export class InProcessEngines implements EngineCatalog {
  private readonly loaded = new Map<string, Loaded>();

  constructor(private readonly specs: EngineSpec[]) {}

  async start(): Promise<void> {
    for (const spec of this.specs) {
      const module = (await import(pathToFileURL(spec.module).href)) as { createEngine: CreateEngine };
      const engine = await module.createEngine(spec.options);
      if (engine.describe().ready) await engine.load();
      const description = engine.describe();
      this.loaded.set(description.id, { engine, description, size: Math.max(1, spec.concurrency ?? 1), busy: 0, waiting: [] });
    }
  }

  async stop(): Promise<void> {
    for (const { engine } of this.loaded.values()) await engine.dispose?.();
  }

  list(): EngineDescription[] {
    return [...this.loaded.values()].map(({ description }) => description);
  }

  get(id: string): EngineDescription | undefined {
    return this.loaded.get(id)?.description;
  }

  defaultEngine(): EngineDescription | undefined {
    return this.list().find((description) => description.ready);
  }

  deviceOf(id: string): string | undefined {
    return this.get(id)?.device;
  }

  concurrencyOf(id: string): number {
    return this.loaded.get(id)?.size ?? 1;
  }

  /** Runs like the registry: typed errors pass, others become engine_failed, a cancel rejects with an AbortError. */
  async run(
    id: string,
    request: EngineRequest,
    options: { signal: AbortSignal; onProgress: (p: EngineProgress) => void; timeoutMs: number },
  ): Promise<EngineResult> {
    const entry = this.loaded.get(id);
    if (!entry?.description.ready) throw new EngineError('engine_unavailable', `no ready engine "${id}"`);
    if (entry.busy >= entry.size) await new Promise<void>((resolve) => entry.waiting.push(resolve));
    entry.busy++;
    const controller = new AbortController();
    const onAbort = (): void => controller.abort();
    options.signal.addEventListener('abort', onAbort, { once: true });
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        controller.abort();
        reject(new EngineError('timeout', `the engine did not finish within ${options.timeoutMs} ms`));
      }, options.timeoutMs);
    });
    try {
      if (options.signal.aborted) throw abortError();
      return await Promise.race([entry.engine.run(request, { signal: controller.signal, onProgress: options.onProgress }), timedOut]);
    } catch (error) {
      if (options.signal.aborted) throw abortError();
      if (error instanceof EngineError) throw error;
      throw new EngineError('engine_failed', 'the engine failed');
    } finally {
      clearTimeout(timer);
      options.signal.removeEventListener('abort', onAbort);
      entry.busy--;
      entry.waiting.shift()?.();
    }
  }
}
