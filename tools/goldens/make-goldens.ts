/**
 * Writes the golden files in test/goldens/: MediaPipe's own legacy wasm
 * solutions (Pose lite and full, SelfieSegmentation) run in Debian's
 * headless Chromium on each person photo in ../shared/fixtures, with
 * overlays for review in bench/out/goldens/.
 *
 *   node --import tsx tools/goldens/make-goldens.ts [photo-name ...]
 *
 * Dev-time only: needs /usr/bin/chromium (`apt-get install chromium`) and
 * the devDependency playwright-core. Nothing leaves loopback: the page, the
 * MediaPipe files and the photos come from a server on 127.0.0.1:0 and every
 * other request is aborted.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, extname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext } from 'playwright-core';
import {
  GOLDEN_FORMAT,
  GOLDENS_DIR,
  maskStats,
  round,
  type Golden,
  type MaskStats,
  type PixelLandmark,
  type PoseGolden,
} from '../../test/goldens/golden-format.ts';
import { writeOverlay } from './overlay.ts';

const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '../..');
const FIXTURES = resolve(ROOT, '../shared/fixtures');
const OVERLAY_DIR = join(ROOT, 'bench/out/goldens');
const CHROMIUM = '/usr/bin/chromium';
const PAGE_TIMEOUT_MS = 300_000;

const MP_PACKAGES = {
  pose: join(ROOT, 'node_modules/@mediapipe/pose'),
  selfie_segmentation: join(ROOT, 'node_modules/@mediapipe/selfie_segmentation'),
} as const;
type Solution = keyof typeof MP_PACKAGES;

// Static image mode is emulated by page.js (a reset before each photo); the
// option itself does not exist in the JS API, so it is not passed.
const POSE_OPTIONS = { smoothLandmarks: false, enableSegmentation: true, smoothSegmentation: false };
const RUNS = [
  { key: 'lite', solution: 'pose', options: { ...POSE_OPTIONS, modelComplexity: 0 } },
  { key: 'full', solution: 'pose', options: { ...POSE_OPTIONS, modelComplexity: 1 } },
  { key: 'selfie', solution: 'selfie_segmentation', options: { modelSelection: 0 } },
] as const;
type RunKey = (typeof RUNS)[number]['key'];

/** What page.js returns per photo. */
interface PageResult {
  url: string;
  ms: number;
  width: number;
  height: number;
  landmarks: { x: number; y: number; z: number; visibility: number }[] | null;
  mask: { sums: number[]; channels: string[] } | null;
}

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript',
  '.wasm': 'application/wasm',
  '.html': 'text/html',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.png': 'image/png',
};

interface Photo {
  name: string;
  file: string;
  path: string;
}

/** The person photos from the fixtures manifest, optionally narrowed to the names given. */
function personPhotos(only: string[]): Photo[] {
  const manifest = JSON.parse(readFileSync(join(FIXTURES, 'manifest.json'), 'utf8')) as { images: { file: string; kind: string }[] };
  const photos = manifest.images
    .filter((i) => i.kind === 'person')
    .map((i) => ({ name: basename(i.file, extname(i.file)), file: i.file, path: join(FIXTURES, i.file) }));
  const picked = only.length ? photos.filter((p) => only.includes(p.name)) : photos;
  const unknown = only.filter((n) => !photos.some((p) => p.name === n));
  if (unknown.length) throw new Error(`not a person photo in the manifest: ${unknown.join(', ')}`);
  return picked;
}

/** A loopback server for the harness page, MediaPipe's files and the photos; nothing else. */
async function serve(photos: Photo[]): Promise<{ server: Server; base: string }> {
  const files = new Map<string, string>();
  files.set('/page.js', join(ROOT, 'tools/goldens/page.js'));
  for (const p of photos) files.set(`/photos/${basename(p.file)}`, p.path);
  const pages: Record<string, string> = {
    '/pose.html': '<!doctype html><script src="/mp/pose/pose.js"></script><script src="/page.js"></script>',
    '/selfie_segmentation.html':
      '<!doctype html><script src="/mp/selfie_segmentation/selfie_segmentation.js"></script><script src="/page.js"></script>',
  };
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    const page = pages[path];
    if (page) {
      res.writeHead(200, { 'content-type': 'text/html' }).end(page);
      return;
    }
    let file = files.get(path);
    const mp = /^\/mp\/(pose|selfie_segmentation)\/([\w.-]+)$/.exec(path);
    if (mp) file = join(MP_PACKAGES[mp[1] as Solution], mp[2]!);
    try {
      if (!file) throw new Error('not served');
      const body = readFileSync(file);
      res.writeHead(200, { 'content-type': CONTENT_TYPES[extname(file)] ?? 'application/octet-stream' }).end(body);
    } catch {
      console.warn(`404 ${path}`);
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** Runs one solution configuration on all photos in a fresh page. */
async function runSolution(context: BrowserContext, base: string, run: (typeof RUNS)[number], photos: Photo[]): Promise<PageResult[]> {
  const page = await context.newPage();
  page.setDefaultTimeout(PAGE_TIMEOUT_MS);
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') console.log(`  [${run.key}] ${m.text().slice(0, 200)}`);
  });
  page.on('pageerror', (e) => console.log(`  [${run.key}] page error: ${e.message}`));
  await page.goto(`${base}/${run.solution}.html`);
  const urls = photos.map((p) => `/photos/${basename(p.file)}`);
  const results = await page.evaluate(
    ([solution, options, photoUrls]) =>
      (window as unknown as { runSolution: (s: string, o: unknown, u: string[]) => Promise<PageResult[]> }).runSolution(
        solution,
        options,
        photoUrls,
      ),
    [run.solution, run.options, urls] as const,
  );
  await page.close();
  return results;
}

