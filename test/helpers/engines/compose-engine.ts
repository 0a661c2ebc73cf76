/**
 * A test engine: pastes the first item onto the centre of the selfie, and can
 * be told to misbehave (fail, crash, hang, eat memory) to exercise the host.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import sharp from 'sharp';
import {
  EngineError,
  type Engine,
  type EngineDescription,
  type EngineRequest,
  type EngineResult,
  type EngineRunOptions,
  type GenerationErrorCode,
} from '../../../server/engines/types.ts';

/** How the compose engine behaves; every field is optional. */
export interface ComposeEngineOptions {
  id?: string;
  device?: string;
  /** Total time a run takes, spread over its stages (default 0). */
  delayMs?: number;
  /** Throw an EngineError with this code after preprocessing. */
  fail?: GenerationErrorCode;
  /** Kill the process halfway through generating. */
  crash?: 'exit' | 'abort';
  /** Never finish, ignoring cancel. */
  hang?: boolean;
  /** Hold this much resident memory while generating. */
  allocateMb?: number;
  /** How long load() takes (default 0). */
  loadDelayMs?: number;
  /** Throw from load(). */
  failLoad?: boolean;
  /** Crash (with `crash`, default 'exit') only while this file does not exist; creates it. */
  crashUntilMarker?: string;
  /** Misbehave (fail, crash, hang, allocateMb) only while this file does not exist; creates it. */
  untilMarker?: string;
}

const GENERATING_STEPS = 5;

/** Creates the compose engine (the module's entry point for the engine host). */
export function createEngine(options: unknown): Engine {
  const config = (options ?? {}) as ComposeEngineOptions;
  const id = config.id ?? 'test-compose';
  const delayMs = config.delayMs ?? 0;

  const description: EngineDescription = {
    id,
    name: `Test compose engine (${id})`,
    ready: true,
    device: config.device ?? 'cpu',
    license: 'test-only',
    resolution: { width: 768, height: 1024 },
    honors: ['size'],
    typicalSeconds: Math.max(1, Math.round(delayMs / 1000)),
  };

  async function run(request: EngineRequest, { signal, onProgress }: EngineRunOptions): Promise<EngineResult> {
    const misbehave = shouldMisbehave(config);
    onProgress({ stage: 'preprocessing', progress: 0.05 });
    const selfie = await sharp(request.selfie.path).metadata();
    await sleep(delayMs * 0.2, undefined, { signal });
    if (misbehave && config.fail) throw new EngineError(config.fail, `test engine failed with ${config.fail}`);

    let held: Buffer[] = [];
    for (let step = 1; step <= GENERATING_STEPS; step++) {
      if (signal.aborted) throw signal.reason;
      onProgress({ stage: 'generating', progress: 0.1 + (0.8 * step) / GENERATING_STEPS });
      if (misbehave && step === Math.ceil(GENERATING_STEPS / 2)) {
        if (config.allocateMb) held = await allocate(config.allocateMb);
        if (config.crash ?? config.crashUntilMarker) crash(config.crash ?? 'exit');
        if (config.hang) await new Promise(() => setInterval(() => {}, 1000));
      }
      await sleep((delayMs * 0.6) / GENERATING_STEPS, undefined, { signal });
    }
    held.length = 0;

    onProgress({ stage: 'finishing', progress: 0.95 });
    const image = await compose(request, selfie.width ?? request.selfie.width, selfie.height ?? request.selfie.height);
    await sleep(delayMs * 0.2, undefined, { signal });
    onProgress({ stage: 'finishing', progress: 1 });
    return { image, format: 'png' };
  }

  return {
    id,
    describe: () => description,
    load: async () => {
      await sleep(config.loadDelayMs ?? 0);
      if (config.failLoad) throw new Error(`test engine was told to fail loading: ${import.meta.filename} is missing`);
    },
    run,
  };
}

function shouldMisbehave(config: ComposeEngineOptions): boolean {
  const marker = config.crashUntilMarker ?? config.untilMarker;
  if (marker === undefined) return true;
  if (existsSync(marker)) return false;
  writeFileSync(marker, '');
  return true;
}

function crash(kind: 'exit' | 'abort'): never {
  if (kind === 'abort') process.abort();
  process.exit(3);
}

async function allocate(megabytes: number): Promise<Buffer[]> {
  const chunkMb = 16;
  const chunks: Buffer[] = [];
  for (let done = 0; done < megabytes; done += chunkMb) {
    // fill() touches every page so the memory is resident, not just reserved.
    chunks.push(Buffer.allocUnsafeSlow(chunkMb * 1024 * 1024).fill(1));
    await new Promise((resolve) => setImmediate(resolve));
  }
  return chunks;
}

async function compose(request: EngineRequest, width: number, height: number): Promise<Buffer> {
  const first = request.items[0];
  if (!first) return sharp(request.selfie.path).png().toBuffer();
  const item = await sharp(first.path)
    .resize({ width: Math.max(1, Math.round(width * 0.4)), height, fit: 'inside' })
    .png()
    .toBuffer({ resolveWithObject: true });
  return sharp(request.selfie.path)
    .composite([
      {
        input: item.data,
        left: Math.floor((width - item.info.width) / 2),
        top: Math.floor((height - item.info.height) / 2),
      },
    ])
    .png()
    .toBuffer();
}
