/**
 * The engines that ship with the appliance.
 */
import { join } from 'node:path';
import type { EngineSpec } from './types.ts';

/**
 * The built-in engine specs, best first (the registry's default engine is the
 * first ready one). Each engine says itself whether it is ready and why not.
 */
export function builtinEngineSpecs(): EngineSpec[] {
  return [
    // FASHN VTON v1.5: ready once the operator has put model.safetensors in models/fashn-vton-1.5/.
    // Its first load builds the ONNX model from the 2 GB weights, which takes minutes.
    { module: join(import.meta.dirname, 'fashn', 'engine.ts'), loadTimeoutMs: 15 * 60_000 },
  ];
}
