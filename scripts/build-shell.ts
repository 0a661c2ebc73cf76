/**
 * Bundles the Electron main process and its preload script (main/) into
 * build/main/*.cjs with esbuild. Electron loads CommonJS here: a sandboxed
 * preload cannot be an ES module. `npm run build:shell`; `npm start` runs it too.
 */
import { resolve } from 'node:path';
import { build } from 'esbuild';

const ROOT = resolve(import.meta.dirname, '..');
export const SHELL_OUT = resolve(ROOT, 'build/main');

/** Writes build/main/index.cjs and build/main/preload.cjs. */
export async function buildShell(): Promise<string> {
  const common = {
    bundle: true,
    platform: 'node' as const,
    format: 'cjs' as const,
    target: 'node22',
    external: ['electron', 'electron-updater'],
    logLevel: 'warning' as const,
  };
  await build({ ...common, entryPoints: [resolve(ROOT, 'main/index.ts')], outfile: resolve(SHELL_OUT, 'index.cjs') });
  await build({ ...common, entryPoints: [resolve(ROOT, 'main/preload.ts')], outfile: resolve(SHELL_OUT, 'preload.cjs') });
  return resolve(SHELL_OUT, 'index.cjs');
}

if (process.argv[1] === import.meta.filename) {
  console.log(`built ${await buildShell()}`);
}
