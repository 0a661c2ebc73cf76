/**
 * The vision models: where their sources are (inside pinned npm packages,
 * per models/manifest.json), and ONNX files made from them under models/:
 * a TFLite source is converted, an ONNX source is copied as it is. A file
 * is made once and reused while its sidecar (`<file>.json`) records the same
 * source sha256, converter version and weight precision and the file still
 * hashes as recorded; otherwise it is made again. Files are written
 * atomically. Nothing is downloaded.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, open, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { writeFileDurably } from '../kernel/durable-fs.ts';
import { CONVERTER_VERSION, convertTflite } from './tflite-to-onnx/convert.ts';
import type { WeightPrecision } from './tflite-to-onnx/graph-builder.ts';

/** The repository's models/ directory (manifest and converted files). */
export const MODELS_DIR = join(import.meta.dirname, '..', '..', 'models');

export interface TensorSpec {
  name: string;
  shape: number[];
}

/** One entry of models/manifest.json. */
export interface ModelEntry {
  id: string;
  purpose: string;
  license: string;
  source: {
    package: string;
    version: string;
    path: string;
    /** [start, end) inside the file, when the model is part of a bigger file. */
    byteRange?: [number, number];
    sha256: string;
    /** tflite: converted to ONNX by tflite-to-onnx/; onnx: used as it is. */
    format: 'tflite' | 'onnx';
  };
  onnx: { file: string; inputs: TensorSpec[]; outputs: TensorSpec[] };
}

export interface Manifest {
  version: number;
  models: ModelEntry[];
}

/** What a converted model's sidecar records. */
interface Sidecar {
  sourceSha256: string;
  converterVersion: number;
  weights: WeightPrecision;
  onnxSha256: string;
  bytes: number;
  convertedAt: string;
  conversionMs: number;
}

export interface EnsureOptions {
  /** Where the manifest is and converted files go (default MODELS_DIR). */
  dir?: string;
  /** Where converted files go, if not beside the manifest. */
  outDir?: string;
  /** Only these models (default all). */
  ids?: string[];
  weights?: WeightPrecision;
  log?: (message: string) => void;
}

/** A converted model ready to load. */
export interface ReadyModel {
  entry: ModelEntry;
  path: string;
  /** Whether this call converted it (false: the cached file was good). */
  converted: boolean;
  conversionMs: number;
  bytes: number;
}

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');
const require = createRequire(import.meta.url);

/** Reads models/manifest.json. */
export async function readManifest(dir = MODELS_DIR): Promise<Manifest> {
  return JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')) as Manifest;
}

/** The source bytes of a model from its installed package, checked against the manifest (version and sha256). */
export async function readSource(entry: ModelEntry): Promise<Uint8Array> {
  const { package: pkg, version, path, byteRange, sha256: expected } = entry.source;
  const packageJson = packageJsonPath(pkg);
  if (!packageJson) throw new Error(`model ${entry.id}: package ${pkg} is not installed (run npm ci)`);
  const installed = (JSON.parse(await readFile(packageJson, 'utf8')) as { version: string }).version;
  if (installed !== version) throw new Error(`model ${entry.id}: ${pkg} is ${installed}, the manifest pins ${version}`);
  const file = join(dirname(packageJson), path);
  let bytes: Uint8Array;
  if (byteRange) {
    const [start, end] = byteRange;
    const handle = await open(file, 'r');
    try {
      bytes = new Uint8Array(end - start);
      const { bytesRead } = await handle.read(bytes, 0, bytes.length, start);
      if (bytesRead !== bytes.length) throw new Error(`model ${entry.id}: ${file} is shorter than byte ${end}`);
    } finally {
      await handle.close();
    }
  } else {
    bytes = new Uint8Array(await readFile(file));
  }
  const actual = sha256(bytes);
  if (actual !== expected) throw new Error(`model ${entry.id}: ${file} has sha256 ${actual}, the manifest expects ${expected}`);
  return bytes;
}

/** Where an installed package's package.json is, also for packages whose `exports` do not list it; null if none. */
function packageJsonPath(pkg: string): string | null {
  try {
    return require.resolve(`${pkg}/package.json`);
  } catch {
    for (const dir of require.resolve.paths(pkg) ?? []) {
      const candidate = join(dir, pkg, 'package.json');
      if (existsSync(candidate)) return candidate;
    }
    return null;
  }
}

