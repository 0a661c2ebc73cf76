/**
 * The warp engine on the fixture photos, in process (no HTTP), one ONNX
 * Runtime thread:
 *
 * - Quality on the ground-truth pair (a person already wearing the garment):
 *   SSIM and PSNR inside the garment's region (the torso and upper arms of
 *   the original photo) between the try-on and the original.
 * - Contact sheets: every fixture person × every fixture garment, one sheet
 *   per category (bench/out/engines/<category>.png), to look at.
 * - Speed: median and p90 milliseconds per try-on (one garment), and the
 *   process's peak resident memory.
 *
 * Usage: npm run bench:engines [-- --quick]   (--quick: 2 people × 2 garments per category)
 *        npm run bench:engines -- --wide   (the wide fixture set: bench/wide.ts, also npm run bench:wide)
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp, { type OverlayOptions } from 'sharp';
import { WarpEngine } from '../server/engines/warp/engine.ts';
import { EngineError, type EngineRequest, type GarmentCategory } from '../server/engines/types.ts';
import { PersonAnalyzer, readRawImage } from '../server/vision/person.ts';
import { REGION, type RawImage } from '../server/vision/types.ts';

const FIXTURES = join(import.meta.dirname, '..', '..', 'shared', 'fixtures');
const OUT = join(import.meta.dirname, 'out', 'engines');
const QUICK = process.argv.includes('--quick');
const THUMB = { width: 192, height: 256 };

interface ManifestImage {
  file: string;
  kind: 'person' | 'garment';
  category?: string;
}
interface Manifest {
  images: ManifestImage[];
  pairs: { person: string; garment: string }[];
}

const CATEGORY: Record<string, GarmentCategory> = { dress: 'dress', lower: 'bottom', upper: 'top', bottom: 'bottom', top: 'top' };

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const percentile = (xs: number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;

/** SSIM on luminance over 8×8 windows (stride 4) whose pixels are all inside the mask, averaged. */
function ssim(a: RawImage, b: RawImage, mask: Uint8Array): number {
  const { width, height } = a;
  const lum = (img: RawImage, i: number): number =>
    0.299 * img.data[i * img.channels]! + 0.587 * img.data[i * img.channels + 1]! + 0.114 * img.data[i * img.channels + 2]!;
  const c1 = (0.01 * 255) ** 2;
  const c2 = (0.03 * 255) ** 2;
  let total = 0;
  let windows = 0;
  for (let y = 0; y + 8 <= height; y += 4) {
    for (let x = 0; x + 8 <= width; x += 4) {
      let inside = true;
      let ma = 0;
      let mb = 0;
      for (let dy = 0; dy < 8 && inside; dy++) for (let dx = 0; dx < 8; dx++) if (!mask[(y + dy) * width + x + dx]) inside = false;
      if (!inside) continue;
      for (let dy = 0; dy < 8; dy++) {
        for (let dx = 0; dx < 8; dx++) {
          const i = (y + dy) * width + x + dx;
          ma += lum(a, i) / 64;
          mb += lum(b, i) / 64;
        }
      }
      let va = 0;
      let vb = 0;
      let cov = 0;
      for (let dy = 0; dy < 8; dy++) {
        for (let dx = 0; dx < 8; dx++) {
          const i = (y + dy) * width + x + dx;
          const da = lum(a, i) - ma;
          const db = lum(b, i) - mb;
          va += (da * da) / 63;
          vb += (db * db) / 63;
          cov += (da * db) / 63;
        }
      }
      total += ((2 * ma * mb + c1) * (2 * cov + c2)) / ((ma * ma + mb * mb + c1) * (va + vb + c2));
      windows++;
    }
  }
  return windows ? total / windows : NaN;
}

/** PSNR over the RGB values of the masked pixels. */
function psnr(a: RawImage, b: RawImage, mask: Uint8Array): number {
  let sum = 0;
  let n = 0;
  for (let i = 0; i < mask.length; i++) {
    if (!mask[i]) continue;
    for (let c = 0; c < 3; c++) {
      const d = a.data[i * a.channels + c]! - b.data[i * b.channels + c]!;
      sum += d * d;
      n++;
    }
  }
  return 10 * Math.log10((255 * 255) / (sum / n));
}

async function toRaw(png: Uint8Array): Promise<RawImage> {
  return readRawImage(png);
}

async function label(text: string, width: number): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="22"><rect width="100%" height="100%" fill="#222"/><text x="4" y="16" font-family="sans-serif" font-size="13" fill="#eee">${text}</text></svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

if (process.argv.includes('--wide')) {
  await import('./wide.ts');
  process.exit(0);
}
if (!existsSync(FIXTURES)) {
  console.error(`no fixtures at ${FIXTURES}`);
  process.exit(1);
}
mkdirSync(OUT, { recursive: true });
const manifest = JSON.parse(readFileSync(join(FIXTURES, 'manifest.json'), 'utf8')) as Manifest;
let people = manifest.images.filter((i) => i.kind === 'person').map((i) => i.file);
const garments = manifest.images.filter((i) => i.kind === 'garment');

const engine = new WarpEngine({ threads: 1 });
await engine.load();
const workDir = join(OUT, 'work');
mkdirSync(workDir, { recursive: true });
const request = (person: string, garment: string, category: GarmentCategory, extra: Partial<EngineRequest> = {}): EngineRequest => ({
  genId: 'bench',
  selfie: { path: join(FIXTURES, person), format: 'jpeg', width: 768, height: 1024 },
  items: [{ path: join(FIXTURES, garment), format: 'jpeg', width: 768, height: 1024 }],
  categories: [category],
  size: 'M',
  personSize: 'M',
  fit: 'regular',
  styling: [],
  workDir,
  ...extra,
});
const run = (req: EngineRequest) => engine.run(req, { signal: new AbortController().signal, onProgress: () => {} });

