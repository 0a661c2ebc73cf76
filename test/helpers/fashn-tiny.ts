/**
 * A tiny FASHN VTON configuration (the same architecture, small sizes) and
 * random weights for it, written as a safetensors file, so tests exercise the
 * real reader, checker, graph builder and sampler on CPU in milliseconds.
 */
import { writeFileSync } from 'node:fs';
import { expectedTensors, type FashnConfig } from '../../server/engines/fashn/architecture.ts';
import { encodeSafetensors, type TensorToWrite } from '../../server/engines/fashn/safetensors.ts';

/** 24×48 pixels in 12-pixel patches (2×4 tokens), hidden 32 in 2 heads of 16 (rotary axes 4/6/6). */
export const TINY: Readonly<FashnConfig> = Object.freeze({
  height: 48,
  width: 24,
  hidden: 32,
  heads: 2,
  doubleBlocks: 1,
  singleBlocks: 1,
  patchMixerBlocks: 1,
  mlpRatio: 4,
  channels: 3,
  patch: 12,
  theta: 10000,
  axesDim: [4, 6, 6] as [number, number, number],
  qkvBias: true,
  classes: 3,
  timeFeatures: 16,
});

/** mulberry32: a small seeded generator for test data. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Random weights for every tensor of `config`: uniform ±1/√fan-in, norm scales near 1. */
export function randomWeights(config: FashnConfig, seed = 1, dtype: TensorToWrite['dtype'] = 'F32'): TensorToWrite[] {
  const random = seeded(seed);
  return expectedTensors(config).map(({ name, shape }) => {
    const count = shape.reduce((a, b) => a * b, 1);
    const fanIn = shape.length > 1 ? shape.slice(1).reduce((a, b) => a * b, 1) : shape[0]!;
    const values = new Float32Array(count);
    const isScale = name.endsWith('.scale');
    for (let i = 0; i < count; i++) {
      const u = random() * 2 - 1;
      values[i] = isScale ? 1 + 0.2 * u : u / Math.sqrt(fanIn);
    }
    return { name, dtype, shape, values };
  });
}

/** Writes random weights for `config` to `path` as safetensors. */
export function writeRandomModel(path: string, config: FashnConfig, seed = 1, dtype: TensorToWrite['dtype'] = 'F32'): TensorToWrite[] {
  const tensors = randomWeights(config, seed, dtype);
  writeFileSync(path, encodeSafetensors(tensors, { format: 'pt' }));
  return tensors;
}
