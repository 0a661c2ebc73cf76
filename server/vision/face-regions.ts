/**
 * Regions of a face from its 468 Face Mesh landmarks: the face oval
 * (MediaPipe's FACEMESH_FACE_OVAL loop) filled as a mask, and a skin mask
 * (the oval less the eyes, brows and lips, each widened a little) that gives
 * a clean skin sample. Polygons are filled by scanline at pixel centres.
 */
import type { Mask } from './types.ts';

export interface Point {
  x: number;
  y: number;
}

/** An axis-aligned box in image pixels, [x0, x1) × [y0, y1). */
export interface Box {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

/** MediaPipe's FACEMESH_FACE_OVAL as one closed loop, clockwise on the image from the forehead's top. */
export const FACE_OVAL = [
  10, 338, 297, 332, 284, 251, 389, 356, 454, 323, 361, 288, 397, 365, 379, 378, 400, 377, 152, 148, 176, 149, 150, 136, 172, 58, 132, 93,
  234, 127, 162, 21, 54, 103, 67, 109,
] as const;

/** Closed loops of the features a skin sample must leave out (MediaPipe's eye, eyebrow and outer-lip contours). */
export const FACE_FEATURES = {
  rightEye: [33, 7, 163, 144, 145, 153, 154, 155, 133, 173, 157, 158, 159, 160, 161, 246],
  leftEye: [263, 249, 390, 373, 374, 380, 381, 382, 362, 398, 384, 385, 386, 387, 388, 466],
  rightBrow: [70, 63, 105, 66, 107, 55, 65, 52, 53, 46],
  leftBrow: [300, 293, 334, 296, 336, 285, 295, 282, 283, 276],
  lips: [61, 146, 91, 181, 84, 17, 314, 405, 321, 375, 291, 409, 270, 269, 267, 0, 37, 39, 40, 185],
} as const;

/** Features are widened about their centre by this before they are cut from the skin mask (lashes, shadows, lip edges). */
const FEATURE_MARGIN = 1.4;

/**
 * Fills a closed polygon (any shape; even-odd rule) into `mask` with `value`:
 * a pixel is inside when its centre (x + 0.5, y + 0.5) is.
 */
export function fillPolygon(mask: Mask, polygon: readonly Point[], value = 255): void {
  const { data, width, height } = mask;
  if (polygon.length < 3) return;
  let top = Infinity;
  let bottom = -Infinity;
  for (const p of polygon) {
    top = Math.min(top, p.y);
    bottom = Math.max(bottom, p.y);
  }
  const y0 = Math.max(0, Math.ceil(top - 0.5));
  const y1 = Math.min(height - 1, Math.floor(bottom - 0.5));
  const crossings: number[] = [];
  for (let y = y0; y <= y1; y++) {
    const yc = y + 0.5;
    crossings.length = 0;
    for (let i = 0, j = polygon.length - 1; i < polygon.length; j = i++) {
      const a = polygon[i]!;
      const b = polygon[j]!;
      // Half-open on y so that a vertex on the scanline counts once.
      if (a.y <= yc === b.y <= yc) continue;
      crossings.push(a.x + ((yc - a.y) / (b.y - a.y)) * (b.x - a.x));
    }
    crossings.sort((p, q) => p - q);
    for (let k = 0; k + 1 < crossings.length; k += 2) {
      const xa = Math.max(0, Math.ceil(crossings[k]! - 0.5));
      const xb = Math.min(width, Math.ceil(crossings[k + 1]! - 0.5));
      if (xb > xa) data.fill(value, y * width + xa, y * width + xb);
    }
  }
}

const loop = (landmarks: readonly Point[], indices: readonly number[]): Point[] => indices.map((i) => landmarks[i]!);

/** Scales a polygon about its vertices' mean. */
function widen(polygon: readonly Point[], factor: number): Point[] {
  const cx = polygon.reduce((s, p) => s + p.x, 0) / polygon.length;
  const cy = polygon.reduce((s, p) => s + p.y, 0) / polygon.length;
  return polygon.map((p) => ({ x: cx + (p.x - cx) * factor, y: cy + (p.y - cy) * factor }));
}

/** The face-oval polygon in image pixels. */
export function faceOval(landmarks: readonly Point[]): Point[] {
  return loop(landmarks, FACE_OVAL);
}

/** The filled face oval (0/255), the size of the image. */
export function faceOvalMask(landmarks: readonly Point[], width: number, height: number): Mask {
  const mask: Mask = { data: new Uint8Array(width * height), width, height };
  fillPolygon(mask, faceOval(landmarks));
  return mask;
}

/** The oval less the widened eyes, brows and lips (0/255): the face's bare skin, give or take hair over the forehead. */
export function faceSkinMask(landmarks: readonly Point[], width: number, height: number): Mask {
  const mask = faceOvalMask(landmarks, width, height);
  for (const indices of Object.values(FACE_FEATURES)) fillPolygon(mask, widen(loop(landmarks, indices), FEATURE_MARGIN), 0);
  return mask;
}

/** The box around points, wherever they are. */
export function extent(points: readonly Point[]): Box {
  let x0 = Infinity;
  let y0 = Infinity;
  let x1 = -Infinity;
  let y1 = -Infinity;
  for (const p of points) {
    x0 = Math.min(x0, p.x);
    y0 = Math.min(y0, p.y);
    x1 = Math.max(x1, p.x);
    y1 = Math.max(y1, p.y);
  }
  return { x0, y0, x1, y1 };
}

/** The box around points, clamped to the image. */
export function boundingBox(points: readonly Point[], width: number, height: number): Box {
  const { x0, y0, x1, y1 } = extent(points);
  return { x0: Math.max(0, x0), y0: Math.max(0, y0), x1: Math.min(width, x1), y1: Math.min(height, y1) };
}

/** How many pixels of a mask are set. */
export function maskArea(mask: Mask): number {
  let n = 0;
  for (let i = 0; i < mask.data.length; i++) if (mask.data[i]) n++;
  return n;
}
