/**
 * The shop-floor GUI's assets: renderer/ is TypeScript, bundled once per
 * process by esbuild into memory (no build folder, nothing from a CDN) the
 * first time a browser asks for it.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { build } from 'esbuild';

/** The renderer's sources (read as files; the server never imports them). */
export const RENDERER_DIR = resolve(import.meta.dirname, '../../renderer');

/** The GUI's three assets. */
export interface GuiAssets {
  html: string;
  js: string;
  css: string;
}

let cached: Promise<GuiAssets> | undefined;

async function bundle(root: string): Promise<GuiAssets> {
  const result = await build({
    entryPoints: [resolve(root, 'main.ts'), resolve(root, 'styles.css')],
    bundle: true,
    write: false,
    format: 'esm',
    target: ['chrome120', 'firefox120', 'safari17'],
    minify: true,
    outdir: 'out',
    logLevel: 'silent',
  });
  const find = (suffix: string): string => {
    const file = result.outputFiles.find((output) => output.path.endsWith(suffix));
    if (!file) throw new Error(`the renderer bundle has no ${suffix}`);
    return file.text;
  };
  return { html: await readFile(resolve(root, 'index.html'), 'utf8'), js: find('.js'), css: find('.css') };
}

/** The bundled GUI (built on first use, then kept; a failed build is tried again next time). */
export function guiAssets(): Promise<GuiAssets> {
  cached ??= bundle(RENDERER_DIR).catch((error: unknown) => {
    cached = undefined;
    throw error;
  });
  return cached;
}
