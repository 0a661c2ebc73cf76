/**
 * `fittingroom/client` as an app uses it: built (scripts/build-client.ts), imported by its package name from a
 * plain .mjs file run by node without tsx, talking to a running appliance; and its type declarations compile
 * in an app's own strict NodeNext TypeScript.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { before, test } from 'node:test';
import { buildClient } from '../../scripts/build-client.ts';
import { startTestAppliance } from '../helpers/appliance.ts';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '..', '..');

before(async () => {
  await buildClient();
});

test('a plain .mjs app imports the built client by package name and calls the appliance', async (t) => {
  const app = await startTestAppliance(t);
  // Inside the package, a file may import the package by its own name (its "exports" map applies).
  const dir = mkdtempSync(join(ROOT, 'build', 'client-app-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'app.mjs');
  writeFileSync(
    file,
    `import { FittingroomClient, FittingroomError, verifyWebhook } from 'fittingroom/client';
const fr = new FittingroomClient({ baseUrl: process.env.BASE, apiKey: process.env.KEY });
const account = await fr.account();
let refused = null;
try { await new FittingroomClient({ baseUrl: process.env.BASE, apiKey: 'fr_wrong' }).account(); }
catch (error) { refused = error instanceof FittingroomError ? error.code : String(error); }
console.log(JSON.stringify({ balance: typeof account.creditsRemaining, refused, verify: typeof verifyWebhook }));
`,
  );
  const { stdout } = await run(process.execPath, [file], { env: { ...process.env, BASE: app.url, KEY: app.adminKey, NODE_OPTIONS: '' } });
  assert.deepEqual(JSON.parse(stdout), { balance: 'number', refused: 'unauthorized', verify: 'function' });
});

test("the client's declarations type-check in an app's strict NodeNext project", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'fittingroom-client-types-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(
    join(dir, 'app.ts'),
    `import { FittingroomClient, type TryOn } from '${join(ROOT, 'build/client/types/client/index.js')}';
const fr = new FittingroomClient({ baseUrl: 'http://127.0.0.1:8787', apiKey: 'fr_x' });
export async function latest(genId: string): Promise<TryOn['status']> {
  return (await fr.get(genId)).status;
}
// @ts-expect-error size is required
void fr.submit({ selfie: 'x', items: ['y'] });
`,
  );
  const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
  const args = [
    '--noEmit',
    '--strict',
    '--module',
    'nodenext',
    '--moduleResolution',
    'nodenext',
    '--target',
    'es2022',
    '--skipLibCheck',
    '--types',
    'node',
    '--typeRoots',
    join(ROOT, 'node_modules/@types'),
    join(dir, 'app.ts'),
  ];
  await run(process.execPath, [tsc, ...args]).catch((error: { stdout?: string }) => assert.fail(`tsc: ${error.stdout}`));
});
