/**
 * The engines that ship with the appliance.
 */
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import type { EngineSpec } from './types.ts';

/**
 * The built-in engine specs (the registry's default engine is the first ready
 * one, so the warp engine answers unless a request names another). Each
 * engine says itself whether it is ready and why not.
 */
export function builtinEngineSpecs(): EngineSpec[] {
  return [
    // The fast CPU engine: ready wherever the vision models are (they come with npm install).
    // Its processes share nothing, so try-ons run side by side, one process per core at most, with
    // ONNX Runtime on one thread in each; how many run at once is the runner's CPU limit (--engine-workers).
    {
      module: join(import.meta.dirname, 'warp', 'engine.ts'),
      options: { threads: 1 },
      concurrency: availableParallelism(),
    },
    // FASHN VTON v1.5: ready once the operator has put model.safetensors in models/fashn-vton-1.5/.
    // Its first load builds the ONNX model from the 2 GB weights, which takes minutes; one process (it holds gigabytes).
    { module: join(import.meta.dirname, 'fashn', 'engine.ts'), loadTimeoutMs: 15 * 60_000, concurrency: 1 },
  ];
}
