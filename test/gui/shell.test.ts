/**
 * The Electron shell as far as it can be checked without Electron's binary:
 * its settings, that main/ bundles with the security settings written out,
 * and that `npm start` falls back to the headless appliance with a clear
 * message and a working GUI address.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { test } from 'node:test';
import { readSettings } from '../../main/settings.ts';
import { buildShell, SHELL_OUT } from '../../scripts/build-shell.ts';
import { electronStatus } from '../../scripts/start.ts';
import { tempDataDir } from '../helpers/appliance.ts';

const ROOT = resolve(import.meta.dirname, '../..');

test('the shell reads kiosk mode and the update feed, and passes every other flag to the server', () => {
  const settings = readSettings(['--kiosk', '--port', '9000', '--data-dir=/srv/fr', '--update-feed', 'https://updates.example/fr'], {});
  assert.deepEqual(settings, {
    kiosk: true,
    updateFeedUrl: 'https://updates.example/fr',
    serverArgs: ['--port', '9000', '--data-dir=/srv/fr'],
  });
  assert.deepEqual(readSettings([], {}), { kiosk: false, updateFeedUrl: null, serverArgs: [] }, 'updates are off by default');
  assert.equal(readSettings([], { FITTINGROOM_KIOSK: '1' }).kiosk, true);
  assert.throws(() => readSettings(['--update-feed', 'http://plain.example'], {}), /https/);
});

test('main/ bundles into CommonJS with its window and bridge security written out', async () => {
  const entry = await buildShell();
  const main = await readFile(entry, 'utf8');
  const preload = await readFile(resolve(SHELL_OUT, 'preload.cjs'), 'utf8');
  for (const setting of [
    'contextIsolation: true',
    'sandbox: true',
    'nodeIntegration: false',
    'requestSingleInstanceLock',
    'setPermissionRequestHandler',
  ]) {
    assert.ok(main.includes(setting), `the main bundle has ${setting}`);
  }
  assert.match(main, /require\("electron"\)/, 'electron stays external');
  assert.match(preload, /exposeInMainWorld\("fittingroomShell"/);
  assert.ok(!preload.includes('require("node:'), 'the sandboxed preload uses no Node modules');
});

test('Electron is refused where it cannot start, with the reason', () => {
  assert.deepEqual(electronStatus({ FITTINGROOM_HEADLESS: '1' }), { reason: 'FITTINGROOM_HEADLESS is set' });
  const here = electronStatus({});
  if (process.platform === 'linux') assert.ok('reason' in here, 'no display in the test environment');
});

test('npm start falls back to the headless appliance and says where to open the GUI', { timeout: 120_000 }, async (t) => {
  const dataDir = await tempDataDir();
  const env = { ...process.env };
  delete env.DISPLAY;
  delete env.WAYLAND_DISPLAY;
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts', '--port', '0', '--data-dir', dataDir], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  t.after(async () => {
    child.kill('SIGKILL');
    await exited;
  });
  let output = '';
  const url = await new Promise<string>((found, fail) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /Shop-floor GUI: open (http:\/\/127\.0\.0\.1:\d+\/)/.exec(output);
      if (match) found(match[1]!);
    });
    child.once('exit', (code) => fail(new Error(`npm start exited (${code}) before it was ready:\n${output}`)));
  });
  assert.match(output, /the desktop app cannot start: .+\./);
  assert.match(output, /starting the headless appliance instead/);
  const page = await fetch(url);
  assert.equal(page.status, 200);
  assert.match(await page.text(), /app\.js/);
  child.kill('SIGTERM');
  assert.equal(await exited, 0, 'a clean stop');
});
