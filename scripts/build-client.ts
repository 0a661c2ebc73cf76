/**
 * Builds `fittingroom/client` for apps that do not run TypeScript: build/client/index.js (ESM, bundled by
 * esbuild, its one dependency `standardwebhooks` left to node_modules) and its type declarations under
 * build/client/types/ (tsc; the server types it names come along, relative imports ending in .js).
 * Run by `npm install` (prepare) and `npm run build:client`.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';

const ROOT = resolve(import.meta.dirname, '..');
export const CLIENT_OUT = resolve(ROOT, 'build/client');

export async function buildClient(): Promise<void> {
  rmSync(CLIENT_OUT, { recursive: true, force: true });
  await build({
    entryPoints: [resolve(ROOT, 'client/index.ts')],
    outfile: join(CLIENT_OUT, 'index.js'),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    logLevel: 'warning',
  });
  // TypeScript is a development dependency: an install without them (--omit=dev) gets the JavaScript only.
  const tsc = resolve(ROOT, 'node_modules/typescript/bin/tsc');
  if (!existsSync(tsc)) {
    console.warn('fittingroom: typescript is not installed, so the client is built without its type declarations');
    return;
  }
  execFileSync(process.execPath, [tsc, '-p', resolve(ROOT, 'tsconfig.client.json')], { stdio: 'inherit' });
  // The sources import './x.ts'; an app's TypeScript resolves './x.js' to the declaration next to it.
  const types = join(CLIENT_OUT, 'types');
  for (const entry of readdirSync(types, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.d.ts')) continue;
    const file = join(entry.parentPath, entry.name);
    const text = readFileSync(file, 'utf8');
    writeFileSync(file, text.replace(/(from\s+['"]\.{1,2}\/[^'"]*?)\.ts(['"])/g, '$1.js$2'));
  }
}

if (process.argv[1] === import.meta.filename) {
  await buildClient();
  console.log(`built ${CLIENT_OUT}`);
}
