/**
 * How many try-ons run at once, seen over HTTP: the runner starts up to the
 * engine workers (its CPU limit) and never more than the engine's own
 * concurrency. The gated test engine holds every run at `generating` until
 * the test opens its gate, so what is observed never depends on timing.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { EngineSpec } from '../../server/engines/types.ts';
import { startTestAppliance, tempDataDir, type TestAppliance } from '../helpers/appliance.ts';
import { submission } from '../helpers/inputs.ts';

const GATED_ENGINE = resolve(import.meta.dirname, '../helpers/engines/gated-engine.ts');
/** Between two looks at the statuses (polling, not synchronisation: every assertion holds whenever it is made). */
const POLL_MS = 50;

interface Status {
  genId: string;
  status: string;
  stage?: string;
  attempts: number;
}

async function gatedEngine(concurrency: number): Promise<{ spec: EngineSpec; open: () => Promise<void> }> {
  const gate = join(await tempDataDir(), 'gate');
  return { spec: { module: GATED_ENGINE, options: { gate }, concurrency }, open: () => writeFile(gate, '') };
}

async function submit(app: TestAppliance, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let k = 0; k < count; k++) {
    const response = await app.call('POST', '/api/v1/try-on', { body: await submission() });
    assert.equal(response.status, 202);
    ids.push(((await response.json()) as { genId: string }).genId);
  }
  return ids;
}

async function statuses(app: TestAppliance, ids: string[]): Promise<Status[]> {
  return Promise.all(ids.map(async (id) => (await (await app.call('GET', `/api/v1/try-on/${id}`)).json()) as Status));
}

/** Polls until `done` holds for the statuses, checking `invariant` on every look; returns the last look. */
async function pollUntil(
  app: TestAppliance,
  ids: string[],
  done: (all: Status[]) => boolean,
  invariant: (all: Status[]) => void = () => undefined,
): Promise<Status[]> {
  for (;;) {
    const all = await statuses(app, ids);
    invariant(all);
    if (done(all)) return all;
    await sleep(POLL_MS);
  }
}

const held = (status: Status): boolean => status.status === 'pending' && status.stage === 'generating';
/** Started: its attempt is recorded (a queued job has none; the runner records it before the engine starts). */
const started = (status: Status): boolean => status.status === 'pending' && status.attempts > 0;
const complete = (all: Status[]): boolean => all.every((status) => status.status === 'complete');

test('with two engine workers, two try-ons run at once and a third waits for one of them', async (t) => {
  const engine = await gatedEngine(2);
  const app = await startTestAppliance(t, { engines: [engine.spec], config: { engineWorkers: 2 } });
  const ids = await submit(app, 3);

  const both = await pollUntil(app, ids, (all) => all.filter(held).length === 2);
  // Nothing finishes while the gate is shut, so the third cannot have had a free worker.
  const waiting = both.filter((status) => !held(status));
  assert.deepEqual(
    waiting.map(({ status, stage, attempts }) => ({ status, stage, attempts })),
    [{ status: 'pending', stage: 'queued', attempts: 0 }],
  );
  assert.equal(waiting[0]!.genId, ids[2], 'jobs start in the order they were submitted');

  await engine.open();
  const finished = await pollUntil(app, ids, complete, (all) => assert.ok(all.filter(started).length <= 2, JSON.stringify(all)));
  assert.deepEqual(
    finished.map((status) => status.attempts),
    [1, 1, 1],
  );
});

for (const { workers, concurrency, why } of [
  { workers: 1, concurrency: 2, why: 'one engine worker' },
  { workers: 2, concurrency: 1, why: 'an engine that runs one at a time' },
]) {
  test(`with ${why}, try-ons run one at a time`, async (t) => {
    const engine = await gatedEngine(concurrency);
    const app = await startTestAppliance(t, { engines: [engine.spec], config: { engineWorkers: workers } });
    const ids = await submit(app, 2);
    const oneAtATime = (all: Status[]): void => assert.ok(all.filter(started).length <= 1, JSON.stringify(all));

    const first = await pollUntil(app, ids, (all) => all.some(held), oneAtATime);
    assert.deepEqual(
      first.map(({ status, stage, attempts }) => ({ status, stage, attempts })),
      [
        { status: 'pending', stage: 'generating', attempts: 1 },
        { status: 'pending', stage: 'queued', attempts: 0 },
      ],
    );

    await engine.open();
    await pollUntil(app, ids, complete, oneAtATime);
  });
}
