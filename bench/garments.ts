/**
 * The warp engine's garment side on the fixture photos, in process, one ONNX
 * Runtime thread: for every fixture garment, the category detected from the
 * silhouette against the manifest's, whether the photo was taken as flat or
 * worn, and the time of the cut-out (with the person analysis that decides
 * flat or worn, and without it); the fixture people are also cut out as worn
 * tops. Review images (the cut-out over a checkerboard, landmarks drawn and
 * labelled) go to bench/out/garments/, to look at.
 *
 * With --wide, the wide fixture set instead (bench/helpers/wide.ts): every
 * garment cut out once with category 'auto' and the learned segmenter, as
 * the engine does; the detected category against the manifest's (accuracy,
 * the misses, the refusals), review images to bench/out/garments-wide/.
 *
 * Usage: npm run bench:garments [-- --runs N]   (N timed runs per photo, default 3)
 *        npm run bench:garments -- --wide
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import sharp from 'sharp';
import { EngineError, type GarmentCategory } from '../server/engines/types.ts';
import { cutOutGarment } from '../server/engines/warp/cutout/index.ts';
import { GarmentSegmenter } from '../server/engines/warp/cutout/learned.ts';
import type { GarmentCutout, Point } from '../server/engines/warp/types.ts';
import { PersonAnalyzer, readRawImage } from '../server/vision/person.ts';
import { VisionError } from '../server/vision/types.ts';
import { WIDE, WIDE_CATEGORIES, detectCategory, idOf, loadWide } from './helpers/wide.ts';

const FIXTURES = join(import.meta.dirname, '..', '..', 'shared', 'fixtures');
const OUT = join(import.meta.dirname, 'out', 'garments');
const runsArg = process.argv.indexOf('--runs');
const RUNS = runsArg >= 0 ? Math.max(1, Number(process.argv[runsArg + 1]) || 1) : 3;

const MANIFEST_CATEGORY: Record<string, string> = {
  dress: 'dress',
  lower_body: 'bottom',
  upper_body: 'top',
  lower: 'bottom',
  upper: 'top',
};

interface ManifestImage {
  file: string;
  kind: 'person' | 'garment';
  category?: string;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** The cut-out over a checkerboard with its landmarks drawn and labelled, as a PNG file. */
async function review(cutout: GarmentCutout, title: string, file: string): Promise<void> {
  const { width, height, data } = cutout.image;
  const board = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = y * width + x;
      const checker = ((x >> 4) + (y >> 4)) % 2 === 0 ? 200 : 150;
      const a = data[i * 4 + 3]! / 255;
      for (let c = 0; c < 3; c++) board[i * 3 + c] = Math.round(data[i * 4 + c]! * a + checker * (1 - a));
    }
  }
  const marks: string[] = [];
  const size = Math.max(12, Math.round(width / 28));
  for (const [name, value] of Object.entries(cutout.landmarks)) {
    if (typeof value !== 'object' || value === null) continue;
    const p = value as Point;
    const colour = /left/i.test(name) ? '#ff2050' : /right/i.test(name) ? '#20a0ff' : '#20d040';
    marks.push(`<circle cx="${p.x}" cy="${p.y}" r="${size / 2.5}" fill="${colour}" stroke="black" stroke-width="1.5"/>`);
    marks.push(
      `<text x="${p.x + size / 2}" y="${p.y - size / 3}" font-size="${size}" font-family="sans-serif" fill="${colour}" stroke="black" stroke-width="0.4">${name}</text>`,
    );
  }
  const sleeve = cutout.landmarks.sleeveHalfWidth;
  for (const end of [cutout.landmarks.leftSleeveEnd, cutout.landmarks.rightSleeveEnd]) {
    if (end && sleeve) marks.push(`<circle cx="${end.x}" cy="${end.y}" r="${sleeve}" fill="none" stroke="#ffd000" stroke-width="2"/>`);
  }
  marks.push(
    `<text x="6" y="${size + 4}" font-size="${size}" font-family="sans-serif" fill="black">${title}</text>`,
    `<text x="6" y="${height - 6}" font-size="${size * 0.8}" font-family="sans-serif" fill="black">red: wearer's left · blue: wearer's right</text>`,
  );
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">${marks.join('')}</svg>`;
  await sharp(board, { raw: { width, height, channels: 3 } })
    .composite([{ input: Buffer.from(svg), top: 0, left: 0 }])
    .png()
    .toFile(file);
}

