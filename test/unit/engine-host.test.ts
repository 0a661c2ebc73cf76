import { after, before, describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { builtinEngineSpecs } from '../../server/engines/builtin.ts';
import { EngineRegistry, type EngineRegistryOptions } from '../../server/engines/registry.ts';
import { EngineError, type EngineProgress, type EngineRequest, type EngineSpec } from '../../server/engines/types.ts';
import type { ComposeEngineOptions } from '../helpers/engines/compose-engine.ts';

const COMPOSE = fileURLToPath(new URL('../helpers/engines/compose-engine.ts', import.meta.url));
const GATED = fileURLToPath(new URL('../helpers/engines/gated-engine.ts', import.meta.url));
// Generous: the whole suite shares two cores with the rest of the test run.
const TEST_TIMEOUT_MS = 180_000;
const SELFIE = { width: 240, height: 320 };

let dir: string;
let request: EngineRequest;

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'fittingroom-engines-'));
  const selfiePath = path.join(dir, 'selfie.png');
  const itemPath = path.join(dir, 'item.png');
  await sharp({ create: { ...SELFIE, channels: 3, background: '#c0a080' } })
    .png()
    .toFile(selfiePath);
  await sharp({ create: { width: 100, height: 120, channels: 4, background: '#2040c0' } })
    .png()
    .toFile(itemPath);
  request = {
    genId: 'gen_test',
    selfie: { path: selfiePath, format: 'png', ...SELFIE },
    items: [{ path: itemPath, format: 'png', width: 100, height: 120 }],
    categories: ['top'],
    size: 'M',
    personSize: 'M',
    fit: 'regular',
    styling: [],
    workDir: dir,
  };
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

function compose(options: ComposeEngineOptions = {}, concurrency?: number): EngineSpec {
  return concurrency === undefined ? { module: COMPOSE, options } : { module: COMPOSE, options, concurrency };
}

/** Starts a registry that is stopped when the test ends; logs are collected, not printed. */
async function startRegistry(
  t: TestContext,
  specs: EngineSpec[],
  options: EngineRegistryOptions = {},
): Promise<{ registry: EngineRegistry; logs: string[] }> {
  const logs: string[] = [];
  const registry = new EngineRegistry(specs, { log: (message) => logs.push(message), ...options });
  t.after(() => registry.stop());
  await registry.start();
  return { registry, logs };
}

/** A promise with its resolve function (Promise.withResolvers is Node 22). */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = (): void => undefined;
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

function marker(name: string): string {
  return path.join(dir, `${name}-${Math.random().toString(36).slice(2)}`);
}

async function assertPng(image: Uint8Array): Promise<void> {
  const metadata = await sharp(image).metadata();
  assert.equal(metadata.format, 'png');
  assert.equal(metadata.width, SELFIE.width);
  assert.equal(metadata.height, SELFIE.height);
}

async function assertNextRunWorks(registry: EngineRegistry, id: string): Promise<void> {
  const result = await registry.run(id, request, { timeoutMs: 10_000 });
  await assertPng(result.image);
}

function isEngineError(code: string, message?: RegExp) {
  return (error: unknown): boolean => {
    assert.ok(error instanceof EngineError, `expected an EngineError, got ${String(error)}`);
    assert.equal(error.code, code);
    if (message) assert.match(error.message, message);
    return true;
  };
}

function isAbortError(error: unknown): boolean {
  assert.ok(error instanceof Error);
  assert.equal(error.name, 'AbortError');
  return true;
}

