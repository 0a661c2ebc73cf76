/**
 * The golden files' format: MediaPipe's own answers on the fixture photos,
 * written by tools/goldens/make-goldens.ts and read by the tests. Pure code
 * only (no Chromium, no sharp), so tests can use it anywhere. README.md in
 * this folder documents each field and the tolerances.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateRawSync, inflateRawSync } from 'node:zlib';

/** The folder holding the golden JSON files. */
export const GOLDENS_DIR = fileURLToPath(new URL('.', import.meta.url));

/** The format version; bump it when a field changes meaning. */
export const GOLDEN_FORMAT = 1;

/** Width of every mask grid, in cells; the height follows the photo's aspect. */
export const GRID_WIDTH = 64;

/** BlazePose's 33 landmarks, in MediaPipe's order. */
export const POSE_LANDMARK_NAMES = [
  'nose',
  'left_eye_inner',
  'left_eye',
  'left_eye_outer',
  'right_eye_inner',
  'right_eye',
  'right_eye_outer',
  'left_ear',
  'right_ear',
  'mouth_left',
  'mouth_right',
  'left_shoulder',
  'right_shoulder',
  'left_elbow',
  'right_elbow',
  'left_wrist',
  'right_wrist',
  'left_pinky',
  'right_pinky',
  'left_index',
  'right_index',
  'left_thumb',
  'right_thumb',
  'left_hip',
  'right_hip',
  'left_knee',
  'right_knee',
  'left_ankle',
  'right_ankle',
  'left_heel',
  'right_heel',
  'left_foot_index',
  'right_foot_index',
] as const;

/** The tolerances our pipeline must meet against these goldens (issue 3). */
export const GOLDEN_TOLERANCES = Object.freeze({
  /** Median landmark distance to MediaPipe's, as a fraction of the image height. */
  landmarkMedianOfHeight: 0.02,
  /** IoU of the masks thresholded at 0.5, on the golden's grid. */
  maskIoU: 0.95,
});

/** One landmark in image pixels; z is MediaPipe's depth scaled by the image width. */
export interface PixelLandmark {
  x: number;
  y: number;
  z: number;
  visibility: number;
}

/** A mask downsampled to a small grid of 0–255 cell means, deflated and base64-encoded. */
export interface MaskGrid {
  width: number;
  height: number;
  encoding: 'u8-deflate-raw-base64';
  data: string;
}

/** Summary of one mask at the photo's full resolution, plus its grid. */
export interface MaskStats {
  /** Fraction of pixels whose mask value is above 0.5 (byte ≥ 128). */
  areaFraction: number;
  /** Mean mask value over the image, 0..1. */
  mean: number;
  /** Pixel box [x0, y0, x1, y1) of the pixels above 0.5; null when there are none. */
  bbox: [number, number, number, number] | null;
  grid: MaskGrid;
}

/** MediaPipe Pose's answer for one model complexity. */
export interface PoseGolden {
  options: Record<string, unknown>;
  /** 33 landmarks, or null when MediaPipe found no person. */
  landmarks: PixelLandmark[] | null;
  segmentation: MaskStats | null;
}

/** MediaPipe SelfieSegmentation's answer. */
export interface SelfieGolden {
  options: Record<string, unknown>;
  mask: MaskStats;
}

/** One golden file: one fixture photo. */
export interface Golden {
  format: typeof GOLDEN_FORMAT;
  image: { file: string; sha256: string; width: number; height: number };
  generator: {
    script: string;
    date: string;
    chromium: string;
    playwrightCore: string;
    mediapipe: { pose: string; selfieSegmentation: string };
  };
  pose: { lite: PoseGolden; full: PoseGolden };
  selfie: SelfieGolden;
}

/** The grid height for a photo of the given size. */
export function gridHeight(width: number, height: number, gridWidth = GRID_WIDTH): number {
  return Math.max(1, Math.round((gridWidth * height) / width));
}

/**
 * Downsamples a one-byte-per-pixel mask: each cell is the rounded mean of the
 * pixels whose centres fall inside it.
 */
