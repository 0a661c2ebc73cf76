/**
 * The installed engines: one small pool of engine hosts per EngineSpec, and
 * an honest list of what is ready and why the rest is not.
 */
import { EngineHost, abortError, type EngineHostOptions, type HostRunOptions } from './engine-host.ts';
import { EngineError, type EngineDescription, type EngineRequest, type EngineResult, type EngineSpec } from './types.ts';

/** Devices that are accelerators (ONNX Runtime's GPU providers and gpu:N names): engines on them are preferred. */
export const ACCELERATOR = /^(cuda|dml|directml|coreml|rocm|tensorrt|gpu)/i;

/** Options shared by every host the registry starts. */
export interface EngineRegistryOptions {
  memoryLimitMb?: number;
  initTimeoutMs?: number;
  cancelGraceMs?: number;
  /** Where operator-facing notes go (duplicate ids, engines that failed to load). */
  log?: (message: string) => void;
}

interface Waiter {
  resolve: (host: EngineHost) => void;
  reject: (error: Error) => void;
  signal: AbortSignal | undefined;
  onAbort: () => void;
}

/** Up to `size` hosts of one engine; never two jobs on one host. */
class HostPool {
  readonly hosts: EngineHost[];
  private readonly inUse = new Set<EngineHost>();
  private readonly waiters: Waiter[] = [];

  constructor(
    readonly spec: EngineSpec,
    readonly startedReady: boolean,
    first: EngineHost,
    readonly size: number,
    private readonly hostOptions: EngineHostOptions,
  ) {
    this.hosts = [first];
  }

  /** The latest description (the first host's, which re-inits after a crash). */
  get description(): EngineDescription | undefined {
    return this.hosts[0]?.description;
  }

  async run(request: EngineRequest, options: HostRunOptions): Promise<EngineResult> {
    const host = await this.acquire(options.signal);
    try {
      return await host.run(request, options);
    } finally {
      this.release(host);
    }
  }

  stop(): Promise<void[]> {
    for (const waiter of this.waiters.splice(0)) {
      waiter.signal?.removeEventListener('abort', waiter.onAbort);
      waiter.reject(new EngineError('engine_unavailable', 'the engine registry was stopped'));
    }
    return Promise.all(this.hosts.map((host) => host.stop()));
  }

  private acquire(signal: AbortSignal | undefined): Promise<EngineHost> {
    if (signal?.aborted) return Promise.reject(abortError());
    let host = this.hosts.find((candidate) => !this.inUse.has(candidate));
    if (!host && this.hosts.length < this.size) {
      host = new EngineHost(this.spec, this.hostOptions);
      this.hosts.push(host);
    }
    if (host) {
      this.inUse.add(host);
      return Promise.resolve(host);
    }
    return new Promise<EngineHost>((resolve, reject) => {
      const waiter: Waiter = {
        resolve,
        reject,
        signal,
        onAbort: () => {
          const index = this.waiters.indexOf(waiter);
          if (index >= 0) this.waiters.splice(index, 1);
          reject(abortError());
        },
      };
      signal?.addEventListener('abort', waiter.onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  private release(host: EngineHost): void {
    const waiter = this.waiters.shift();
    if (!waiter) {
      this.inUse.delete(host);
      return;
    }
    waiter.signal?.removeEventListener('abort', waiter.onAbort);
    waiter.resolve(host);
  }
}

/** Every installed engine, started once at boot; jobs run through `run()`. */
export class EngineRegistry {
  private readonly specs: EngineSpec[];
  private readonly hostOptions: EngineHostOptions;
  private readonly log: (message: string) => void;
  private readonly pools = new Map<string, HostPool>();

  constructor(specs: EngineSpec[], options: EngineRegistryOptions = {}) {
    this.specs = specs;
    const { log, ...hostOptions } = options;
    this.hostOptions = hostOptions;
    this.log = log ?? ((message) => console.warn(`[engines] ${message}`));
  }

  /** Starts one host per spec (in parallel) and returns what `list()` will show. */
  async start(): Promise<EngineDescription[]> {
    const hosts = this.specs.map((spec) => new EngineHost(spec, this.hostOptions));
    const descriptions = await Promise.all(hosts.map((host) => host.start()));
    const duplicates: Promise<void>[] = [];
    this.specs.forEach((spec, index) => {
      const host = hosts[index]!;
      const description = descriptions[index]!;
      if (this.pools.has(description.id)) {
        this.log(`${spec.module} also describes engine "${description.id}"; keeping the first one`);
        duplicates.push(host.stop());
        return;
      }
      if (!description.ready) this.log(`engine "${description.id}" is not ready: ${description.reason ?? ''}`);
      const size = Math.max(1, spec.concurrency ?? 1);
      this.pools.set(description.id, new HostPool(spec, description.ready, host, size, this.hostOptions));
    });
    await Promise.all(duplicates);
    return this.list();
  }

  /** All installed engines in spec order, ready or not. */
  list(): EngineDescription[] {
    return [...this.pools.values()].flatMap((pool) => (pool.description ? [pool.description] : []));
  }

  /** One engine's description, if installed. */
  get(id: string): EngineDescription | undefined {
    return this.pools.get(id)?.description;
  }

  /** The best ready engine: the first ready one on an accelerator, else the first ready one in spec order. */
  defaultEngine(): EngineDescription | undefined {
    const ready = this.list().filter((description) => description.ready);
    return ready.find((description) => ACCELERATOR.test(description.device)) ?? ready[0];
  }

  /** The device an engine runs on; the job runner keys its concurrency on it. */
  deviceOf(id: string): string | undefined {
    return this.get(id)?.device;
  }

  /** Jobs an engine may run at once (its host pool's size); the runner starts no more than this. */
  concurrencyOf(id: string): number {
    return this.pools.get(id)?.size ?? 1;
  }

  /**
   * Runs one job on an engine. Rejects with EngineError ('engine_unavailable'
   * for unknown or unready engines, or whatever the engine/host reports) or
   * with an AbortError when `signal` aborts.
   */
  run(engineId: string, request: EngineRequest, options: HostRunOptions = {}): Promise<EngineResult> {
    const pool = this.pools.get(engineId);
    if (!pool) {
      return Promise.reject(new EngineError('engine_unavailable', `no engine "${engineId}" is installed`));
    }
    if (!pool.startedReady) {
      const reason = pool.description?.reason ?? 'it could not be loaded';
      return Promise.reject(new EngineError('engine_unavailable', `engine "${engineId}" is not ready: ${reason}`));
    }
    return pool.run(request, options);
  }

  /** Stops every host; pending jobs fail with 'engine_unavailable'. */
  async stop(): Promise<void> {
    await Promise.all([...this.pools.values()].map((pool) => pool.stop()));
  }
}
