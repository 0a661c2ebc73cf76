import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { RunStages } from '../../server/engines/stages.ts';
import type { EngineProgress } from '../../server/engines/types.ts';

test('each stage reports its progress as it starts and is timed under its name', async () => {
  const seen: EngineProgress[] = [];
  const stages = new RunStages({ signal: new AbortController().signal, onProgress: (p) => seen.push(p) });
  assert.equal(await stages.run('read photo', 'preprocessing', 0.1, () => 'photo'), 'photo');
  await stages.run('generate', 'generating', 0.5, () => sleep(30));
  assert.deepEqual(seen, [
    { stage: 'preprocessing', progress: 0.1 },
    { stage: 'generating', progress: 0.5 },
  ]);
  assert.deepEqual(
    stages.timings.map((t) => t.name),
    ['read photo', 'generate'],
  );
  assert.ok(stages.timings[1]!.ms >= 25, `the 30 ms stage took ${stages.timings[1]!.ms} ms`);
});

test('a cancel stops the run at the next stage boundary with the signal’s reason, and no later stage starts', async () => {
  const controller = new AbortController();
  const stages = new RunStages({ signal: controller.signal, onProgress: () => undefined });
  const started: string[] = [];
  const run = (async () => {
    await stages.run('first', 'preprocessing', 0, async () => {
      started.push('first');
      controller.abort();
    });
    await stages.run('second', 'generating', 0.5, () => started.push('second'));
  })();
  await assert.rejects(run, (error: Error) => error.name === 'AbortError');
  assert.deepEqual(started, ['first']);
  assert.deepEqual(
    stages.timings.map((t) => t.name),
    ['first'],
    'the stage that was running is still timed',
  );
});

test('a stage that throws is timed and its error passes unchanged', async () => {
  const stages = new RunStages({ signal: new AbortController().signal, onProgress: () => undefined });
  const failure = new Error('no person');
  await assert.rejects(
    stages.run('analyse customer', 'preprocessing', 0.05, () => {
      throw failure;
    }),
    (error) => error === failure,
  );
  assert.equal(stages.timings[0]!.name, 'analyse customer');
});
