/**
 * The whole person analysis on every fixture photo: accuracy against
 * MediaPipe's own answers (test/goldens/) and speed on one core.
 *
 * - Landmarks: median distance to MediaPipe's (same model complexity), as a
 *   share of the image height (target < 2 %).
 * - Matte: IoU at 0.5 on the golden's 64-wide grid against Pose's mask and
 *   the selfie mask (target > 0.95).
 * - Speed: median of RUNS analyses per photo (detector, landmarks, matte,
 *   layout; decoding excluded), 1 ONNX Runtime thread; target < 100 ms.
 * - Overlays: bench/out/vision/<photo>.png (photo | regions and landmarks).
 *
 * Usage: npm run bench:person -- [--runs N] [--model full|lite]
 */
import { existsSync, mkdirSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { decodeGrid, downsampleMask, loadGoldens, maskIoU, medianLandmarkDistance } from '../test/goldens/golden-format.ts';
import { PersonAnalyzer, readRawImage } from '../server/vision/person.ts';
import { POSE, type PersonAnalysis, type RawImage } from '../server/vision/types.ts';

const args = process.argv.slice(2);
const flag = (name: string, fallback: string): string => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? args[i + 1]! : fallback;
};
const RUNS = Number(flag('runs', '15'));
const MODEL = flag('model', 'full') as 'full' | 'lite';
const FIXTURES = join(import.meta.dirname, '..', '..', 'shared', 'fixtures');
const OUT = join(import.meta.dirname, 'out', 'vision');

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** One colour per region (index = REGION value). */
export const REGION_COLOURS: [number, number, number][] = [
  [0, 0, 0],
  [255, 210, 0], // head
  [255, 140, 0], // neck
  [40, 120, 255], // torso
  [0, 200, 120],
  [120, 255, 160],
  [200, 0, 200],
  [255, 120, 255],
  [0, 255, 255],
  [255, 255, 120],
  [120, 60, 255], // hips
  [255, 60, 60],
  [255, 160, 160],
  [140, 80, 0],
  [210, 160, 90],
  [90, 90, 90],
  [200, 200, 200],
];

const BONES: [number, number][] = [
  [POSE.leftShoulder, POSE.rightShoulder],
  [POSE.leftShoulder, POSE.leftElbow],
  [POSE.leftElbow, POSE.leftWrist],
  [POSE.rightShoulder, POSE.rightElbow],
  [POSE.rightElbow, POSE.rightWrist],
  [POSE.leftShoulder, POSE.leftHip],
  [POSE.rightShoulder, POSE.rightHip],
  [POSE.leftHip, POSE.rightHip],
  [POSE.leftHip, POSE.leftKnee],
  [POSE.leftKnee, POSE.leftAnkle],
  [POSE.rightHip, POSE.rightKnee],
  [POSE.rightKnee, POSE.rightAnkle],
];

/** The photo beside its regions (tinted over the photo), with our landmarks (white) and MediaPipe's (red). */
async function overlay(image: RawImage, analysis: PersonAnalysis, golden: { x: number; y: number }[], file: string): Promise<void> {
  const { width, height } = image;
  const tinted = Buffer.alloc(width * height * 3);
  for (let i = 0; i < width * height; i++) {
    const c = REGION_COLOURS[analysis.layout.labels[i]!]!;
    const a = analysis.layout.labels[i] ? 0.55 : 0;
    const m = analysis.matte.data[i]! / 255;
    for (let k = 0; k < 3; k++) {
      const v = image.data[i * 3 + k]!;
      tinted[i * 3 + k] = Math.round((v * (1 - a) + c[k]! * a) * (0.35 + 0.65 * m));
    }
  }
  const dots = (points: { x: number; y: number }[], colour: string, r: number): string =>
    points
      .map((p) => `<circle cx="${p.x.toFixed(1)}" cy="${p.y.toFixed(1)}" r="${r}" fill="${colour}" stroke="black" stroke-width="1"/>`)
      .join('');
  const lines = BONES.map(([a, b]) => {
    const p = analysis.landmarks[a]!;
    const q = analysis.landmarks[b]!;
    return `<line x1="${p.x}" y1="${p.y}" x2="${q.x}" y2="${q.y}" stroke="white" stroke-width="3"/>`;
  }).join('');
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">${lines}${dots(golden, 'red', 6)}${dots(analysis.landmarks, 'white', 4)}</svg>`;
  const right = await sharp(tinted, { raw: { width, height, channels: 3 } })
    .composite([{ input: Buffer.from(svg) }])
    .png()
    .toBuffer();
  const left = await sharp(Buffer.from(image.data), { raw: { width, height, channels: 3 } })
    .png()
    .toBuffer();
  const sheet = await sharp({ create: { width: width * 2, height, channels: 3, background: '#000' } })
    .composite([
      { input: left, left: 0, top: 0 },
      { input: right, left: width, top: 0 },
    ])
    .png()
    .toBuffer();
  await sharp(sheet).resize({ width }).png().toFile(file);
}

if (!existsSync(FIXTURES)) {
  console.error(`no fixtures at ${FIXTURES}; nothing to measure`);
  process.exit(1);
}
mkdirSync(OUT, { recursive: true });
const analyzer = await PersonAnalyzer.create({ threads: 1, landmarkModel: MODEL });
console.log(
  `${cpus()[0]?.model ?? 'cpu'} ×${cpus().length}, node ${process.version}; landmark model ${MODEL}; ${RUNS} runs per photo; 1 ONNX Runtime thread`,
);
console.log(
  '| photo | size | landmark median (% of height) | matte IoU vs Pose mask | vs selfie mask | refined | total ms | detect | landmarks | matte | layout |',
);
console.log('|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|');
const totals: number[] = [];
for (const [name, golden] of loadGoldens()) {
  const image = await readRawImage(join(FIXTURES, golden.image.file));
  const times: Record<'total' | 'detect' | 'landmarks' | 'matte' | 'layout', number[]> = {
    total: [],
    detect: [],
    landmarks: [],
    matte: [],
    layout: [],
  };
  let analysis: PersonAnalysis | null = null;
  for (let run = 0; run < RUNS + 2; run++) {
    analysis = await analyzer.analyze(image);
    const t = analyzer.lastTimings!;
    if (run < 2) continue; // warm-up
    for (const key of Object.keys(times) as (keyof typeof times)[]) times[key].push(t[key]);
  }
  const a = analysis!;
  const reference = golden.pose[MODEL].landmarks!;
  const distance = medianLandmarkDistance(a.landmarks, reference, image.height);
  const grid = downsampleMask(a.matte.data, image.width, image.height);
  const iouPose = maskIoU(grid, decodeGrid(golden.pose[MODEL].segmentation!.grid));
  const iouSelfie = maskIoU(grid, decodeGrid(golden.selfie.mask.grid));
  totals.push(median(times.total));
  const ms = (k: keyof typeof times): string => median(times[k]).toFixed(1);
  console.log(
    `| ${name} | ${image.width}×${image.height} | ${(distance * 100).toFixed(2)} | ${iouPose.toFixed(3)} | ${iouSelfie.toFixed(3)} | ${analyzer.lastTimings!.refined ? 'yes' : 'no'} | ${ms('total')} | ${ms('detect')} | ${ms('landmarks')} | ${ms('matte')} | ${ms('layout')} |`,
  );
  await overlay(image, a, reference, join(OUT, `${name}.png`));
}
console.log(`median of the per-photo medians: ${median(totals).toFixed(1)} ms (target < 100 ms); overlays in ${OUT}`);
await analyzer.dispose();
