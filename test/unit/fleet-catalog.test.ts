/** The engines of a shared database's shop: ready where a live worker runs them, described by this process. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { EngineDescription } from '../../server/engines/types.ts';
import type { EngineCatalog } from '../../server/jobs/runner.ts';
import { FleetCatalog, type FleetWorker } from '../../server/state/fleet.ts';

function description(id: string, device: string, ready: boolean, reason?: string): EngineDescription {
  return {
    id,
    name: `The ${id} engine`,
    ready,
    ...(reason ? { reason } : {}),
    device,
    license: 'MIT',
    resolution: { width: 768, height: 1024 },
    honors: [],
    typicalSeconds: 1,
  };
}

function localCatalog(engines: EngineDescription[]): EngineCatalog {
  return {
    list: () => engines,
    get: (id) => engines.find((engine) => engine.id === id),
    defaultEngine: () => engines.find((engine) => engine.ready),
    deviceOf: (id) => engines.find((engine) => engine.id === id)?.device,
    concurrencyOf: () => 1,
    run: () => Promise.reject(new Error('not in this test')),
  };
}

function worker(id: string, engines: string[], device: string, running = 0): FleetWorker {
  return { id, host: `host-${id}`, engines, device, running, seenAt: '2026-11-25T10:00:00.000Z' };
}

test('an engine is ready when a worker of the fleet runs it, not because this process has it installed', async () => {
  let workers: FleetWorker[] = [];
  const local = localCatalog([description('warp', 'cpu', true), description('fashn', 'cpu', false, 'the model files are missing')]);
  const catalog = new FleetCatalog(local, { fleet: async () => workers, refreshMs: 60_000, log: () => {} });
  await catalog.start();
  try {
    assert.deepEqual(
      catalog.list().map((engine) => [engine.id, engine.ready]),
      [
        ['warp', false],
        ['fashn', false],
      ],
    );
    assert.equal(catalog.get('fashn')!.reason, 'the model files are missing');
    assert.equal(catalog.defaultEngine(), undefined);

    workers = [worker('wrk_1', ['warp'], 'cpu', 1), worker('wrk_2', ['fashn', 'warp'], 'cuda:0'), worker('wrk_3', ['sleepy'], 'cpu')];
    await catalog.refresh();
    const fashn = catalog.get('fashn')!;
    assert.equal(fashn.ready, true);
    assert.equal(fashn.reason, undefined);
    assert.equal(fashn.device, 'cuda:0');
    assert.equal(fashn.name, 'The fashn engine', 'described by this process');
    assert.deepEqual(
      catalog.get('warp')!.workers.map((w) => [w.id, w.device, w.running]),
      [
        ['wrk_1', 'cpu', 1],
        ['wrk_2', 'cuda:0', 0],
      ],
    );
    assert.equal(catalog.get('warp')!.device, 'cpu, cuda:0');
    assert.equal(catalog.get('sleepy')!.ready, true, 'an engine only other machines have is listed');
    assert.equal(catalog.defaultEngine()!.id, 'fashn', 'an engine on an accelerator is preferred');
  } finally {
    catalog.stop();
  }
});

test('a failed reading of the fleet keeps the last one and is logged', async () => {
  let fail = false;
  const logged: string[] = [];
  const catalog = new FleetCatalog(localCatalog([description('warp', 'cpu', true)]), {
    fleet: async () => {
      if (fail) throw new Error('connection refused');
      return [worker('wrk_1', ['warp'], 'cpu')];
    },
    refreshMs: 60_000,
    log: (message) => logged.push(message),
  });
  await catalog.start();
  fail = true;
  await catalog.refresh();
  catalog.stop();
  assert.equal(catalog.get('warp')!.ready, true);
  assert.equal(logged.length, 1);
});
