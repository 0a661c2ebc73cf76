/**
 * The FASHN VTON v1.5 network described as data: its configuration (the
 * published one and any smaller one built the same way), the name, shape and
 * dtype of every tensor a checkpoint must hold, and a checker that compares a
 * safetensors header against that list and names everything that is missing,
 * unexpected or of the wrong shape or type.
 */
import type { SafetensorsDtype, SafetensorsHeader } from './safetensors.ts';

/** The hyper-parameters of a try-on model (the reference's TryOnModel arguments). */
export interface FashnConfig {
  /** Model input height and width in pixels. */
  height: number;
  width: number;
  hidden: number;
  heads: number;
  doubleBlocks: number;
  singleBlocks: number;
  patchMixerBlocks: number;
  mlpRatio: number;
  /** RGB channels of the generated image. */
  channels: number;
  patch: number;
  theta: number;
  /** Rotary dimensions per position axis (constant, row, column); they sum to the head size. */
  axesDim: [number, number, number];
  qkvBias: boolean;
  /** Garment categories (tops, bottoms, one-pieces); the embedding has one more row for "none". */
  classes: number;
  /** Size of the sinusoidal timestep features fed to the time MLP. */
  timeFeatures: number;
}

/** The published FASHN VTON v1.5 (972M parameters, 576×864). */
export const FASHN_VTON_15: Readonly<FashnConfig> = Object.freeze({
  height: 864,
  width: 576,
  hidden: 1280,
  heads: 10,
  doubleBlocks: 8,
  singleBlocks: 16,
  patchMixerBlocks: 4,
  mlpRatio: 4,
  channels: 3,
  patch: 12,
  theta: 10000,
  axesDim: [16, 56, 56] as [number, number, number],
  qkvBias: true,
  classes: 3,
  timeFeatures: 256,
});

/** Derived sizes used throughout the graph. */
export function derived(config: FashnConfig): {
  headDim: number;
  mlpHidden: number;
  gridH: number;
  gridW: number;
  tokens: number;
  patchValues: number;
} {
  return {
    headDim: config.hidden / config.heads,
    mlpHidden: Math.floor(config.hidden * config.mlpRatio),
    gridH: config.height / config.patch,
    gridW: config.width / config.patch,
    tokens: (config.height / config.patch) * (config.width / config.patch),
    patchValues: config.channels * config.patch * config.patch,
  };
}

/** Throws when a configuration cannot describe a model (sizes that do not divide). */
export function validateConfig(config: FashnConfig): void {
  const problems: string[] = [];
  if (config.hidden % config.heads !== 0) problems.push(`hidden ${config.hidden} is not a multiple of heads ${config.heads}`);
  const headDim = config.hidden / config.heads;
  const axes = config.axesDim.reduce((a, b) => a + b, 0);
  if (axes !== headDim) problems.push(`axesDim [${config.axesDim.join(', ')}] sums to ${axes}, not the head size ${headDim}`);
  if (config.axesDim.some((d) => d % 2 !== 0)) problems.push('every axesDim must be even');
  if (config.height % config.patch !== 0 || config.width % config.patch !== 0) {
    problems.push(`${config.width}×${config.height} is not a whole number of ${config.patch}-pixel patches`);
  }
  if (config.timeFeatures % 2 !== 0) problems.push('timeFeatures must be even');
  if (problems.length > 0) throw new Error(`invalid try-on model configuration: ${problems.join('; ')}`);
}

/** One tensor the checkpoint must hold. */
export interface ExpectedTensor {
  name: string;
  shape: number[];
}

function linear(prefix: string, inputs: number, outputs: number, bias = true): ExpectedTensor[] {
  const out: ExpectedTensor[] = [{ name: `${prefix}.weight`, shape: [outputs, inputs] }];
  if (bias) out.push({ name: `${prefix}.bias`, shape: [outputs] });
  return out;
}

function singleBlock(prefix: string, config: FashnConfig): ExpectedTensor[] {
  const { headDim, mlpHidden } = derived(config);
  const h = config.hidden;
  return [
    ...linear(`${prefix}.linear1`, h, 3 * h + mlpHidden),
    ...linear(`${prefix}.linear2`, h + mlpHidden, h),
    { name: `${prefix}.norm.query_norm.scale`, shape: [headDim] },
    { name: `${prefix}.norm.key_norm.scale`, shape: [headDim] },
    ...linear(`${prefix}.modulation.lin`, h, 3 * h),
  ];
}

function stream(prefix: string, config: FashnConfig): ExpectedTensor[] {
  const { headDim, mlpHidden } = derived(config);
  const h = config.hidden;
  return [
    ...linear(`${prefix}_mod.lin`, h, 6 * h),
    ...linear(`${prefix}_attn.qkv`, h, 3 * h, config.qkvBias),
    { name: `${prefix}_attn.norm.query_norm.scale`, shape: [headDim] },
    { name: `${prefix}_attn.norm.key_norm.scale`, shape: [headDim] },
    ...linear(`${prefix}_attn.proj`, h, h),
    ...linear(`${prefix}_mlp.0`, h, mlpHidden),
    ...linear(`${prefix}_mlp.2`, mlpHidden, h),
  ];
}

