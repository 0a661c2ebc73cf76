/**
 * The engine host process: loads one engine module and runs its jobs on
 * behalf of an EngineHost in the server process. Started with
 * `child_process.fork`; speaks the protocol in host-protocol.ts. A crash here
 * fails the current generation, never the server.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { isGenerationErrorCode, type HostCommand, type HostEvent } from './host-protocol.ts';
import type { Engine, EngineDescription, EngineRequest, EngineSpec } from './types.ts';

const HEARTBEAT_MS = 250;
const MAX_MESSAGE_CHARS = 500;

let engine: Engine | undefined;
const running = new Map<string, AbortController>();

function send(event: HostEvent): void {
  if (!process.connected || !process.send) return;
  process.send(event, undefined, {}, () => {
    // The parent is gone or the message could not be sent; the disconnect handler exits.
  });
}

function messageOf(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.length > MAX_MESSAGE_CHARS ? `${text.slice(0, MAX_MESSAGE_CHARS)}…` : text;
}

async function init(spec: EngineSpec): Promise<void> {
  let description: EngineDescription | undefined;
  try {
    const moduleUrl = pathToFileURL(path.resolve(spec.module)).href;
    const loaded = (await import(moduleUrl)) as { createEngine?: unknown };
    if (typeof loaded.createEngine !== 'function') {
      throw new Error(`${spec.module} does not export createEngine()`);
    }
    const created = (await loaded.createEngine(spec.options)) as Engine;
    description = created.describe();
    // An engine that already knows it cannot run (missing weights, no device) is not loaded.
    if (description.ready) await created.load();
    engine = created;
    // Described again after loading: an engine learns its device and speed while it loads.
    send({ type: 'ready', description: created.describe() });
  } catch (error) {
    const message = `the engine could not be loaded: ${messageOf(error)}`;
    send(description ? { type: 'init-failed', message, description } : { type: 'init-failed', message });
  }
}

async function run(jobId: string, request: EngineRequest): Promise<void> {
  const controller = new AbortController();
  running.set(jobId, controller);
  try {
    if (!engine) throw new Error('run before a successful init');
    const result = await engine.run(request, {
      signal: controller.signal,
      onProgress: ({ stage, progress }) => send({ type: 'progress', jobId, stage, progress }),
    });
    send({ type: 'result', jobId, image: result.image, format: result.format, ...(result.stages ? { stages: result.stages } : {}) });
  } catch (error) {
    // A cancelled job rejects however the engine likes; the parent reports the cancel itself.
    send(
      controller.signal.aborted
        ? { type: 'error', jobId, code: 'engine_failed', message: 'cancelled', retryable: false }
        : toErrorEvent(jobId, error),
    );
  } finally {
    running.delete(jobId);
  }
}

function toErrorEvent(jobId: string, error: unknown): HostEvent {
  // Duck-typed rather than instanceof: an engine may bundle its own copy of types.ts.
  const candidate = error as { name?: unknown; code?: unknown; retryable?: unknown } | null;
  if (candidate && candidate.name === 'EngineError' && isGenerationErrorCode(candidate.code)) {
    return {
      type: 'error',
      jobId,
      code: candidate.code,
      message: messageOf(error),
      retryable: candidate.retryable === true,
    };
  }
  // Unknown errors may carry paths or internals: log them here, report a safe message.
  console.error(`[engine-host] job ${jobId} failed:`, error);
  return { type: 'error', jobId, code: 'engine_failed', message: 'the engine failed', retryable: false };
}

function handle(command: HostCommand): void {
  switch (command.type) {
    case 'init':
      void init(command.spec);
      break;
    case 'run':
      void run(command.jobId, command.request);
      break;
    case 'cancel':
      running.get(command.jobId)?.abort();
      break;
  }
}

if (!process.send) {
  console.error('engine-child.ts must be started with child_process.fork()');
  process.exit(1);
}

process.on('message', (message) => handle(message as HostCommand));
// The host must never outlive the server: when the parent goes, so do we.
process.on('disconnect', () => process.exit(0));
setInterval(() => send({ type: 'heartbeat', rss: process.memoryUsage.rss() }), HEARTBEAT_MS).unref();