async function cached(path: string, entry: ModelEntry, weights: WeightPrecision): Promise<Sidecar | null> {
  try {
    const sidecar = JSON.parse(await readFile(`${path}.json`, 'utf8')) as Sidecar;
    if (sidecar.sourceSha256 !== entry.source.sha256) return null;
    // A copied ONNX file does not depend on the converter or on the precision asked for.
    if (entry.source.format === 'tflite' && (sidecar.converterVersion !== CONVERTER_VERSION || sidecar.weights !== weights)) return null;
    return sha256(await readFile(path)) === sidecar.onnxSha256 ? sidecar : null;
  } catch {
    return null;
  }
}

const inFlight = new Map<string, Promise<ReadyModel>>();

async function ensureOne(entry: ModelEntry, outDir: string, weights: WeightPrecision, log: (m: string) => void): Promise<ReadyModel> {
  const path = join(outDir, entry.onnx.file);
  const hit = await cached(path, entry, weights);
  if (hit) return { entry, path, converted: false, conversionMs: hit.conversionMs, bytes: hit.bytes };
  const source = await readSource(entry);
  const started = performance.now();
  const onnx = entry.source.format === 'onnx' ? source : convert(entry, source, weights);
  const conversionMs = Math.round(performance.now() - started);
  await mkdir(outDir, { recursive: true });
  await writeFileDurably(path, onnx);
  const sidecar: Sidecar = {
    sourceSha256: entry.source.sha256,
    converterVersion: CONVERTER_VERSION,
    // A copied ONNX file keeps its own precision (U²-Netp's is float32).
    weights: entry.source.format === 'onnx' ? 'float32' : weights,
    onnxSha256: sha256(onnx),
    bytes: onnx.byteLength,
    convertedAt: new Date().toISOString(),
    conversionMs,
  };
  await writeFileDurably(`${path}.json`, `${JSON.stringify(sidecar, null, 2)}\n`);
  const verb = entry.source.format === 'onnx' ? 'copied' : 'converted';
  log(`${verb} ${entry.id} (${entry.source.package}@${entry.source.version}) to ${path}: ${onnx.byteLength} bytes in ${conversionMs} ms`);
  return { entry, path, converted: true, conversionMs, bytes: onnx.byteLength };
}

/** A TFLite source converted to ONNX, checked against the manifest's inputs and outputs. */
function convert(entry: ModelEntry, source: Uint8Array, weights: WeightPrecision): Uint8Array {
  const { onnx, inputs, outputs } = convertTflite(source, { name: entry.id, weights });
  const contract = (specs: TensorSpec[]): string => JSON.stringify(specs.map((s) => [s.name, s.shape]));
  if (contract(inputs.map((v) => ({ name: v.name, shape: v.dims }))) !== contract(entry.onnx.inputs))
    throw new Error(`model ${entry.id}: converted inputs differ from the manifest`);
  if (contract(outputs.map((v) => ({ name: v.name, shape: v.dims }))) !== contract(entry.onnx.outputs))
    throw new Error(`model ${entry.id}: converted outputs differ from the manifest`);
  return onnx;
}

/** Makes sure the converted models exist and are current; converts those that are not. */
export async function ensureVisionModels(options: EnsureOptions = {}): Promise<ReadyModel[]> {
  const dir = options.dir ?? MODELS_DIR;
  const outDir = options.outDir ?? dir;
  const weights = options.weights ?? 'float16';
  const log = options.log ?? (() => {});
  const manifest = await readManifest(dir);
  const entries = options.ids ? options.ids.map((id) => findEntry(manifest, id)) : manifest.models;
  const ready: ReadyModel[] = [];
  for (const entry of entries) {
    const key = `${outDir}\0${entry.onnx.file}\0${weights}`;
    let pending = inFlight.get(key);
    if (!pending) {
      pending = ensureOne(entry, outDir, weights, log).finally(() => inFlight.delete(key));
      inFlight.set(key, pending);
    }
    ready.push(await pending);
  }
  return ready;
}

/** The path of one converted model, converting it first if needed (the lazy path for loaders). */
export async function visionModelPath(id: string, options: Omit<EnsureOptions, 'ids'> = {}): Promise<string> {
  const [model] = await ensureVisionModels({ ...options, ids: [id] });
  return model!.path;
}

function findEntry(manifest: Manifest, id: string): ModelEntry {
  const entry = manifest.models.find((m) => m.id === id);
  if (!entry) throw new Error(`no model ${id} in the manifest`);
  return entry;
}