let peakRss = process.memoryUsage().rss;
const sampler = setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
}, 20);

// Quality on the ground-truth pair.
for (const pair of manifest.pairs) {
  const garment = garments.find((g) => g.file === pair.garment)!;
  // The person in the pair wears the tee tucked into their jeans, so the try-on is asked for it tucked.
  const result = await run(request(pair.person, pair.garment, CATEGORY[garment.category ?? 'upper'] ?? 'top', { styling: ['tucked'] }));
  const tried = await toRaw(result.image);
  const original = await readRawImage(join(FIXTURES, pair.person));
  const analyzer = await PersonAnalyzer.create();
  const analysis = await analyzer.analyze(original);
  await analyzer.dispose();
  const regions = new Set<number>([REGION.torso, REGION.leftUpperArm, REGION.rightUpperArm]);
  const mask = Uint8Array.from(analysis.layout.labels, (l) => (regions.has(l) ? 1 : 0));
  const identity = psnr(original, original, mask);
  console.log(
    `ground-truth pair ${pair.person} + ${pair.garment}: SSIM ${ssim(tried, original, mask).toFixed(3)}, PSNR ${psnr(tried, original, mask).toFixed(2)} dB inside the garment region (${mask.reduce((a, b) => a + b, 0)} px; identity PSNR ${identity})`,
  );
  await sharp(Buffer.from(result.image)).toFile(join(OUT, 'ground-truth-pair.png'));
}

// Contact sheets and timings.
if (QUICK) people = people.slice(0, 2);
const times: number[] = [];
/** Each named stage's wall times across the try-ons (see server/engines/stages.ts). */
const stageTimes = new Map<string, number[]>();
const failures: string[] = [];
for (const kind of ['upper', 'lower', 'dress']) {
  let items = garments.filter((g) => g.category === kind || (kind === 'upper' && g.file.includes('/upper_')));
  items = items.filter((g, k) => items.findIndex((h) => h.file === g.file) === k);
  if (QUICK) items = items.slice(0, 2);
  const category = CATEGORY[kind]!;
  const columns = items.length + 1;
  const cellH = THUMB.height + 22;
  const tiles: OverlayOptions[] = [];
  for (const [c, g] of items.entries()) {
    tiles.push({
      input: await sharp(join(FIXTURES, g.file)).resize(THUMB.width, THUMB.height, { fit: 'contain', background: '#fff' }).png().toBuffer(),
      left: (c + 1) * THUMB.width,
      top: 22,
    });
    tiles.push({ input: await label(g.file.split('/')[1]!.slice(0, 26), THUMB.width), left: (c + 1) * THUMB.width, top: 0 });
  }
  for (const [r, person] of people.entries()) {
    const top = (r + 1) * cellH;
    tiles.push({ input: await sharp(join(FIXTURES, person)).resize(THUMB.width, THUMB.height).png().toBuffer(), left: 0, top: top + 22 });
    tiles.push({ input: await label(person.split('/')[1]!.slice(0, 26), THUMB.width), left: 0, top });
    for (const [c, g] of items.entries()) {
      const t0 = performance.now();
      let tile: Buffer;
      let caption: string;
      try {
        const result = await run(request(person, g.file, category));
        const ms = performance.now() - t0;
        times.push(ms);
        for (const { name, ms } of result.stages ?? []) stageTimes.set(name, [...(stageTimes.get(name) ?? []), ms]);
        tile = await sharp(Buffer.from(result.image)).resize(THUMB.width, THUMB.height).png().toBuffer();
        caption = `${ms.toFixed(0)} ms`;
      } catch (error) {
        const code = error instanceof EngineError ? error.code : 'crash';
        failures.push(`${person} × ${g.file}: ${code} (${(error as Error).message})`);
        tile = await sharp({ create: { width: THUMB.width, height: THUMB.height, channels: 3, background: '#400' } })
          .png()
          .toBuffer();
        caption = code;
      }
      tiles.push({ input: tile, left: (c + 1) * THUMB.width, top: top + 22 });
      tiles.push({ input: await label(caption, THUMB.width), left: (c + 1) * THUMB.width, top });
    }
  }
  const file = join(OUT, `${category}.png`);
  await sharp({ create: { width: columns * THUMB.width, height: (people.length + 1) * cellH, channels: 3, background: '#000' } })
    .composite(tiles)
    .png()
    .toFile(file);
  console.log(`contact sheet: ${file} (${people.length} people × ${items.length} ${category} garments)`);
}
clearInterval(sampler);
console.log(`try-ons: ${times.length} done, ${failures.length} failed`);
for (const f of failures) console.log(`  failed: ${f}`);
console.log(
  `per try-on (one garment, 1 ONNX Runtime thread, decode to PNG encode): median ${median(times).toFixed(0)} ms, p90 ${percentile(times, 0.9).toFixed(0)} ms`,
);
for (const [name, ms] of stageTimes)
  console.log(`  stage "${name}": median ${median(ms).toFixed(1)} ms, p90 ${percentile(ms, 0.9).toFixed(1)} ms (${ms.length} runs)`);
console.log(`peak resident memory of the process: ${(peakRss / 2 ** 20).toFixed(0)} MiB`);
await engine.dispose();
