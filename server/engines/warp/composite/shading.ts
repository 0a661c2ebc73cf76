/**
 * The photo's shading (folds, shadows, light falling across the body) told
 * apart from its colours, so that a new garment or painted skin takes the
 * first and not the second.
 *
 * Shading is a pixel's luminance near it over its luminance further around.
 * Taken over all pixels alike, that ratio also carries every edge between two
 * materials: dark trousers under a white shirt show through a new white dress
 * as grey trousers, an old striped sleeve paints striped skin. Here each
 * pixel is compared only with pixels of its own material, told by luminance:
 * pixels are sorted into bins a factor of two apart in luminance (each pixel
 * shared between its two nearest bins), both means are taken within each bin,
 * and a pixel's ratio is its bins' ratios mixed by its share in each. A fold
 * darkens a fabric by well under half and stays within its bin; black
 * against white, or a stripe against its ground, falls in bins apart.
 *
 * Shading varies slowly, so it is measured at half resolution (a quarter of
 * the pixels) and scaled back up. Each bin's window sums come from
 * summed-area tables, looked up only at the bin's own pixels: box filters
 * over the whole photo for each of the eight bins took 2.5 times as long.
 */

/** Luminance bins are this factor apart (as logarithms). */
const BIN = Math.log(2);
/** Added to luminance so that near-black pixels do not give huge ratios. */
const OFFSET = 6;
const LOWEST = Math.log(OFFSET);
const BINS = Math.ceil((Math.log(255 + OFFSET) - LOWEST) / BIN) + 1;

/**
 * Per pixel of a `width`×`height` luminance image: its mean luminance within `fine` pixels over its mean within
 * `coarse` pixels, both among pixels of its own material (see above). 1 where there is no shading.
 */
export function shadingRatio(lum: Float32Array, width: number, height: number, fine: number, coarse: number): Float32Array {
  if (width < 4 || height < 4) return binnedRatio(lum, width, height, fine, coarse);
  const w = Math.ceil(width / 2);
  const h = Math.ceil(height / 2);
  const half = new Float32Array(w * h);
  for (let y = 0; y < h; y++) {
    const y0 = 2 * y;
    const y1 = Math.min(height - 1, y0 + 1);
    for (let x = 0; x < w; x++) {
      const x0 = 2 * x;
      const x1 = Math.min(width - 1, x0 + 1);
      half[y * w + x] = (lum[y0 * width + x0]! + lum[y0 * width + x1]! + lum[y1 * width + x0]! + lum[y1 * width + x1]!) / 4;
    }
  }
  const small = binnedRatio(half, w, h, Math.max(1, Math.round(fine / 2)), Math.max(1, Math.round(coarse / 2)));
  // Bilinear back to full size; half-resolution pixel (x, y) is centred on full-resolution 2x + 0.5.
  const out = new Float32Array(width * height);
  for (let y = 0; y < height; y++) {
    const sy = Math.min(h - 1, Math.max(0, (y - 0.5) / 2));
    const ya = Math.floor(sy);
    const yb = Math.min(h - 1, ya + 1);
    const fy = sy - ya;
    for (let x = 0; x < width; x++) {
      const sx = Math.min(w - 1, Math.max(0, (x - 0.5) / 2));
      const xa = Math.floor(sx);
      const xb = Math.min(w - 1, xa + 1);
      const fx = sx - xa;
      const top = small[ya * w + xa]! * (1 - fx) + small[ya * w + xb]! * fx;
      const bottom = small[yb * w + xa]! * (1 - fx) + small[yb * w + xb]! * fx;
      out[y * width + x] = top * (1 - fy) + bottom * fy;
    }
  }
  return out;
}

function binnedRatio(lum: Float32Array, width: number, height: number, fine: number, coarse: number): Float32Array {
  const n = width * height;
  const bin = new Uint8Array(n);
  const share = new Float32Array(n);
  const count = new Float64Array(BINS + 1);
  for (let i = 0; i < n; i++) {
    const t = (Math.log(lum[i]! + OFFSET) - LOWEST) / BIN;
    const k = Math.min(BINS - 1, Math.max(0, Math.floor(t)));
    bin[i] = k;
    share[i] = Math.min(1, Math.max(0, t - k));
    count[k]! += 1 - share[i]!;
    count[k + 1]! += share[i]!;
  }
  const ratio = new Float32Array(n);
  // Summed-area tables of the bin's weights and weighted luminance, (width + 1) × (height + 1), reused for every bin:
  // a window's sum is four lookups, needed only at the bin's own pixels.
  const stride = width + 1;
  const weights = new Float64Array(stride * (height + 1));
  const sums = new Float64Array(stride * (height + 1));
  for (let k = 0; k <= BINS; k++) {
    if (count[k]! < 1) continue;
    for (let y = 0; y < height; y++) {
      let rowWeight = 0;
      let rowSum = 0;
      for (let x = 0, i = y * width, o = (y + 1) * stride + 1; x < width; x++, i++, o++) {
        const w = bin[i] === k ? 1 - share[i]! : bin[i] === k - 1 ? share[i]! : 0;
        rowWeight += w;
        rowSum += w * lum[i]!;
        weights[o] = weights[o - stride]! + rowWeight;
        sums[o] = sums[o - stride]! + rowSum;
      }
    }
    for (let y = 0; y < height; y++) {
      const fy0 = Math.max(0, y - fine) * stride;
      const fy1 = Math.min(height, y + fine + 1) * stride;
      const cy0 = Math.max(0, y - coarse) * stride;
      const cy1 = Math.min(height, y + coarse + 1) * stride;
      for (let x = 0, i = y * width; x < width; x++, i++) {
        const w = bin[i] === k ? 1 - share[i]! : bin[i] === k - 1 ? share[i]! : 0;
        if (w === 0) continue;
        const fx0 = Math.max(0, x - fine);
        const fx1 = Math.min(width, x + fine + 1);
        const cx0 = Math.max(0, x - coarse);
        const cx1 = Math.min(width, x + coarse + 1);
        const near =
          (sums[fy1 + fx1]! - sums[fy0 + fx1]! - sums[fy1 + fx0]! + sums[fy0 + fx0]!) /
          (weights[fy1 + fx1]! - weights[fy0 + fx1]! - weights[fy1 + fx0]! + weights[fy0 + fx0]!);
        const around =
          (sums[cy1 + cx1]! - sums[cy0 + cx1]! - sums[cy1 + cx0]! + sums[cy0 + cx0]!) /
          (weights[cy1 + cx1]! - weights[cy0 + cx1]! - weights[cy1 + cx0]! + weights[cy0 + cx0]!);
        ratio[i]! += (w * (near + OFFSET)) / (around + OFFSET);
      }
    }
  }
  return ratio;
}
