/**
 * The engines of a shop whose state is on a shared database: what this process has installed (its registry) and
 * what the fleet's workers run, other machines' GPU workers and this process's own loop alike. An engine is ready
 * when a live worker runs it, wherever that is; its description comes from this process's own registry, since every
 * node runs the same code (an engine only other machines have is described by what they announced).
 *
 * The fleet is read from the database every `refreshMs` and kept: a submit picks its engine from the last reading,
 * without a query, and a worker that joins or leaves shows within one refresh.
 */
import type { EngineCatalog } from '../jobs/runner.ts';
import { ACCELERATOR } from '../engines/registry.ts';
import type { EngineDescription } from '../engines/types.ts';

/** A worker of the fleet, as the database knows it. */
export interface FleetWorker {
  id: string;
  host: string;
  engines: string[];
  device: string;
  /** Try-ons it runs now. */
  running: number;
  seenAt: string;
}

/** An engine and the workers that run it (none: not ready). */
export interface FleetEngine extends EngineDescription {
  workers: Pick<FleetWorker, 'id' | 'host' | 'device' | 'running' | 'seenAt'>[];
}

export interface FleetCatalogOptions {
  /** The workers seen recently and not retired. */
  fleet: () => Promise<FleetWorker[]>;
  refreshMs: number;
  log: (message: string, error?: unknown) => void;
}

export class FleetCatalog implements EngineCatalog {
  private workers: FleetWorker[] = [];
  private timer: NodeJS.Timeout | undefined;

  /** `local`: this process's registry, which also runs the jobs its own loop claims. */
  constructor(
    private readonly local: EngineCatalog,
    private readonly options: FleetCatalogOptions,
  ) {}

  /** Reads the fleet once, then every `refreshMs`. */
  async start(): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => void this.refresh(), this.options.refreshMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Reads the fleet now (a failed read keeps the last one, and says so). */
  async refresh(): Promise<void> {
    try {
      this.workers = await this.options.fleet();
    } catch (error) {
      this.options.log('reading the fleet of workers failed; the engines list shows the last one read', error);
    }
  }

  list(): FleetEngine[] {
    const ids = [...this.local.list().map((engine) => engine.id), ...this.workers.flatMap((worker) => worker.engines)];
    return [...new Set(ids)].map((id) => this.describe(id));
  }

  get(id: string): FleetEngine | undefined {
    return this.list().find((engine) => engine.id === id);
  }

  /** As on one PC: the first ready engine on an accelerator, else the first ready one. */
  defaultEngine(): FleetEngine | undefined {
    const ready = this.list().filter((engine) => engine.ready);
    return ready.find((engine) => ACCELERATOR.test(engine.device)) ?? ready[0];
  }

  deviceOf(id: string): string | undefined {
    return this.local.deviceOf(id);
  }

  concurrencyOf(id: string): number {
    return this.local.concurrencyOf(id);
  }

  run(...args: Parameters<EngineCatalog['run']>): ReturnType<EngineCatalog['run']> {
    return this.local.run(...args);
  }

  private describe(id: string): FleetEngine {
    const runners = this.workers.filter((worker) => worker.engines.includes(id));
    const workers = runners.map(({ id, host, device, running, seenAt }) => ({ id, host, device, running, seenAt }));
    const installed = this.local.get(id);
    const devices = [...new Set(runners.map((worker) => worker.device))].join(', ');
    const base: EngineDescription = installed ?? {
      id,
      name: id,
      ready: false,
      device: devices,
      license: 'see the workers that run it',
      resolution: { width: 0, height: 0 },
      honors: [],
      typicalSeconds: 0,
    };
    const { reason, ...described } = base;
    if (runners.length > 0) return { ...described, ready: true, device: devices, workers };
    return { ...described, ready: false, reason: reason ?? 'no worker of the fleet runs this engine now', workers };
  }
}
