/**
 * Messages between an EngineHost (parent) and its engine host process
 * (child), sent over the IPC channel with 'advanced' serialization so that
 * result images travel as binary, not JSON.
 */
import { GENERATION_ERROR_CODES, isOneOf } from '../kernel/vocabulary.ts';
import type { EngineDescription, EngineRequest, EngineSpec, EngineStage, GenerationErrorCode, ImageFormat, StageTiming } from './types.ts';

/** Parent → child. */
export type HostCommand =
  { type: 'init'; spec: EngineSpec } | { type: 'run'; jobId: string; request: EngineRequest } | { type: 'cancel'; jobId: string };

/** Child → parent. */
export type HostEvent =
  | { type: 'ready'; description: EngineDescription }
  /** `description` is present when the engine could describe itself before failing. */
  | { type: 'init-failed'; message: string; description?: EngineDescription }
  | { type: 'progress'; jobId: string; stage: EngineStage; progress: number }
  | { type: 'result'; jobId: string; image: Uint8Array; format: ImageFormat; stages?: StageTiming[] }
  | { type: 'error'; jobId: string; code: GenerationErrorCode; message: string; retryable: boolean }
  /** Resident memory in bytes, for platforms where the parent cannot read it itself. */
  | { type: 'heartbeat'; rss: number };

/** Whether a value is one of the generation error codes engines may report. */
export function isGenerationErrorCode(value: unknown): value is GenerationErrorCode {
  return isOneOf(value, GENERATION_ERROR_CODES);
}