export function downsampleMask(mask: Uint8Array, width: number, height: number, gridWidth = GRID_WIDTH): Uint8Array {
  const gw = gridWidth;
  const gh = gridHeight(width, height, gw);
  const sums = new Float64Array(gw * gh);
  const counts = new Uint32Array(gw * gh);
  for (let y = 0; y < height; y++) {
    const gy = Math.min(gh - 1, Math.floor(((y + 0.5) * gh) / height));
    for (let x = 0; x < width; x++) {
      const gx = Math.min(gw - 1, Math.floor(((x + 0.5) * gw) / width));
      const cell = gy * gw + gx;
      sums[cell]! += mask[y * width + x]!;
      counts[cell]! += 1;
    }
  }
  const out = new Uint8Array(gw * gh);
  for (let i = 0; i < out.length; i++) out[i] = counts[i] ? Math.round(sums[i]! / counts[i]!) : 0;
  return out;
}

/** Encodes grid cells for a golden file. */
export function encodeGrid(cells: Uint8Array, width: number, height: number): MaskGrid {
  if (cells.length !== width * height) throw new Error(`grid has ${cells.length} cells, expected ${width}×${height}`);
  return { width, height, encoding: 'u8-deflate-raw-base64', data: deflateRawSync(cells, { level: 9 }).toString('base64') };
}

/** Decodes a golden grid back to its width × height cells, row-major. */
export function decodeGrid(grid: MaskGrid): Uint8Array {
  if (grid.encoding !== 'u8-deflate-raw-base64') throw new Error(`unknown grid encoding ${String(grid.encoding)}`);
  return new Uint8Array(inflateRawSync(Buffer.from(grid.data, 'base64')));
}

/** Area fraction, mean, box and grid of a one-byte-per-pixel mask. */
export function maskStats(mask: Uint8Array, width: number, height: number, gridWidth = GRID_WIDTH): MaskStats {
  let above = 0;
  let sum = 0;
  let x0 = width;
  let y0 = height;
  let x1 = 0;
  let y1 = 0;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const v = mask[y * width + x]!;
      sum += v;
      if (v >= 128) {
        above++;
        if (x < x0) x0 = x;
        if (y < y0) y0 = y;
        if (x + 1 > x1) x1 = x + 1;
        if (y + 1 > y1) y1 = y + 1;
      }
    }
  }
  const n = width * height;
  const cells = downsampleMask(mask, width, height, gridWidth);
  return {
    areaFraction: round(above / n, 5),
    mean: round(sum / 255 / n, 5),
    bbox: above ? [x0, y0, x1, y1] : null,
    grid: encodeGrid(cells, gridWidth, gridHeight(width, height, gridWidth)),
  };
}

/** IoU of two same-sized grids (or masks) thresholded at 0.5; 1 when both are empty. */
export function maskIoU(a: Uint8Array, b: Uint8Array): number {
  if (a.length !== b.length) throw new Error(`mask sizes differ: ${a.length} and ${b.length}`);
  let inter = 0;
  let union = 0;
  for (let i = 0; i < a.length; i++) {
    const pa = a[i]! >= 128;
    const pb = b[i]! >= 128;
    if (pa && pb) inter++;
    if (pa || pb) union++;
  }
  return union ? inter / union : 1;
}

/** Median 2-D distance between corresponding landmarks, as a fraction of the image height. */
export function medianLandmarkDistance(a: readonly PixelLandmark[], b: readonly PixelLandmark[], imageHeight: number): number {
  if (a.length !== b.length || a.length === 0) throw new Error(`landmark counts differ: ${a.length} and ${b.length}`);
  const d = a.map((p, i) => Math.hypot(p.x - b[i]!.x, p.y - b[i]!.y)).sort((u, v) => u - v);
  const mid = d.length >> 1;
  const median = d.length % 2 ? d[mid]! : (d[mid - 1]! + d[mid]!) / 2;
  return median / imageHeight;
}

/** Reads every golden file in the folder, keyed by photo name (no extension). */
export function loadGoldens(dir = GOLDENS_DIR): Map<string, Golden> {
  const out = new Map<string, Golden>();
  for (const file of readdirSync(dir).sort()) {
    if (!file.endsWith('.json')) continue;
    out.set(file.slice(0, -'.json'.length), JSON.parse(readFileSync(join(dir, file), 'utf8')) as Golden);
  }
  return out;
}

/** Rounds to a number of decimals, keeping the golden files short. */
export function round(value: number, decimals: number): number {
  const f = 10 ** decimals;
  return Math.round(value * f) / f;
}
