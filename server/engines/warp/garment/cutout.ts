/**
 * Garment cut-out from a product photo on a plain background: the background
 * colour is estimated from the image borders, pixels connected to the border
 * that look like it are background, and the rest (largest parts only) is the
 * garment. The hard mask is found at reduced resolution and becomes a soft
 * alpha at full resolution.
 */
import type { RawImage } from '../../../vision/types.ts';
import { EngineError } from '../../types.ts';
import { boxBlur, maskToMap, quantile, resizeMap, shrinkRgb, toLab, median, type FloatMap } from '../raster.ts';

/** The longer side of the working copy the mask is computed on. */
export const CUTOUT_WORK_SIDE = 320;

/** A garment cut out of its photo. */
export interface GarmentCutout {
  /** The garment photo (RGB) at working resolution. */
  image: RawImage;
  /** Soft alpha (0..1), the size of `image`. */
  alpha: FloatMap;
  /** Hard mask (1 = garment) at reduced resolution, for shape analysis. */
  mask: Uint8Array;
  maskWidth: number;
  maskHeight: number;
  /** Full-resolution pixels per mask pixel. */
  maskScale: number;
  /** The estimated background colour (RGB). */
  background: [number, number, number];
}

export interface CutoutOptions {
  /** Restricts the garment to these pixels (1 = may be garment), at mask resolution; used for photos on a model. */
  allowed?: Uint8Array;
}

/** Cuts the garment out of `image`; throws `garment_not_detected` when nothing garment-like stands out. */
export async function cutOutGarment(image: RawImage, options: CutoutOptions = {}): Promise<GarmentCutout> {
  const { image: small } = await shrinkRgb(image, CUTOUT_WORK_SIDE);
  const { width, height } = small;
  const lab = toLab(small);
  const n = width * height;

  const border = borderIndices(width, height, Math.max(2, Math.round(Math.min(width, height) * 0.01)));
  // Studio backdrops are lit unevenly (vignetting, a gradient to the floor): model the
  // background per pixel by interpolating the four borders (a Coons patch) instead of one colour.
  const bgL = borderPatch(lab.l, width, height);
  const bgA = borderPatch(lab.a, width, height);
  const bgB = borderPatch(lab.b, width, height);
  const distance = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const dl = (lab.l[i]! - bgL[i]!) * 0.6; // soft shadows on the backdrop change lightness more than colour
    const da = lab.a[i]! - bgA[i]!;
    const db = lab.b[i]! - bgB[i]!;
    distance[i] = Math.sqrt(dl * dl + da * da + db * db);
  }
  const borderNoise = quantile(pick(distance, border), 0.8);
  // A clean backdrop gets a tight threshold, so that a white garment (a few units darker) still stands out.
  const threshold = Math.min(22, Math.max(2, borderNoise * 2.5 + 1.5));
  const background = floodFromBorder(distance, width, height, threshold, border);
  let mask: Uint8Array = new Uint8Array(n);
  for (let i = 0; i < n; i++) mask[i] = background[i] ? 0 : 1;
  if (options.allowed) for (let i = 0; i < n; i++) mask[i] = mask[i]! & options.allowed[i]!;
  mask = openMask(mask, width, height);
  mask = keepLargeComponents(mask, width, height, 0.15);

  let area = 0;
  for (let i = 0; i < n; i++) area += mask[i]!;
  const fraction = area / n;
  if (fraction < 0.02) throw new EngineError('garment_not_detected', 'no garment stands out from the background of the item photo');
  if (fraction > 0.97 || borderNoise > 30)
    throw new EngineError('garment_not_detected', 'the item photo has no plain background to cut the garment out of');

  const soft = resizeMap(maskToMap(mask, width, height), image.width, image.height);
  const scale = image.width / width;
  boxBlur(soft, Math.max(1, Math.round(scale * 0.75)));
  const alpha = soft.data;
  for (let i = 0; i < alpha.length; i++) {
    const v = (alpha[i]! - 0.5) * 1.4 + 0.5;
    alpha[i] = v < 0 ? 0 : v > 1 ? 1 : v;
  }

  return {
    image,
    alpha: soft,
    mask,
    maskWidth: width,
    maskHeight: height,
    maskScale: scale,
    background: labToRgbApprox(small, background),
  };
}

/** A smooth background plane from the image borders: each border line robustly cleaned and smoothed, then blended inwards. */
function borderPatch(plane: Float32Array, width: number, height: number): Float32Array {
  const top = cleanLine(Float32Array.from({ length: width }, (_, x) => plane[x]!));
  const bottom = cleanLine(Float32Array.from({ length: width }, (_, x) => plane[(height - 1) * width + x]!));
  const left = cleanLine(Float32Array.from({ length: height }, (_, y) => plane[y * width]!));
  const right = cleanLine(Float32Array.from({ length: height }, (_, y) => plane[y * width + width - 1]!));
  const out = new Float32Array(width * height);
  const c00 = (top[0]! + left[0]!) / 2;
  const c10 = (top[width - 1]! + right[0]!) / 2;
  const c01 = (bottom[0]! + left[height - 1]!) / 2;
  const c11 = (bottom[width - 1]! + right[height - 1]!) / 2;
  for (let y = 0; y < height; y++) {
    const v = height > 1 ? y / (height - 1) : 0;
    for (let x = 0; x < width; x++) {
      const u = width > 1 ? x / (width - 1) : 0;
      const corners = (1 - u) * (1 - v) * c00 + u * (1 - v) * c10 + (1 - u) * v * c01 + u * v * c11;
      out[y * width + x] = (1 - v) * top[x]! + v * bottom[x]! + (1 - u) * left[y]! + u * right[y]! - corners;
    }
  }
  return out;
}

