/**
 * The engines that ship with the appliance.
 */
import type { EngineSpec } from './types.ts';

/**
 * The built-in engine specs, best first (the registry's default engine is the
 * first ready one). Empty for now: the fast `warp` engine and the diffusion
 * engine arrive in later issues and will be listed here; until then the
 * registry honestly lists no engines.
 */
export function builtinEngineSpecs(): EngineSpec[] {
  return [];
}