/**
 * The mask's bytes. Both solutions hand back an image whose alpha carries the
 * confidence (MediaPipe's demos draw it with 'source-in'); the red channel is
 * only 255 wherever alpha > 0 (the canvas un-premultiplies (v, 0, 0, v)), so
 * reading red would give a mask thresholded at zero. That layout is checked,
 * so a MediaPipe change fails loudly instead of writing a wrong golden.
 */
function maskChannel(mask: NonNullable<PageResult['mask']>, what: string): Uint8Array {
  const [, g, b] = mask.sums as [number, number, number, number];
  const red = Buffer.from(mask.channels[0]!, 'base64');
  const alpha = new Uint8Array(Buffer.from(mask.channels[3]!, 'base64'));
  let odd = 0;
  for (let i = 0; i < alpha.length; i++) if (red[i] !== (alpha[i]! > 0 ? 255 : 0)) odd++;
  if (g !== 0 || b !== 0 || odd > alpha.length / 1000) {
    throw new Error(`${what}: unexpected mask layout (green ${g}, blue ${b}, ${odd} pixels where red is not 255·[alpha > 0])`);
  }
  return alpha;
}

/** Landmarks in image pixels, rounded for a short file. */
function toPixels(lms: NonNullable<PageResult['landmarks']>, width: number, height: number): PixelLandmark[] {
  return lms.map((p) => ({
    x: round(p.x * width, 2),
    y: round(p.y * height, 2),
    z: round(p.z * width, 2),
    visibility: round(p.visibility, 4),
  }));
}

/** JSON with one landmark and one box per line, so a regeneration's diff stays readable. */
function formatGolden(golden: Golden): string {
  return (
    JSON.stringify(golden, null, 1)
      .replace(/\{\s*("x": [^,]+),\s*("y": [^,]+),\s*("z": [^,]+),\s*("visibility": [^\s}]+)\s*\}/g, '{ $1, $2, $3, $4 }')
      .replace(/\[\s*(-?\d+),\s*(-?\d+),\s*(-?\d+),\s*(-?\d+)\s*\]/g, '[$1, $2, $3, $4]') + '\n'
  );
}

async function main(): Promise<void> {
  const photos = personPhotos(process.argv.slice(2));
  const { server, base } = await serve(photos);
  const userDataDir = mkdtempSync(join(tmpdir(), 'fittingroom-goldens-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      // The legacy solutions need WebGL; with the GPU off, only SwiftShader gives it.
      '--enable-unsafe-swiftshader',
      '--use-gl=angle',
      '--use-angle=swiftshader',
    ],
  });
  await context.route('**/*', (route) => (route.request().url().startsWith(`${base}/`) ? route.continue() : route.abort()));
  const chromiumVersion = context.browser()?.version() ?? 'unknown';
  const results = {} as Record<RunKey, PageResult[]>;
  try {
    for (const run of RUNS) {
      console.log(`${run.key}: ${run.solution} ${JSON.stringify(run.options)}`);
      results[run.key] = await runSolution(context, base, run, photos);
      for (const r of results[run.key]) console.log(`  ${r.url}: ${r.ms.toFixed(0)} ms, landmarks ${r.landmarks ? 'yes' : 'no'}`);
    }
  } finally {
    await context.close();
    server.close();
    rmSync(userDataDir, { recursive: true, force: true });
  }

  const pkgVersion = (dir: string): string => (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }).version;
  const generator: Golden['generator'] = {
    script: 'tools/goldens/make-goldens.ts',
    date: new Date().toISOString().slice(0, 10),
    chromium: chromiumVersion,
    playwrightCore: pkgVersion(join(ROOT, 'node_modules/playwright-core')),
    mediapipe: { pose: pkgVersion(MP_PACKAGES.pose), selfieSegmentation: pkgVersion(MP_PACKAGES.selfie_segmentation) },
  };
  mkdirSync(OVERLAY_DIR, { recursive: true });
  for (const [i, photo] of photos.entries()) {
    console.log(photo.name);
    const bytes = readFileSync(photo.path);
    const first = results.lite[i]!;
    const { width, height } = first;
    const masks: Partial<Record<RunKey, Uint8Array>> = {};
    const stats = (key: RunKey): MaskStats | null => {
      const r = results[key][i]!;
      if (r.width !== width || r.height !== height) throw new Error(`${photo.name}: sizes differ between runs`);
      if (!r.mask) return null;
      masks[key] = maskChannel(r.mask, key);
      return maskStats(masks[key], width, height);
    };
    const pose = (key: 'lite' | 'full', options: Record<string, unknown>): PoseGolden => {
      const r = results[key][i]!;
      return { options, landmarks: r.landmarks && toPixels(r.landmarks, width, height), segmentation: stats(key) };
    };
    const selfieMask = stats('selfie');
    if (!selfieMask) throw new Error(`${photo.name}: SelfieSegmentation gave no mask`);
    const golden: Golden = {
      format: GOLDEN_FORMAT,
      image: { file: photo.file, sha256: createHash('sha256').update(bytes).digest('hex'), width, height },
      generator,
      pose: { lite: pose('lite', RUNS[0].options), full: pose('full', RUNS[1].options) },
      selfie: { options: RUNS[2].options, mask: selfieMask },
    };
    const out = join(GOLDENS_DIR, `${photo.name}.json`);
    writeFileSync(out, formatGolden(golden));
    const overlay = join(OVERLAY_DIR, `${photo.name}.png`);
    await writeOverlay(photo.path, golden, masks, overlay);
    console.log(`  wrote ${out} (${readFileSync(out).length} bytes) and ${overlay}`);
  }
}

await main();
