/**
 * The FASHN VTON reference goldens (shared/reference/fashn-goldens, made by
 * running the official PyTorch code on a tiny random checkpoint): an index
 * of raw tensors whose sha256 is checked before use, the tiny model built
 * into ONNX from a copy of its checkpoint, and the error figures the
 * conformance tests hold the engine to. Its README documents every file.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FashnConfig } from '../../server/engines/fashn/architecture.ts';
import type { AttentionKind } from '../../server/engines/fashn/blocks.ts';
import type { Conditions } from '../../server/engines/fashn/denoiser.ts';
import { prepareModel } from '../../server/engines/fashn/model-cache.ts';
import type { ComputeType } from '../../server/onnx/graph.ts';
import { OrtSession } from '../../server/onnx/ort.ts';

/** Where the goldens live: shared/ beside the repository, present in CI. */
export const FASHN_GOLDENS_DIR = fileURLToPath(new URL('../../../shared/reference/fashn-goldens/', import.meta.url));

/** Why the conformance tests are skipped, or false when the goldens are there. */
export const goldensMissing: string | false = existsSync(join(FASHN_GOLDENS_DIR, 'tensors.json'))
  ? false
  : `the FASHN reference goldens are not at ${FASHN_GOLDENS_DIR} (CI always has them)`;

interface TensorEntry {
  name: string;
  shape: number[];
  dtype: 'float32' | 'uint8';
  file: string;
  sha256: string;
}

/** One sampling run of the reference (`tensors.json` → `sampling`). */
export interface GoldenSampling {
  steps: number;
  mu: number;
  guidance: number;
  skip_cfg_last_n_steps: number;
  schedule: number[];
  t_per_step: number[];
  dt_per_step: number[];
  guided: boolean[];
  state_rms: number[];
  padding_ltrb: [number, number, number, number];
}

/** The reference's get_rf_schedule(steps, mu). */
export interface GoldenSchedule {
  steps: number;
  mu: number;
  t: number[];
}

interface TensorIndex {
  tensors: TensorEntry[];
  forward: { cfg: { t: number; category: number }; batch: { t: number[]; categories: number[] } };
  sampling: Record<string, GoldenSampling>;
  schedules: GoldenSchedule[];
}

/** The goldens, read and checked once per test file. */
export interface Goldens {
  config: FashnConfig;
  index: TensorIndex;
  f32(name: string): Float32Array;
  u8(name: string): Uint8Array;
  /** The conditions of README section 3 (category tops), as the engine's denoiser takes them. */
  conditions(): Conditions;
}

function entryOf(index: TensorIndex, name: string, dtype: TensorEntry['dtype']): TensorEntry {
  const entry = index.tensors.find((t) => t.name === name);
  if (!entry) throw new Error(`fashn goldens: no tensor ${name} in tensors.json`);
  if (entry.dtype !== dtype) throw new Error(`fashn goldens: ${name} is ${entry.dtype}, not ${dtype}`);
  return entry;
}

/** A file's bytes in a buffer of their own, after checking them against the index's sha256. */
function checkedBytes(entry: TensorEntry, bytesPerValue: number): ArrayBuffer {
  const bytes = readFileSync(join(FASHN_GOLDENS_DIR, entry.file));
  const digest = createHash('sha256').update(bytes).digest('hex');
  if (digest !== entry.sha256) throw new Error(`fashn goldens: ${entry.file} has sha256 ${digest}, expected ${entry.sha256}`);
  const count = entry.shape.reduce((a, b) => a * b, 1);
  if (bytes.length !== count * bytesPerValue)
    throw new Error(`fashn goldens: ${entry.file} holds ${bytes.length} bytes, not [${entry.shape}]`);
  // Copied: a small read may sit at any offset of a shared pool, which a Float32Array view cannot start at.
  return Uint8Array.from(bytes).buffer;
}

/** Reads tensors.json and config.json; tensor files are read (and checked) when asked for. */
export function loadGoldens(): Goldens {
  const index = JSON.parse(readFileSync(join(FASHN_GOLDENS_DIR, 'tensors.json'), 'utf8')) as TensorIndex;
  const config = (JSON.parse(readFileSync(join(FASHN_GOLDENS_DIR, 'config.json'), 'utf8')) as { project: FashnConfig }).project;
  const f32 = (name: string): Float32Array => new Float32Array(checkedBytes(entryOf(index, name, 'float32'), 4));
  const u8 = (name: string): Uint8Array => new Uint8Array(checkedBytes(entryOf(index, name, 'uint8'), 1));
  const conditions = (): Conditions => ({
    agnostic: f32('agnostic'),
    garment: f32('garment'),
    personPose: f32('person_pose'),
    garmentPose: f32('garment_pose'),
    category: 'tops',
  });
  return { config, index, f32, u8, conditions };
}

/** The tiny golden checkpoint built and opened; built from a copy so the shared folder is never written. */
export interface GoldenModel {
  session: OrtSession;
  release(): Promise<void>;
}

/** Copies tiny.safetensors to a temporary folder, builds it for `compute`/`attention` and opens it on CPU. */
export async function openGoldenModel(config: FashnConfig, compute: ComputeType, attention: AttentionKind): Promise<GoldenModel> {
  const dir = mkdtempSync(join(tmpdir(), 'fashn-goldens-'));
  const weightsPath = join(dir, 'model.safetensors');
  copyFileSync(join(FASHN_GOLDENS_DIR, 'tiny.safetensors'), weightsPath);
  const { onnxPath } = await prepareModel({ weightsPath, config, compute, attention });
  const session = await OrtSession.create(onnxPath, { name: `fashn-goldens ${compute} ${attention}`, threads: 1 });
  return {
    session,
    async release() {
      await session.release();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** How far `actual` is from `expected`: the largest absolute difference and the relative L2 norm of the difference. */
export interface Discrepancy {
  maxAbs: number;
  relL2: number;
}

/** Compares two arrays of the same length, element by element. */
export function discrepancy(actual: ArrayLike<number>, expected: ArrayLike<number>): Discrepancy {
  if (actual.length !== expected.length) throw new Error(`lengths differ: ${actual.length} vs ${expected.length}`);
  let maxAbs = 0;
  let diff = 0;
  let norm = 0;
  for (let i = 0; i < expected.length; i++) {
    const d = actual[i]! - expected[i]!;
    maxAbs = Math.max(maxAbs, Math.abs(d));
    diff += d * d;
    norm += expected[i]! * expected[i]!;
  }
  return { maxAbs, relL2: Math.sqrt(diff / norm) };
}

/** The figures in words for an assertion message. */
export function describeDiscrepancy({ maxAbs, relL2 }: Discrepancy): string {
  return `max abs ${maxAbs.toExponential(2)}, rel L2 ${relL2.toExponential(2)}`;
}

/** Root mean square of the values. */
export function rms(values: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += values[i]! * values[i]!;
  return Math.sqrt(sum / values.length);
}
