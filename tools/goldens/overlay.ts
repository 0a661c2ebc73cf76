/**
 * Review overlays for the goldens: the photo twice side by side, left with
 * Pose full's landmarks, skeleton and segmentation outline, right with Pose
 * lite's landmarks and SelfieSegmentation's outline.
 */
import sharp, { type OverlayOptions } from 'sharp';
import type { Golden, PixelLandmark } from '../../test/goldens/golden-format.ts';

/** BlazePose's skeleton, as pairs of landmark indices. */
const SKELETON: [number, number][] = [
  [11, 12],
  [11, 13],
  [13, 15],
  [12, 14],
  [14, 16],
  [15, 17],
  [15, 19],
  [15, 21],
  [16, 18],
  [16, 20],
  [16, 22],
  [11, 23],
  [12, 24],
  [23, 24],
  [23, 25],
  [25, 27],
  [27, 29],
  [27, 31],
  [24, 26],
  [26, 28],
  [28, 30],
  [28, 32],
  [0, 2],
  [0, 5],
  [2, 7],
  [5, 8],
  [9, 10],
];

/** An RGBA layer with the outline (2 px) of the mask thresholded at 0.5. */
function outline(mask: Uint8Array, width: number, height: number, rgb: [number, number, number]): Buffer {
  const on = (x: number, y: number): boolean => x >= 0 && y >= 0 && x < width && y < height && mask[y * width + x]! >= 128;
  const out = Buffer.alloc(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const v = on(x, y);
      const edge = on(x - 1, y) !== v || on(x + 1, y) !== v || on(x, y - 1) !== v || on(x, y + 1) !== v;
      if (!edge) continue;
      const o = (y * width + x) * 4;
      out[o] = rgb[0];
      out[o + 1] = rgb[1];
      out[o + 2] = rgb[2];
      out[o + 3] = 255;
    }
  }
  return out;
}

function landmarksSvg(lms: PixelLandmark[] | null, colour: string, dx: number): string {
  if (!lms) return '';
  let s = '';
  for (const [a, b] of SKELETON) {
    const p = lms[a]!;
    const q = lms[b]!;
    s += `<line x1="${p.x + dx}" y1="${p.y}" x2="${q.x + dx}" y2="${q.y}" stroke="${colour}" stroke-width="2" opacity="0.8"/>`;
  }
  for (const p of lms) {
    // Hollow dots are landmarks MediaPipe itself thinks are not visible.
    const fill = p.visibility >= 0.5 ? colour : 'none';
    s += `<circle cx="${p.x + dx}" cy="${p.y}" r="5" fill="${fill}" stroke="${colour}" stroke-width="2"/>`;
  }
  return s;
}

/** Writes the side-by-side review PNG for one golden. */
export async function writeOverlay(
  photoPath: string,
  golden: Golden,
  masks: Partial<Record<'lite' | 'full' | 'selfie', Uint8Array>>,
  outPath: string,
): Promise<void> {
  const { width: w, height: h } = golden.image;
  const photo = await sharp(photoPath).removeAlpha().png().toBuffer();
  const layers: OverlayOptions[] = [
    { input: photo, left: 0, top: 0 },
    { input: photo, left: w, top: 0 },
  ];
  if (masks.full)
    layers.push({ input: outline(masks.full, w, h, [255, 0, 255]), raw: { width: w, height: h, channels: 4 }, left: 0, top: 0 });
  if (masks.selfie)
    layers.push({ input: outline(masks.selfie, w, h, [0, 255, 255]), raw: { width: w, height: h, channels: 4 }, left: w, top: 0 });
  const label = (text: string, x: number): string =>
    `<text x="${x + 10}" y="28" font-family="sans-serif" font-size="22" fill="white" stroke="black" stroke-width="1">${text}</text>`;
  const svg =
    `<svg width="${2 * w}" height="${h}" xmlns="http://www.w3.org/2000/svg">` +
    landmarksSvg(golden.pose.full.landmarks, 'red', 0) +
    landmarksSvg(golden.pose.lite.landmarks, 'yellow', w) +
    label('Pose full (red) + its mask (magenta)', 0) +
    label('Pose lite (yellow) + selfie mask (cyan)', w) +
    '</svg>';
  layers.push({ input: Buffer.from(svg), left: 0, top: 0 });
  await sharp({ create: { width: 2 * w, height: h, channels: 3, background: '#000' } })
    .composite(layers)
    .png()
    .toFile(outPath);
}