describe('engine registry', { timeout: TEST_TIMEOUT_MS }, () => {
  test('lists the built-in engines honestly: FASHN VTON is not ready without its weights, and says why', async (t) => {
    const { registry } = await startRegistry(t, builtinEngineSpecs());
    const fashn = registry.get('fashn-vton');
    assert.ok(fashn, 'the photorealistic engine is listed');
    if (!fashn.ready) {
      assert.match(fashn.reason ?? '', /model\.safetensors is missing.*huggingface\.co\/fashn-ai\/fashn-vton-1\.5/);
      assert.notEqual(registry.defaultEngine()?.id, 'fashn-vton');
      await assert.rejects(registry.run('fashn-vton', request), isEngineError('engine_unavailable'));
    }
    await assert.rejects(registry.run('no-such-engine', request), isEngineError('engine_unavailable'));
  });

  test('lists a ready engine with its description', async (t) => {
    const { registry } = await startRegistry(t, [compose({ id: 'a', device: 'gpu:0' })]);
    const [description] = registry.list();
    assert.equal(description?.id, 'a');
    assert.equal(description?.ready, true);
    assert.equal(description?.license, 'test-only');
    assert.deepEqual(description?.honors, ['size']);
    assert.equal(registry.defaultEngine()?.id, 'a');
    assert.equal(registry.get('a'), description);
    assert.equal(registry.deviceOf('a'), 'gpu:0');
  });

  test('the default engine is a ready one on an accelerator, else the first ready one', async (t) => {
    const { registry } = await startRegistry(t, [
      compose({ id: 'fast', device: 'cpu' }),
      compose({ id: 'photo', device: 'cuda:0' }),
      compose({ id: 'elsewhere', device: 'other' }),
    ]);
    assert.equal(registry.defaultEngine()?.id, 'photo');
    const cpuOnly = await startRegistry(t, [compose({ id: 'first', device: 'cpu' }), compose({ id: 'second', device: 'cpu' })]);
    assert.equal(cpuOnly.registry.defaultEngine()?.id, 'first');
  });

  test('runs a job and returns a PNG the size of the selfie', async (t) => {
    const { registry } = await startRegistry(t, [compose()]);
    const result = await registry.run('test-compose', request);
    assert.equal(result.format, 'png');
    await assertPng(result.image);
  });

  test('reports progress in stage order with non-decreasing progress', async (t) => {
    const { registry } = await startRegistry(t, [compose({ delayMs: 200 })]);
    const events: EngineProgress[] = [];
    await registry.run('test-compose', request, { onProgress: (event) => events.push(event) });
    const order = ['preprocessing', 'generating', 'finishing'];
    assert.deepEqual([...new Set(events.map((event) => event.stage))], order);
    for (let i = 1; i < events.length; i++) {
      assert.ok(order.indexOf(events[i]!.stage) >= order.indexOf(events[i - 1]!.stage));
      assert.ok(events[i]!.progress >= events[i - 1]!.progress);
    }
    assert.equal(events.at(-1)?.progress, 1);
  });

  test('passes an engine error code through', async (t) => {
    const { registry } = await startRegistry(t, [compose({ fail: 'no_person_detected' })]);
    await assert.rejects(registry.run('test-compose', request), isEngineError('no_person_detected'));
  });

  for (const kind of ['exit', 'abort'] as const) {
    test(`a crash (${kind}) fails the job and the next job works`, async (t) => {
      const { registry } = await startRegistry(t, [compose({ crash: kind, crashUntilMarker: marker(kind) })]);
      const expected = kind === 'abort' ? /signal SIGABRT/ : /exit code 3/;
      await assert.rejects(registry.run('test-compose', request), (error) => {
        isEngineError('engine_failed', expected)(error);
        assert.equal((error as EngineError).retryable, false);
        return true;
      });
      await assertNextRunWorks(registry, 'test-compose');
    });
  }

  test('a hang times out and the next job works', async (t) => {
    const { registry } = await startRegistry(t, [compose({ hang: true, untilMarker: marker('hang') })]);
    const started = Date.now();
    await assert.rejects(registry.run('test-compose', request, { timeoutMs: 500 }), isEngineError('timeout'));
    assert.ok(Date.now() - started < 3_000);
    await assertNextRunWorks(registry, 'test-compose');
  });

  test('a memory blow-up kills the engine and the next job works', async (t) => {
    const spec = compose({ allocateMb: 600, delayMs: 3_000, untilMarker: marker('memory') });
    const { registry } = await startRegistry(t, [spec], { memoryLimitMb: 300 });
    const outOfMemory = isEngineError('engine_failed', /more than 300 MB of memory/);
    await assert.rejects(registry.run('test-compose', request), outOfMemory);
    await assertNextRunWorks(registry, 'test-compose');
  });

  test('cancel stops the job quickly and the next job works', async (t) => {
    const { registry } = await startRegistry(t, [compose({ delayMs: 2_000 })]);
    const controller = new AbortController();
    let cancelledAt = 0;
    const run = registry.run('test-compose', request, {
      signal: controller.signal,
      onProgress: ({ stage }) => {
        if (stage === 'generating' && !cancelledAt) {
          cancelledAt = Date.now();
          controller.abort();
        }
      },
    });
    await assert.rejects(run, isAbortError);
    assert.ok(Date.now() - cancelledAt < 1_000, 'the engine honoured the cancel without being killed');
    await assertNextRunWorks(registry, 'test-compose');
  });

  test('cancel kills an engine that ignores it, after the grace period', async (t) => {
    const spec = compose({ hang: true, untilMarker: marker('cancel-hang') });
    const { registry } = await startRegistry(t, [spec], { cancelGraceMs: 300 });
    const controller = new AbortController();
    let cancelledAt = 0;
    const run = registry.run('test-compose', request, {
      signal: controller.signal,
      onProgress: ({ stage, progress }) => {
        // The engine hangs right after reporting the middle generating step.
        if (stage === 'generating' && progress > 0.5 && !cancelledAt) {
          cancelledAt = Date.now();
          controller.abort();
        }
      },
    });
    await assert.rejects(run, isAbortError);
    assert.ok(Date.now() - cancelledAt >= 250, 'the run settled only when the grace period ran out');
    await assertNextRunWorks(registry, 'test-compose');
  });

  test('engines that cannot load are listed as not ready; the others still work', async (t) => {
    const { registry, logs } = await startRegistry(t, [
      { module: path.join(dir, 'missing-engine.ts'), options: { id: 'missing' } },
      compose({ id: 'broken', failLoad: true }),
      compose({ id: 'good' }),
    ]);
    const [missing, broken, good] = registry.list();
    assert.equal(missing?.id, 'missing');
    assert.equal(missing?.ready, false);
    assert.match(missing?.reason ?? '', /could not be loaded/);
    assert.equal(broken?.id, 'broken');
    assert.equal(broken?.ready, false);
    assert.match(broken?.reason ?? '', /fail loading/);
    assert.equal(good?.ready, true);
    assert.equal(registry.defaultEngine()?.id, 'good');
    assert.equal(logs.length, 2);
    await assert.rejects(registry.run('broken', request), isEngineError('engine_unavailable'));
    await assertNextRunWorks(registry, 'good');
  });

  test('an engine that does not load in time is not ready', async (t) => {
    const { registry } = await startRegistry(t, [compose()], { initTimeoutMs: 1 });
    const [description] = registry.list();
    assert.equal(description?.id, 'compose-engine');
    assert.equal(description?.ready, false);
    assert.match(description?.reason ?? '', /did not load within 1 ms/);
  });

  test("a spec's own load limit wins over the host's: a slow load succeeds with a longer one", async (t) => {
    const slow: EngineSpec = { ...compose({ loadDelayMs: 1_500 }), loadTimeoutMs: TEST_TIMEOUT_MS };
    const { registry } = await startRegistry(t, [slow], { initTimeoutMs: 1 });
    const [description] = registry.list();
    assert.equal(description?.ready, true, description?.reason);
    await assertNextRunWorks(registry, 'test-compose');
  });

  test('a slow load fails clearly when its own limit is short', async (t) => {
    const slow: EngineSpec = { ...compose({ loadDelayMs: TEST_TIMEOUT_MS }), loadTimeoutMs: 300 };
    const { registry } = await startRegistry(t, [slow], { initTimeoutMs: TEST_TIMEOUT_MS });
    const [description] = registry.list();
    assert.equal(description?.ready, false);
    assert.match(description?.reason ?? '', /did not load within 300 ms/);
    await assert.rejects(registry.run('compose-engine', request), isEngineError('engine_unavailable'));
  });

  test('the FASHN engine may take 15 minutes to load (its first start builds the model)', () => {
    const fashn = builtinEngineSpecs().find((spec) => spec.module.endsWith(path.join('fashn', 'engine.ts')));
    assert.equal(fashn?.loadTimeoutMs, 15 * 60_000);
  });

  test('warp runs up to one process per core with one ONNX Runtime thread each; FASHN runs one', () => {
    const [warp, fashn] = builtinEngineSpecs();
    assert.ok(warp?.module.endsWith(path.join('warp', 'engine.ts')));
    assert.equal(warp?.concurrency, availableParallelism());
    assert.deepEqual(warp?.options, { threads: 1 });
    assert.equal(fashn?.concurrency, 1);
  });

  test('keeps the first of two engines with the same id', async (t) => {
    const { registry, logs } = await startRegistry(t, [compose({ device: 'cpu' }), compose({ device: 'gpu:0' })]);
    assert.equal(registry.list().length, 1);
    assert.equal(registry.deviceOf('test-compose'), 'cpu');
    assert.match(logs.join('\n'), /also describes engine "test-compose"/);
  });

  test('runs jobs in parallel up to the engine concurrency', async (t) => {
    // The gated engine holds each run at `generating` until the gate file exists, so no run can finish (and free its
    // host) before the test has seen two of them held at once: no timer races the second child's start.
    const gate = marker('gate');
    const { registry } = await startRegistry(t, [{ module: GATED, options: { gate }, concurrency: 2 }]);
    const events: string[] = [];
    const held = [0, 1, 2].map(() => deferred());
    const runs = [0, 1, 2].map((index) =>
      registry
        .run('test-gated', request, {
          onProgress: ({ stage }) => {
            if (stage !== 'generating' || events.includes(`held ${index}`)) return;
            events.push(`held ${index}`);
            held[index]!.resolve();
          },
        })
        .then((result) => {
          events.push(`done ${index}`);
          return result;
        }),
    );
    await Promise.race([Promise.all([held[0]!.promise, held[1]!.promise]), held[2]!.promise]);
    assert.deepEqual([...events].sort(), ['held 0', 'held 1'], 'the first two jobs run at once; the third waits for a host');
    await writeFile(gate, '');
    for (const result of await Promise.all(runs)) await assertPng(result.image);
    assert.ok(events.indexOf('held 2') > events.findIndex((event) => event.startsWith('done')), events.join(', '));
  });
});
