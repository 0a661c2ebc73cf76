/**
 * The pixel geometry the pose pipeline needs: sampling a rotated rectangle of
 * a photo into a model's input tensor, mapping points between that tensor
 * and the photo, and mapping a mask made in the tensor's frame back onto the
 * photo. Pixel centres sit at +0.5 (as in MediaPipe's GPU path, which made
 * the goldens). Plain loops over typed arrays: these run on every photo.
 */
import type { Mask, RawImage, RotatedRect } from './types.ts';

export type Border = 'zero' | 'replicate';

export interface SampleOptions {
  /** Output value range for pixel values 0..255 (MediaPipe's output_tensor_float_range). */
  range: [number, number];
  border: Border;
}

/**
 * Samples `rect` of `image` bilinearly into an `outWidth`×`outHeight`
 * tensor (NHWC, RGB, float32). The rectangle's top edge is the tensor's top row.
 */
export function sampleRect(image: RawImage, rect: RotatedRect, outWidth: number, outHeight: number, options: SampleOptions): Float32Array {
  const { data, width: w, height: h, channels: ch } = image;
  const out = new Float32Array(outWidth * outHeight * 3);
  const [lo, hi] = options.range;
  const scale = (hi - lo) / 255;
  const replicate = options.border === 'replicate';
  const cos = Math.cos(rect.rotation);
  const sin = Math.sin(rect.rotation);
  // Source position (in index space, pixel centres at integers) of output pixel (u, v):
  // s = centre + R · ((u + 0.5) / outWidth − 0.5) · width, …) − 0.5
  const ux = (cos * rect.width) / outWidth;
  const uy = (sin * rect.width) / outWidth;
  const vx = (-sin * rect.height) / outHeight;
  const vy = (cos * rect.height) / outHeight;
  const x0 = rect.cx - 0.5 + ux * (0.5 - outWidth / 2) + vx * (0.5 - outHeight / 2);
  const y0 = rect.cy - 0.5 + uy * (0.5 - outWidth / 2) + vy * (0.5 - outHeight / 2);
  let o = 0;
  for (let v = 0; v < outHeight; v++) {
    let sx = x0 + vx * v;
    let sy = y0 + vy * v;
    for (let u = 0; u < outWidth; u++, sx += ux, sy += uy, o += 3) {
      const fx = Math.floor(sx);
      const fy = Math.floor(sy);
      const ax = sx - fx;
      const ay = sy - fy;
      if (fx < 0 || fy < 0 || fx >= w - 1 || fy >= h - 1) {
        // Edge or outside: clamp (replicate) or blend with zeros.
        let r = 0;
        let g = 0;
        let b = 0;
        for (let k = 0; k < 4; k++) {
          let px = fx + (k & 1);
          let py = fy + (k >> 1);
          const wgt = (k & 1 ? ax : 1 - ax) * (k >> 1 ? ay : 1 - ay);
          if (wgt === 0) continue;
          if (px < 0 || py < 0 || px >= w || py >= h) {
            if (!replicate) continue;
            px = px < 0 ? 0 : px >= w ? w - 1 : px;
            py = py < 0 ? 0 : py >= h ? h - 1 : py;
          }
          const i = (py * w + px) * ch;
          r += wgt * data[i]!;
          g += wgt * data[i + 1]!;
          b += wgt * data[i + 2]!;
        }
        out[o] = lo + r * scale;
        out[o + 1] = lo + g * scale;
        out[o + 2] = lo + b * scale;
        continue;
      }
      const i00 = (fy * w + fx) * ch;
      const i10 = i00 + ch;
      const i01 = i00 + w * ch;
      const i11 = i01 + ch;
      const w00 = (1 - ax) * (1 - ay);
      const w10 = ax * (1 - ay);
      const w01 = (1 - ax) * ay;
      const w11 = ax * ay;
      out[o] = lo + scale * (w00 * data[i00]! + w10 * data[i10]! + w01 * data[i01]! + w11 * data[i11]!);
      out[o + 1] = lo + scale * (w00 * data[i00 + 1]! + w10 * data[i10 + 1]! + w01 * data[i01 + 1]! + w11 * data[i11 + 1]!);
      out[o + 2] = lo + scale * (w00 * data[i00 + 2]! + w10 * data[i10 + 2]! + w01 * data[i01 + 2]! + w11 * data[i11 + 2]!);
    }
  }
  return out;
}

/** Maps a point given in the rectangle's normalised frame (0..1 across, 0..1 down) to image pixels. */
export function rectToImage(rect: RotatedRect, nx: number, ny: number): { x: number; y: number } {
  const dx = (nx - 0.5) * rect.width;
  const dy = (ny - 0.5) * rect.height;
  const cos = Math.cos(rect.rotation);
  const sin = Math.sin(rect.rotation);
  return { x: rect.cx + cos * dx - sin * dy, y: rect.cy + sin * dx + cos * dy };
}

/** The inverse of rectToImage. */
export function imageToRect(rect: RotatedRect, x: number, y: number): { nx: number; ny: number } {
  const dx = x - rect.cx;
  const dy = y - rect.cy;
  const cos = Math.cos(rect.rotation);
  const sin = Math.sin(rect.rotation);
  return { nx: (cos * dx + sin * dy) / rect.width + 0.5, ny: (-sin * dx + cos * dy) / rect.height + 0.5 };
}

