import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resolve } from 'node:path';
import { loadConfig } from '../../server/config.ts';

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