/** Replaces values far from the line's median (a garment touching the border) and smooths what is left. */
function cleanLine(line: Float32Array): Float32Array {
  const mid = median(line);
  const deviations = Float32Array.from(line, (v) => Math.abs(v - mid));
  const spread = median(deviations) * 3 + 2;
  for (let i = 0; i < line.length; i++) if (Math.abs(line[i]! - mid) > spread) line[i] = mid;
  return boxBlur({ data: line, width: line.length, height: 1 }, Math.max(2, Math.round(line.length * 0.05))).data;
}

function borderIndices(width: number, height: number, thickness: number): Int32Array {
  const out: number[] = [];
  for (let y = 0; y < height; y++) {
    const inRows = y < thickness || y >= height - thickness;
    for (let x = 0; x < width; x++) {
      if (inRows || x < thickness || x >= width - thickness) out.push(y * width + x);
    }
  }
  return Int32Array.from(out);
}

function pick(values: Float32Array, indices: Int32Array): Float32Array {
  const out = new Float32Array(indices.length);
  for (let i = 0; i < indices.length; i++) out[i] = values[indices[i]!]!;
  return out;
}

function floodFromBorder(distance: Float32Array, width: number, height: number, threshold: number, border: Int32Array): Uint8Array {
  const seen = new Uint8Array(width * height);
  const queue = new Int32Array(width * height);
  let head = 0;
  let tail = 0;
  for (const i of border) {
    if (distance[i]! < threshold && !seen[i]) {
      seen[i] = 1;
      queue[tail++] = i;
    }
  }
  while (head < tail) {
    const i = queue[head++]!;
    const x = i % width;
    for (let k = 0; k < 4; k++) {
      const j = k === 0 ? (x > 0 ? i - 1 : -1) : k === 1 ? (x < width - 1 ? i + 1 : -1) : k === 2 ? i - width : i + width;
      if (j < 0 || j >= seen.length || seen[j] || distance[j]! >= threshold) continue;
      seen[j] = 1;
      queue[tail++] = j;
    }
  }
  return seen;
}

/** Removes specks and thin threads (3×3 erosion then dilation). */
function openMask(mask: Uint8Array, width: number, height: number): Uint8Array {
  return morph(morph(mask, width, height, true), width, height, false);
}

function morph(mask: Uint8Array, width: number, height: number, erode: boolean): Uint8Array {
  const out = new Uint8Array(mask.length);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      let v = erode ? 1 : 0;
      for (let dy = -1; dy <= 1 && v === (erode ? 1 : 0); dy++) {
        const yy = Math.min(height - 1, Math.max(0, y + dy));
        for (let dx = -1; dx <= 1; dx++) {
          const xx = Math.min(width - 1, Math.max(0, x + dx));
          const m = mask[yy * width + xx]!;
          if (erode && !m) {
            v = 0;
            break;
          }
          if (!erode && m) {
            v = 1;
            break;
          }
        }
      }
      out[y * width + x] = v;
    }
  }
  return out;
}

/** Keeps the largest 4-connected component and any at least `minShare` of its size. */
export function keepLargeComponents(mask: Uint8Array, width: number, height: number, minShare: number): Uint8Array {
  const labels = new Int32Array(mask.length);
  const sizes: number[] = [0];
  const queue = new Int32Array(mask.length);
  for (let start = 0; start < mask.length; start++) {
    if (!mask[start] || labels[start]) continue;
    const label = sizes.length;
    let head = 0;
    let tail = 0;
    queue[tail++] = start;
    labels[start] = label;
    while (head < tail) {
      const i = queue[head++]!;
      const x = i % width;
      if (x > 0 && mask[i - 1] && !labels[i - 1]) ((labels[i - 1] = label), (queue[tail++] = i - 1));
      if (x < width - 1 && mask[i + 1] && !labels[i + 1]) ((labels[i + 1] = label), (queue[tail++] = i + 1));
      if (i >= width && mask[i - width] && !labels[i - width]) ((labels[i - width] = label), (queue[tail++] = i - width));
      if (i + width < mask.length && mask[i + width] && !labels[i + width]) ((labels[i + width] = label), (queue[tail++] = i + width));
    }
    sizes.push(tail);
  }
  const largest = Math.max(0, ...sizes);
  const out = new Uint8Array(mask.length);
  for (let i = 0; i < mask.length; i++) out[i] = labels[i] && sizes[labels[i]!]! >= largest * minShare ? 1 : 0;
  return out;
}

function labToRgbApprox(small: RawImage, background: Uint8Array): [number, number, number] {
  let r = 0;
  let g = 0;
  let b = 0;
  let count = 0;
  for (let i = 0, p = 0; i < background.length; i++, p += small.channels) {
    if (!background[i]) continue;
    r += small.data[p]!;
    g += small.data[p + 1]!;
    b += small.data[p + 2]!;
    count++;
  }
  return count ? [r / count, g / count, b / count] : [255, 255, 255];
}