/** The square, unrotated rectangle that letterboxes the whole image (MediaPipe's keep_aspect_ratio). */
export function letterboxRect(width: number, height: number): RotatedRect {
  const side = Math.max(width, height);
  return { cx: width / 2, cy: height / 2, width: side, height: side, rotation: 0 };
}

/**
 * Puts a float map (values 0..1, `mw`×`mh`, made in `rect`'s frame) onto an
 * image-sized float map, bilinearly; pixels outside the rectangle get 0.
 */
export function projectMapToImage(
  map: Float32Array,
  mw: number,
  mh: number,
  rect: RotatedRect,
  width: number,
  height: number,
): Float32Array {
  const out = new Float32Array(width * height);
  const cos = Math.cos(rect.rotation);
  const sin = Math.sin(rect.rotation);
  // Map index position (fx, fy) = (nx·mw − 0.5, ny·mh − 0.5) for image pixel centre (x + 0.5, y + 0.5).
  const ax = (cos / rect.width) * mw;
  const ay = (sin / rect.width) * mw;
  const bx = (-sin / rect.height) * mh;
  const by = (cos / rect.height) * mh;
  // Bounding box of the rectangle, to skip the pixels that are certainly outside.
  const hw = (Math.abs(cos) * rect.width + Math.abs(sin) * rect.height) / 2;
  const hh = (Math.abs(sin) * rect.width + Math.abs(cos) * rect.height) / 2;
  const xa = Math.max(0, Math.floor(rect.cx - hw));
  const xb = Math.min(width, Math.ceil(rect.cx + hw));
  const ya = Math.max(0, Math.floor(rect.cy - hh));
  const yb = Math.min(height, Math.ceil(rect.cy + hh));
  for (let y = ya; y < yb; y++) {
    const dy = y + 0.5 - rect.cy;
    const dx = xa + 0.5 - rect.cx;
    let fx = ax * dx + ay * dy + mw / 2 - 0.5;
    let fy = bx * dx + by * dy + mh / 2 - 0.5;
    let o = y * width + xa;
    for (let x = xa; x < xb; x++, o++, fx += ax, fy += bx) {
      if (fx <= -1 || fy <= -1 || fx >= mw || fy >= mh) continue;
      const ix = Math.floor(fx);
      const iy = Math.floor(fy);
      const tx = fx - ix;
      const ty = fy - iy;
      const inX0 = ix >= 0;
      const inX1 = ix + 1 < mw;
      const inY0 = iy >= 0;
      const inY1 = iy + 1 < mh;
      const row0 = iy * mw;
      const row1 = row0 + mw;
      let v = 0;
      if (inY0) {
        if (inX0) v += (1 - tx) * (1 - ty) * map[row0 + ix]!;
        if (inX1) v += tx * (1 - ty) * map[row0 + ix + 1]!;
      }
      if (inY1) {
        if (inX0) v += (1 - tx) * ty * map[row1 + ix]!;
        if (inX1) v += tx * ty * map[row1 + ix + 1]!;
      }
      out[o] = v;
    }
  }
  return out;
}

/** Resizes a float map bilinearly (pixel centres aligned, edges clamped). */
export function resizeMap(map: Float32Array, mw: number, mh: number, width: number, height: number): Float32Array {
  const out = new Float32Array(width * height);
  const sx = mw / width;
  const sy = mh / height;
  const x0s = new Int32Array(width);
  const x1s = new Int32Array(width);
  const txs = new Float32Array(width);
  for (let x = 0; x < width; x++) {
    const fx = Math.min(Math.max((x + 0.5) * sx - 0.5, 0), mw - 1);
    const ix = Math.floor(fx);
    x0s[x] = ix;
    x1s[x] = Math.min(ix + 1, mw - 1);
    txs[x] = fx - ix;
  }
  for (let y = 0; y < height; y++) {
    const fy = Math.min(Math.max((y + 0.5) * sy - 0.5, 0), mh - 1);
    const iy = Math.floor(fy);
    const ty = fy - iy;
    const r0 = iy * mw;
    const r1 = Math.min(iy + 1, mh - 1) * mw;
    let o = y * width;
    for (let x = 0; x < width; x++, o++) {
      const tx = txs[x]!;
      const a = map[r0 + x0s[x]!]! * (1 - tx) + map[r0 + x1s[x]!]! * tx;
      const b = map[r1 + x0s[x]!]! * (1 - tx) + map[r1 + x1s[x]!]! * tx;
      out[o] = a * (1 - ty) + b * ty;
    }
  }
  return out;
}

/** A float map 0..1 as an 8-bit mask. */
export function toMask(map: Float32Array, width: number, height: number): Mask {
  const data = new Uint8Array(width * height);
  for (let i = 0; i < data.length; i++) {
    const v = map[i]! * 255 + 0.5;
    data[i] = v <= 0 ? 0 : v >= 255 ? 255 : v;
  }
  return { data, width, height };
}