async function main(): Promise<void> {
  if (!existsSync(FIXTURES)) {
    console.log(`no fixtures at ${FIXTURES}`);
    return;
  }
  mkdirSync(OUT, { recursive: true });
  const manifest = JSON.parse(readFileSync(join(FIXTURES, 'manifest.json'), 'utf8')) as { images: ManifestImage[] };
  const analyzer = await PersonAnalyzer.create({ threads: 1 });
  const jobs: { file: string; expected: string; category: GarmentCategory }[] = [
    ...manifest.images
      .filter((m) => m.kind === 'garment')
      .map((m) => ({ file: m.file, expected: MANIFEST_CATEGORY[m.category ?? ''] ?? m.category ?? '?', category: 'auto' as const })),
    ...manifest.images.filter((m) => m.kind === 'person').map((m) => ({ file: m.file, expected: 'top (worn)', category: 'top' as const })),
  ];
  console.log('photo                                  expected     got                      total ms  without analysis ms');
  let agree = 0;
  let garments = 0;
  const flatTimes: number[] = [];
  for (const job of jobs) {
    const image = await readRawImage(join(FIXTURES, job.file));
    const totals: number[] = [];
    const own: number[] = [];
    let result: GarmentCutout | EngineError | null = null;
    for (let run = 0; run < RUNS; run++) {
      // The person analysis alone (it decides flat or worn inside the cut-out), timed apart.
      const ta = performance.now();
      await analyzer.analyze(image).catch((error: unknown) => {
        if (!(error instanceof VisionError)) throw error;
      });
      const analysis = performance.now() - ta;
      const t0 = performance.now();
      try {
        result = await cutOutGarment(image, { category: job.category, analyzer });
      } catch (error) {
        if (!(error instanceof EngineError)) throw error;
        result = error;
      }
      const total = performance.now() - t0;
      totals.push(total);
      own.push(total - analysis);
    }
    const name = basename(job.file).replace(/\.[a-z]+$/, '');
    let got: string;
    if (result instanceof EngineError) got = `refused: ${result.code}`;
    else if (result) {
      got = `${result.category} (${result.photo}, ${result.categorySource})`;
      await review(result, `${name}: ${result.category}, ${result.photo}`, join(OUT, `${name}.png`));
    } else got = '?';
    if (job.category === 'auto') {
      garments++;
      if (!(result instanceof EngineError) && result?.category === job.expected) agree++;
      flatTimes.push(median(own));
    }
    console.log(
      `${job.file.padEnd(38)} ${job.expected.padEnd(12)} ${got.padEnd(24)} ${median(totals).toFixed(0).padStart(8)}  ${median(own).toFixed(0).padStart(8)}`,
    );
  }
  console.log(`\ncategory as in the manifest: ${agree} of ${garments} garments`);
  console.log(`cut-out without the person analysis, median over garments: ${median(flatTimes).toFixed(0)} ms (${RUNS} runs each)`);
  console.log(`review images: ${OUT}`);
  await analyzer.dispose();
}

/** The wide set: detected category against the manifest's, for every garment, once, as the engine cuts it out. */
async function mainWide(): Promise<void> {
  const wide = loadWide();
  const out = join(import.meta.dirname, 'out', 'garments-wide');
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const analyzer = await PersonAnalyzer.create({ threads: 1 });
  const segmenter = await GarmentSegmenter.create({ threads: 1 });
  const started = performance.now();
  const rows: { file: string; truth: string; detected: string; photo: string; style: string; ms: number; description: string }[] = [];
  console.log(`${wide.garments.length} garments from ${WIDE}\n`);
  console.log('garment                                       truth      style     detected              photo  ms');
  for (const g of wide.garments) {
    const d = await detectCategory(await readRawImage(join(WIDE, g.file)), analyzer, segmenter);
    const detected = d.ok ? d.category : d.code;
    const photo = d.ok ? d.photo : '-';
    rows.push({ file: g.file, truth: g.category!, detected, photo, style: g.style!, ms: Math.round(d.ms), description: g.description });
    if (d.ok) await review(d.cutout, `${idOf(g.file)}: ${d.category} (truth ${g.category}), ${d.photo}`, join(out, `${idOf(g.file)}.png`));
    console.log(
      `${idOf(g.file).slice(0, 44).padEnd(45)} ${g.category!.padEnd(10)} ${g.style!.padEnd(9)} ${detected.padEnd(21)} ${photo.padEnd(6)} ${Math.round(d.ms)}`,
    );
  }
  const seconds = (performance.now() - started) / 1000;
  await analyzer.dispose();
  await segmenter.dispose();
  writeFileSync(join(out, 'results.json'), `${JSON.stringify(rows, null, 1)}\n`);

  const share = (n: number, of: number): string => `${n}/${of} (${of ? ((100 * n) / of).toFixed(0) : '-'} %)`;
  const correct = rows.filter((r) => r.detected === r.truth);
  console.log(`\ncategory as in the manifest: ${share(correct.length, rows.length)}`);
  for (const c of WIDE_CATEGORIES) {
    const some = rows.filter((r) => r.truth === c);
    console.log(`  ${c.padEnd(10)} ${share(some.filter((r) => r.detected === c).length, some.length)}`);
  }
  for (const style of ['flat', 'ghost', 'on-model']) {
    const some = rows.filter((r) => r.style === style);
    console.log(`  ${style.padEnd(10)} ${share(some.filter((r) => r.detected === r.truth).length, some.length)}`);
  }
  const refused = rows.filter((r) => !WIDE_CATEGORIES.includes(r.detected as never));
  const misses = rows.filter((r) => r.detected !== r.truth && !refused.includes(r));
  console.log(`\nmisses (${misses.length}):\n| file | truth | detected | style | description |\n| --- | --- | --- | --- | --- |`);
  for (const r of misses) console.log(`| ${r.file} | ${r.truth} | ${r.detected} | ${r.style} | ${r.description} |`);
  console.log(`\nrefusals (${refused.length}):`);
  for (const r of refused) console.log(`  ${r.file} (${r.truth}, ${r.style}): ${r.detected}`);
  console.log(`\ncut-out per garment: median ${median(rows.map((r) => r.ms)).toFixed(0)} ms; whole run ${seconds.toFixed(1)} s`);
  console.log(`review images and results.json: ${out}`);
}

if (process.argv.includes('--wide')) await mainWide();
else await main();
