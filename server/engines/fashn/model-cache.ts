/**
 * From the operator's `model.safetensors` to an ONNX model ONNX Runtime can
 * load: check every tensor against the architecture, build the graph, write
 * it next to the weights (`<weights>.<compute>-<attention>.onnx` plus its
 * `.data` file of external weights) and record in a sidecar what it was
 * built from. Later starts reuse the build while the sidecar matches the
 * weights file (size, modification time, header hash) and the builder.
 */
import { createHash } from 'node:crypto';
import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { checkHeader, describeReport, expectedTensors, type FashnConfig } from './architecture.ts';
import type { AttentionKind } from './blocks.ts';
import { buildModelGraph } from './model-graph.ts';
import { SafetensorsFile } from './safetensors.ts';
import { writeModel, type ComputeType } from '../../onnx/graph.ts';

/** Bumped whenever the graph builder's output changes, so cached builds are made again. */
export const GRAPH_VERSION = 1;

/** Weights that cannot be used; the message is for the operator. */
export class WeightsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WeightsError';
  }
}

export interface PrepareOptions {
  weightsPath: string;
  config: FashnConfig;
  compute: ComputeType;
  attention: AttentionKind;
  log?: (message: string) => void;
}

export interface PreparedModel {
  onnxPath: string;
  /** Whether an earlier build was reused. */
  cached: boolean;
  buildMs: number;
}

interface Sidecar {
  graphVersion: number;
  config: FashnConfig;
  compute: ComputeType;
  attention: AttentionKind;
  weights: { bytes: number; mtimeMs: number; headerSha256: string };
  builtAt: string;
  buildMs: number;
}

async function headerHash(file: SafetensorsFile): Promise<string> {
  const hash = createHash('sha256');
  for (const t of [...file.header.tensors.values()].sort((a, b) => a.begin - b.begin))
    hash.update(`${t.name}:${t.dtype}:${t.shape.join('x')}:${t.begin};`);
  return hash.digest('hex');
}

function sameBuild(sidecar: Sidecar, wanted: Omit<Sidecar, 'builtAt' | 'buildMs'>): boolean {
  return (
    JSON.stringify({ ...sidecar, builtAt: undefined, buildMs: undefined }) ===
    JSON.stringify({ ...wanted, builtAt: undefined, buildMs: undefined })
  );
}

/** Opens and checks the weights; throws WeightsError naming every problem. */
export async function openCheckedWeights(weightsPath: string, config: FashnConfig): Promise<SafetensorsFile> {
  let file: SafetensorsFile;
  try {
    file = await SafetensorsFile.open(weightsPath);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new WeightsError(`${weightsPath} is missing`);
    throw new WeightsError(`${weightsPath} is not a usable safetensors file: ${(error as Error).message}`);
  }
  const problem = describeReport(checkHeader(file.header, config), expectedTensors(config).length);
  if (problem) {
    await file.close();
    throw new WeightsError(`${weightsPath} does not match the FASHN VTON v1.5 architecture: ${problem}`);
  }
  return file;
}

/** Checks the weights and returns a built ONNX model for them, building it when needed. */
export async function prepareModel(options: PrepareOptions): Promise<PreparedModel> {
  const log = options.log ?? (() => undefined);
  const file = await openCheckedWeights(options.weightsPath, options.config);
  try {
    const info = await stat(options.weightsPath);
    const wanted: Omit<Sidecar, 'builtAt' | 'buildMs'> = {
      graphVersion: GRAPH_VERSION,
      config: options.config,
      compute: options.compute,
      attention: options.attention,
      weights: { bytes: info.size, mtimeMs: info.mtimeMs, headerSha256: await headerHash(file) },
    };
    const onnxPath = `${options.weightsPath.replace(/\.safetensors$/, '')}.${options.compute}-${options.attention}.onnx`;
    const sidecarPath = `${onnxPath}.json`;
    const existing = await readFile(sidecarPath, 'utf8').then(
      (text) => JSON.parse(text) as Sidecar,
      () => null,
    );
    if (existing && sameBuild(existing, wanted)) {
      const present = await Promise.all([stat(onnxPath), stat(`${onnxPath}.data`)]).then(
        () => true,
        () => false,
      );
      if (present) return { onnxPath, cached: true, buildMs: existing.buildMs };
    }
    await rm(sidecarPath, { force: true });
    log(`building the ONNX model for ${options.weightsPath} (${options.compute}, ${options.attention} attention)`);
    const started = performance.now();
    const graph = buildModelGraph(options.config, { compute: options.compute, attention: options.attention });
    await writeModel(graph, { read: (name) => file.float32(name) }, onnxPath, {
      producer: 'fittingroom fashn-vton',
      metadata: { graphVersion: String(GRAPH_VERSION), compute: options.compute, attention: options.attention },
    });
    const buildMs = Math.round(performance.now() - started);
    // The sidecar is written last: a build cut short has none and is made again.
    await writeFile(sidecarPath, JSON.stringify({ ...wanted, builtAt: new Date().toISOString(), buildMs } satisfies Sidecar, null, 2));
    log(`built ${onnxPath} in ${buildMs} ms`);
    return { onnxPath, cached: false, buildMs };
  } finally {
    await file.close();
  }
}