/**
 * Every tensor of the model's state dict, in the reference's module order.
 * `patch_mixer_token` is a buffer the reference keeps for checkpoint
 * compatibility; it is checked but not used.
 */
export function expectedTensors(config: FashnConfig): ExpectedTensor[] {
  const { patchValues } = derived(config);
  const h = config.hidden;
  const p = config.patch;
  const out: ExpectedTensor[] = [
    ...linear('t_embedder.mlp.in_layer', config.timeFeatures, h),
    ...linear('t_embedder.mlp.out_layer', h, h),
    { name: 'y_embedder.weight', shape: [config.classes + 1, h] },
    { name: 'x_embedder.proj.weight', shape: [h, 2 * config.channels + 1, p, p] },
    { name: 'x_embedder.proj.bias', shape: [h] },
    { name: 'garment_embedder.proj.weight', shape: [h, config.channels + 1, p, p] },
    { name: 'garment_embedder.proj.bias', shape: [h] },
  ];
  for (let i = 0; i < config.patchMixerBlocks; i++) out.push(...singleBlock(`x_patch_mixer.${i}`, config));
  if (config.patchMixerBlocks > 0) out.push({ name: 'patch_mixer_token', shape: [1, 1, patchValues] });
  for (let i = 0; i < config.doubleBlocks; i++) {
    out.push(...stream(`double_blocks.${i}.img`, config), ...stream(`double_blocks.${i}.txt`, config));
  }
  for (let i = 0; i < config.singleBlocks; i++) out.push(...singleBlock(`single_blocks.${i}`, config));
  out.push(...linear('final_layer.linear', h, patchValues), ...linear('final_layer.adaLN_modulation.1', h, 2 * h));
  return out;
}

/** The number of parameters of a configuration (the buffer included). */
export function parameterCount(config: FashnConfig): number {
  return expectedTensors(config).reduce((sum, t) => sum + t.shape.reduce((a, b) => a * b, 1), 0);
}

/** Float dtypes a checkpoint may use; the published file is BF16. */
export const WEIGHT_DTYPES: readonly SafetensorsDtype[] = ['BF16', 'F16', 'F32'];

/** What is wrong with a checkpoint, by kind; empty lists mean it fits. */
export interface CheckReport {
  missing: ExpectedTensor[];
  unexpected: string[];
  wrongShape: { name: string; expected: number[]; found: number[] }[];
  wrongDtype: { name: string; found: string }[];
}

/** Compares a safetensors header with the architecture. */
export function checkHeader(header: SafetensorsHeader, config: FashnConfig): CheckReport {
  const report: CheckReport = { missing: [], unexpected: [], wrongShape: [], wrongDtype: [] };
  const expected = expectedTensors(config);
  const names = new Set(expected.map((t) => t.name));
  for (const want of expected) {
    const found = header.tensors.get(want.name);
    if (!found) {
      report.missing.push(want);
      continue;
    }
    if (found.shape.length !== want.shape.length || found.shape.some((d, i) => d !== want.shape[i])) {
      report.wrongShape.push({ name: want.name, expected: want.shape, found: found.shape });
    }
    if (!WEIGHT_DTYPES.includes(found.dtype)) report.wrongDtype.push({ name: want.name, found: found.dtype });
  }
  for (const name of header.tensors.keys()) if (!names.has(name)) report.unexpected.push(name);
  return report;
}

const LISTED = 5;

function list<T>(items: readonly T[], show: (item: T) => string): string {
  const shown = items.slice(0, LISTED).map(show).join(', ');
  return items.length > LISTED ? `${shown} and ${items.length - LISTED} more` : shown;
}

/** The report in words for an operator, or null when the checkpoint fits. */
export function describeReport(report: CheckReport, expectedCount: number): string | null {
  const parts: string[] = [];
  if (report.missing.length > 0) {
    parts.push(
      `${report.missing.length} of ${expectedCount} tensors missing (${list(report.missing, (t) => `${t.name} [${t.shape.join(',')}]`)})`,
    );
  }
  if (report.wrongShape.length > 0) {
    parts.push(
      `${report.wrongShape.length} with the wrong shape (${list(report.wrongShape, (t) => `${t.name} is [${t.found.join(',')}], expected [${t.expected.join(',')}]`)})`,
    );
  }
  if (report.wrongDtype.length > 0) {
    parts.push(`${report.wrongDtype.length} not BF16/F16/F32 (${list(report.wrongDtype, (t) => `${t.name} is ${t.found}`)})`);
  }
  if (report.unexpected.length > 0) {
    parts.push(`${report.unexpected.length} unexpected (${list(report.unexpected, (name) => name)})`);
  }
  return parts.length > 0 ? parts.join('; ') : null;
}
