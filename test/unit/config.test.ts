import assert from 'node:assert/strict';
import { test } from 'node:test';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { defaultConfig, defaultEngineWorkers, loadConfig } from '../../server/config.ts';

test('defaults: 127.0.0.1:8787 and a per-user data directory', () => {
  const config = loadConfig([], {});
  assert.equal(config.host, '127.0.0.1');
  assert.equal(config.port, 8787);
  assert.match(config.dataDir, /fittingroom$/);
  assert.equal(config.trialCredits, 25);
});

test('flags override the environment, which overrides the defaults', () => {
  const config = loadConfig(['--port', '9000', '--data-dir=./x', '--erase-inputs', 'true'], {
    FITTINGROOM_PORT: '1234',
    FITTINGROOM_TRIAL_CREDITS: '5',
  });
  assert.equal(config.port, 9000);
  assert.equal(config.dataDir, resolve('./x'));
  assert.equal(config.trialCredits, 5);
  assert.equal(config.eraseInputsWhenDone, true);
});

test('bad flags are refused with a message naming them', () => {
  assert.throws(() => loadConfig(['--prot', '1']), /unknown option --prot/);
  assert.throws(() => loadConfig(['--port']), /--port needs a value/);
  assert.throws(() => loadConfig(['--port', 'abc']), /--port must be/);
  assert.throws(() => loadConfig(['--port', '70000']), /--port must be/);
  assert.throws(() => loadConfig(['--erase-inputs', 'yes']), /true or false/);
  assert.throws(() => loadConfig(['serve']), /unexpected argument/);
});

test('engine workers: one per core by default (memory allowing), set by flag or environment, and the CPU limit', () => {
  const defaults = loadConfig([], {});
  assert.equal(defaults.engineWorkers, defaultEngineWorkers());
  assert.ok(defaults.engineWorkers >= 1 && defaults.engineWorkers <= availableParallelism());
  assert.equal(defaults.deviceConcurrency.cpu, defaults.engineWorkers);

  const fromEnv = loadConfig([], { FITTINGROOM_ENGINE_WORKERS: '3' });
  assert.equal(fromEnv.engineWorkers, 3);
  assert.equal(fromEnv.deviceConcurrency.cpu, 3);
  const fromFlag = loadConfig(['--engine-workers', '1'], { FITTINGROOM_ENGINE_WORKERS: '3' });
  assert.equal(fromFlag.engineWorkers, 1);
  assert.equal(fromFlag.deviceConcurrency.cpu, 1);

  assert.throws(() => loadConfig(['--engine-workers', '0']), /--engine-workers .*at least 1/);
  assert.throws(() => loadConfig(['--engine-workers', '1.5']), /--engine-workers .*whole number/);
  assert.throws(() => loadConfig([], { FITTINGROOM_ENGINE_WORKERS: 'many' }), /FITTINGROOM_ENGINE_WORKERS must be/);
});

test('defaultConfig: the CPU limit follows engineWorkers; other devices can be added', () => {
  assert.deepEqual(defaultConfig({ engineWorkers: 2 }).deviceConcurrency, { cpu: 2 });
  assert.deepEqual(defaultConfig({ engineWorkers: 2, deviceConcurrency: { cuda: 1 } }).deviceConcurrency, { cpu: 2, cuda: 1 });
});
