/**
 * The contract between the job runner and try-on engines. An engine is a
 * module whose `createEngine(options)` returns an `Engine`; it always runs in
 * an engine host process (see engine-child.ts), never in the HTTP process.
 */

import type { Fit, GarmentCategory, GenerationErrorCode, ImageFormat } from '../kernel/vocabulary.ts';

export type { Fit, GarmentCategory, GenerationErrorCode, ImageFormat };

/** A normalized image on disk (EXIF orientation applied, metadata stripped). */
export interface ImageRef {
  path: string;
  format: ImageFormat;
  width: number;
  height: number;
}

/** Everything an engine needs for one try-on. Paths are absolute. */
export interface EngineRequest {
  genId: string;
  selfie: ImageRef;
  items: ImageRef[];
  categories: GarmentCategory[];
  size: string;
  personSize: string;
  fit: Fit;
  occasion?: string;
  styling: string[];
  seed?: number;
  /**
   * The format the client asked for: an engine that can encodes its result in it, once (see encode.ts); the
   * runner converts any other.
   */
  outputFormat?: ImageFormat;
  /** A scratch directory the engine may write to; removed after the run. */
  workDir: string;
}

/** An encoded result image; the runner converts it to the requested format. */
export interface EngineResult {
  image: Uint8Array;
  format: ImageFormat;
  /** How long each named stage of the run took (see stages.ts), for benchmarks and the log. */
  stages?: StageTiming[];
}

/** One named stage of a run and its wall time. */
export interface StageTiming {
  name: string;
  ms: number;
}

export type EngineStage = 'preprocessing' | 'generating' | 'finishing';

export interface EngineProgress {
  stage: EngineStage;
  /** 0..1 within the whole run. */
  progress: number;
}

export interface EngineRunOptions {
  signal: AbortSignal;
  onProgress: (progress: EngineProgress) => void;
}

/** What GET /api/v1/engines shows for one engine. */
export interface EngineDescription {
  id: string;
  name: string;
  ready: boolean;
  /** Why the engine is not ready, in words for an operator. */
  reason?: string;
  device: string;
  license: string;
  resolution: { width: number; height: number };
  honors: string[];
  typicalSeconds: number;
  /** What a picture from this engine is, in words for the staff and the customer looking at it. */
  about?: string;
}

/** Thrown by an engine (or the host) to fail a generation with a typed code. */
export class EngineError extends Error {
  readonly code: GenerationErrorCode;
  /** Whether another attempt could succeed (a crash may; a headless photo will not). */
  readonly retryable: boolean;

  constructor(code: GenerationErrorCode, message: string, retryable = false) {
    super(message);
    this.name = 'EngineError';
    this.code = code;
    this.retryable = retryable;
  }
}

/** A try-on engine. */
export interface Engine {
  readonly id: string;
  describe(): EngineDescription;
  /** Loads models and sessions once; called before the first run. */
  load(): Promise<void>;
  run(request: EngineRequest, options: EngineRunOptions): Promise<EngineResult>;
  dispose?(): Promise<void>;
}

/** What an engine module exports. */
export type CreateEngine = (options: unknown) => Engine | Promise<Engine>;

/** How the appliance finds an engine: a module path (absolute) and its options. */
export interface EngineSpec {
  module: string;
  options?: unknown;
  /** Jobs this engine may run at once (default: the device's concurrency, 1). */
  concurrency?: number;
  /** How long spawn + import + load may take for this engine (default: the host's initTimeoutMs, 60 s). */
  loadTimeoutMs?: number;
}
