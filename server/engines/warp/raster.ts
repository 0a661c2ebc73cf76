/**
 * Small raster helpers for the warp engine: decoding to RGB, resampling
 * single-channel maps and separable box blurs on typed arrays. Everything
 * here works on flat row-major arrays; nothing allocates per pixel.
 */
import sharp from 'sharp';
import type { RawImage } from '../../vision/types.ts';

/** A single-channel float map (row-major), e.g. an alpha or luminance plane. */
export interface FloatMap {
  data: Float32Array;
  width: number;
  height: number;
}

/** Decodes an image file to 8-bit RGB (alpha flattened onto white). */
export async function readRgb(path: string): Promise<RawImage> {
  const { data, info } = await sharp(path).flatten({ background: '#ffffff' }).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data: new Uint8Array(data.buffer, data.byteOffset, data.length), width: info.width, height: info.height, channels: 3 };
}

/** Resizes an RGB image so that its longer side is at most `maxSide` (area averaging); returns it unchanged when already small. */
export async function shrinkRgb(image: RawImage, maxSide: number): Promise<{ image: RawImage; scale: number }> {
  const longer = Math.max(image.width, image.height);
  if (longer <= maxSide) return { image, scale: 1 };
  const scale = maxSide / longer;
  const width = Math.max(1, Math.round(image.width * scale));
  const height = Math.max(1, Math.round(image.height * scale));
  const { data } = await sharp(image.data, { raw: { width: image.width, height: image.height, channels: image.channels } })
    .resize(width, height, { kernel: 'linear', fit: 'fill' })
    .raw()
    .toBuffer({ resolveWithObject: true });
  return {
    image: { data: new Uint8Array(data.buffer, data.byteOffset, data.length), width, height, channels: image.channels },
    scale: width / image.width,
  };
}

/** Encodes RGB pixels as PNG (fast compression: the runner re-encodes to the requested format). */
export async function encodePng(image: RawImage): Promise<Uint8Array> {
  const buffer = await sharp(image.data, { raw: { width: image.width, height: image.height, channels: image.channels } })
    .png({ compressionLevel: 2 })
    .toBuffer();
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.length);
}

/** Bilinear resampling of a float map to another size (pixel centres aligned). */
export function resizeMap(map: FloatMap, width: number, height: number): FloatMap {
  const out = new Float32Array(width * height);
  const sx = map.width / width;
  const sy = map.height / height;
  const maxX = map.width - 1;
  const maxY = map.height - 1;
  const src = map.data;
  for (let y = 0; y < height; y++) {
    let fy = (y + 0.5) * sy - 0.5;
    if (fy < 0) fy = 0;
    if (fy > maxY) fy = maxY;
    const y0 = Math.floor(fy);
    const y1 = y0 < maxY ? y0 + 1 : y0;
    const wy = fy - y0;
    const row0 = y0 * map.width;
    const row1 = y1 * map.width;
    for (let x = 0; x < width; x++) {
      let fx = (x + 0.5) * sx - 0.5;
      if (fx < 0) fx = 0;
      if (fx > maxX) fx = maxX;
      const x0 = Math.floor(fx);
      const x1 = x0 < maxX ? x0 + 1 : x0;
      const wx = fx - x0;
      const top = src[row0 + x0]! + (src[row0 + x1]! - src[row0 + x0]!) * wx;
      const bottom = src[row1 + x0]! + (src[row1 + x1]! - src[row1 + x0]!) * wx;
      out[y * width + x] = top + (bottom - top) * wy;
    }
  }
  return { data: out, width, height };
}

/** Box blur of radius `r` in place along rows then columns (running sums, edges clamped). */
export function boxBlur(map: FloatMap, radius: number): FloatMap {
  if (radius < 1) return map;
  const { width, height } = map;
  const tmp = new Float32Array(Math.max(width, height));
  const data = map.data;
  const norm = 1 / (2 * radius + 1);
  for (let y = 0; y < height; y++) blurLine(data, y * width, 1, width, radius, norm, tmp);
  for (let x = 0; x < width; x++) blurLine(data, x, width, height, radius, norm, tmp);
  return map;
}

function blurLine(
  data: Float32Array,
  start: number,
  stride: number,
  length: number,
  radius: number,
  norm: number,
  tmp: Float32Array,
): void {
  const last = length - 1;
  let sum = 0;
  for (let i = -radius; i <= radius; i++) sum += data[start + Math.min(last, Math.max(0, i)) * stride]!;
  for (let i = 0; i < length; i++) {
    tmp[i] = sum * norm;
    const add = Math.min(last, i + radius + 1);
    const remove = Math.max(0, i - radius);
    sum += data[start + add * stride]! - data[start + remove * stride]!;
  }
  for (let i = 0; i < length; i++) data[start + i * stride] = tmp[i]!;
}

/** Binary mask (1/0 bytes) → float map. */
export function maskToMap(mask: Uint8Array, width: number, height: number, scale = 1): FloatMap {
  const data = new Float32Array(width * height);
  for (let i = 0; i < data.length; i++) data[i] = mask[i]! * scale;
  return { data, width, height };
}

/** Approximate CIE Lab of 8-bit sRGB (D65), written into three planes. */
export function toLab(image: RawImage): { l: Float32Array; a: Float32Array; b: Float32Array } {
  const n = image.width * image.height;
  const l = new Float32Array(n);
  const a = new Float32Array(n);
  const b = new Float32Array(n);
  const lut = srgbToLinear();
  const c = image.channels;
  for (let i = 0, p = 0; i < n; i++, p += c) {
    const r = lut[image.data[p]!]!;
    const g = lut[image.data[p + 1]!]!;
    const bl = lut[image.data[p + 2]!]!;
    const x = labF((0.4124 * r + 0.3576 * g + 0.1805 * bl) / 0.9505);
    const y = labF(0.2126 * r + 0.7152 * g + 0.0722 * bl);
    const z = labF((0.0193 * r + 0.1192 * g + 0.9505 * bl) / 1.089);
    l[i] = 116 * y - 16;
    a[i] = 500 * (x - y);
    b[i] = 200 * (y - z);
  }
  return { l, a, b };
}

let linearLut: Float32Array | undefined;
function srgbToLinear(): Float32Array {
  if (linearLut) return linearLut;
  linearLut = new Float32Array(256);
  for (let v = 0; v < 256; v++) {
    const s = v / 255;
    linearLut[v] = s <= 0.04045 ? s / 12.92 : Math.pow((s + 0.055) / 1.055, 2.4);
  }
  return linearLut;
}

function labF(t: number): number {
  return t > 0.008856 ? Math.cbrt(t) : 7.787 * t + 16 / 116;
}

/** Median of a numeric array (copies it). */
export function median(values: ArrayLike<number>): number {
  const sorted = Float64Array.from(values).sort();
  if (sorted.length === 0) return 0;
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The value below which `q` (0..1) of the values lie. */
export function quantile(values: ArrayLike<number>, q: number): number {
  const sorted = Float64Array.from(values).sort();
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.round(q * (sorted.length - 1))))]!;
}
