/**
 * Face Mesh on every fixture person photo (people/ and wide/people/): whether
 * a face is found, with the pose landmarks' head box as the hint and
 * without, and how long `detect` takes on one ONNX Runtime thread (median of
 * RUNS per photo, with the hint; decoding and the pose analysis excluded).
 * Overlays: bench/out/face/<photo>.png (the photo's head region with the
 * face oval filled, the skin mask tinted and the 468 landmarks).
 *
 * Usage: npm run bench:face -- [--runs N]
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { basename, join } from 'node:path';
import sharp from 'sharp';
import { FaceMesh, poseHeadBox, type FaceMeshResult } from '../server/vision/face-mesh.ts';
import { FACE_OVAL, maskArea } from '../server/vision/face-regions.ts';
import { PersonAnalyzer, readRawImage } from '../server/vision/person.ts';
import type { RawImage } from '../server/vision/types.ts';

const args = process.argv.slice(2);
const runsAt = args.indexOf('--runs');
const RUNS = runsAt >= 0 ? Number(args[runsAt + 1]) : 10;
const FIXTURES = join(import.meta.dirname, '..', '..', 'shared', 'fixtures');
const OUT = join(import.meta.dirname, 'out', 'face');

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Person photos listed in a fixtures manifest, as paths. */
function people(dir: string): string[] {
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { images: { file: string; kind: string }[] };
  return manifest.images.filter((e) => e.kind === 'person').map((e) => join(dir, e.file));
}

/** The head region of the photo with the oval (yellow), the skin (green tint), the oval's outline and every landmark drawn. */
async function faceOverlay(image: RawImage, face: FaceMeshResult, file: string): Promise<void> {
  const { width, height } = image;
  const out = Buffer.alloc(width * height * 3);
  for (let i = 0; i < width * height; i++) {
    const skin = face.skin.data[i]! > 0;
    const oval = face.oval.data[i]! > 0;
    const tint: [number, number, number] = skin ? [0, 255, 0] : oval ? [255, 220, 0] : [0, 0, 0];
    const a = skin ? 0.25 : oval ? 0.35 : 0;
    for (let k = 0; k < 3; k++) out[i * 3 + k] = Math.round(image.data[i * 3 + k]! * (1 - a) + tint[k]! * a);
  }
  const b = face.box;
  const r = Math.max(1, (b.x1 - b.x0) / 150);
  const ring = FACE_OVAL.map((k) => `${face.landmarks[k]!.x.toFixed(1)},${face.landmarks[k]!.y.toFixed(1)}`).join(' ');
  const dots = face.landmarks.map((p) => `<circle cx="${p.x.toFixed(1)}" cy="${p.y.toFixed(1)}" r="${r}" fill="white"/>`).join('');
  const svg =
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">` +
    `<polygon points="${ring}" fill="none" stroke="red" stroke-width="${2 * r}"/>${dots}` +
    `<rect x="${b.x0}" y="${b.y0}" width="${b.x1 - b.x0}" height="${b.y1 - b.y0}" fill="none" stroke="cyan" stroke-width="${r}"/></svg>`;
  // The head region with some context, at least 512 px wide.
  const side = Math.max(b.x1 - b.x0, b.y1 - b.y0) * 2;
  const left = Math.max(0, Math.round((b.x0 + b.x1) / 2 - side / 2));
  const top = Math.max(0, Math.round((b.y0 + b.y1) / 2 - side / 2));
  const crop = { left, top, width: Math.min(width - left, Math.round(side)), height: Math.min(height - top, Math.round(side)) };
  const drawn = await sharp(out, { raw: { width, height, channels: 3 } })
    .composite([{ input: Buffer.from(svg) }])
    .png()
    .toBuffer();
  await sharp(drawn).extract(crop).resize({ width: 512 }).png().toFile(file);
}

if (!existsSync(FIXTURES)) {
  console.error(`no fixtures at ${FIXTURES}; nothing to measure`);
  process.exit(1);
}
mkdirSync(OUT, { recursive: true });
const photos = [...people(FIXTURES), ...people(join(FIXTURES, 'wide'))];
const analyzer = await PersonAnalyzer.create({ threads: 1 });
const mesh = await FaceMesh.create({ threads: 1 });
console.log(`${cpus()[0]?.model ?? 'cpu'} ×${cpus().length}, node ${process.version}; ${RUNS} runs per photo; 1 ONNX Runtime thread`);
console.log(
  '| photo | size | face (hint) | face (no hint) | oval % of photo | refined | detect ms | of which detector | landmarks | masks |',
);
console.log('|---|---|---|---|---:|---|---:|---:|---:|---:|');
const totals: number[] = [];
let found = 0;
for (const path of photos) {
  const name = basename(path).replace(/\.\w+$/, '');
  const image = await readRawImage(path);
  const hint = poseHeadBox((await analyzer.analyze(image)).landmarks) ?? undefined;
  const bare = await mesh.detect(image);
  const times: Record<'total' | 'detect' | 'landmarks' | 'regions', number[]> = { total: [], detect: [], landmarks: [], regions: [] };
  let face: FaceMeshResult | null = null;
  for (let run = 0; run < RUNS + 2; run++) {
    face = await mesh.detect(image, hint);
    const t = mesh.lastTimings!;
    if (run < 2) continue; // warm-up
    for (const key of Object.keys(times) as (keyof typeof times)[]) times[key].push(t[key]);
  }
  const ms = (k: keyof typeof times): string => median(times[k]).toFixed(1);
  const describe = (f: FaceMeshResult | null): string => (f ? `yes (${f.presence.toFixed(2)})` : 'no');
  if (face) {
    found++;
    totals.push(median(times.total));
    await faceOverlay(image, face, join(OUT, `${name}.png`));
  }
  const area = face ? ((100 * maskArea(face.oval)) / (image.width * image.height)).toFixed(2) : '–';
  console.log(
    `| ${name} | ${image.width}×${image.height} | ${describe(face)} | ${describe(bare)} | ${area} | ${mesh.lastTimings!.refined ? 'yes' : 'no'} | ${ms('total')} | ${ms('detect')} | ${ms('landmarks')} | ${ms('regions')} |`,
  );
}
console.log(
  `faces found on ${found} of ${photos.length} photos; median detect (photos with a face): ${median(totals).toFixed(1)} ms; overlays in ${OUT}`,
);
await Promise.all([analyzer.dispose(), mesh.dispose()]);
