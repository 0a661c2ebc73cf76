/**
 * A test engine that holds every run at a gate: it reports `generating`, then
 * waits until the gate file exists before composing (the compose engine's
 * work, with its options). Tests see runs overlap by their progress and
 * release them by creating the file, instead of racing a timer.
 */
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Engine, EngineRequest, EngineResult, EngineRunOptions } from '../../../server/engines/types.ts';
import { createEngine as createComposeEngine, type ComposeEngineOptions } from './compose-engine.ts';

export interface GatedEngineOptions extends ComposeEngineOptions {
  /** Runs wait at `generating` until this file exists. */
  gate: string;
}

/** The progress a held run reports; the compose engine's own progress below it is not passed on. */
export const HELD_PROGRESS = 0.5;
const GATE_POLL_MS = 10;

/** Creates the gated engine (the module's entry point for the engine host). */
export function createEngine(options: unknown): Engine {
  const config = options as GatedEngineOptions;
  const inner = createComposeEngine({ id: 'test-gated', ...config });

  async function run(request: EngineRequest, { signal, onProgress }: EngineRunOptions): Promise<EngineResult> {
    onProgress({ stage: 'preprocessing', progress: 0.05 });
    onProgress({ stage: 'generating', progress: HELD_PROGRESS });
    while (!existsSync(config.gate)) await sleep(GATE_POLL_MS, undefined, { signal });
    return inner.run(request, {
      signal,
      onProgress: (progress) => {
        if (progress.progress > HELD_PROGRESS) onProgress(progress);
      },
    });
  }

  return { id: inner.id, describe: () => inner.describe(), load: () => inner.load(), run };
}
