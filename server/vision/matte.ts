/**
 * The person matte: MediaPipe's selfie segmentation over the whole photo,
 * fused with the pose landmark model's own mask (sharper on the body, but
 * only inside its crop), then refined along the edges at full resolution
 * with a fast guided filter steered by the photo, so that the matte follows
 * hair strands and sleeve edges instead of the 256×256 models' blur.
 */
import { boxMean } from '../kernel/raster.ts';
import { projectMapToImage, resizeMap, sampleRect } from './geometry.ts';
import type { OrtSession } from '../onnx/ort.ts';
import type { Mask, RawImage, RotatedRect } from './types.ts';

export const SELFIE_INPUT = 256;

/** Weight of the pose model's mask where both masks cover a pixel. */
const POSE_MASK_WEIGHT = 0.7;
/** Guided filter: window radius at full resolution, regularisation, and subsampling. */
const GUIDED_RADIUS = 8;
const GUIDED_EPS = 1e-3;
const GUIDED_SUBSAMPLE = 8;
/** How much steeper the fused mask's edge ramp is made before the guided filter. */
const EDGE_CONTRAST = 4;
/** A coarse cell is flat when its slopes sum below this (per unit of colour 0..1) and its offset is within this of 0 or 1: < ½ of a byte over any colour. */
const FLAT_SLOPE = 0.5 / 255 / 3;
const FLAT_OFFSET = 0.5 / 255 / 2;

/** Runs the selfie segmentation on the photo squeezed to 256×256; the mask at model size (0..1). */
export async function selfieMask(session: OrtSession, image: RawImage): Promise<Float32Array> {
  const frame = { cx: image.width / 2, cy: image.height / 2, width: image.width, height: image.height, rotation: 0 };
  const input = sampleRect(image, frame, SELFIE_INPUT, SELFIE_INPUT, { range: [0, 1], border: 'replicate' });
  const outputs = await session.run({ [session.inputNames[0]!]: { data: input, dims: [1, SELFIE_INPUT, SELFIE_INPUT, 3] } });
  return outputs[session.outputNames[0]!]!.data;
}

/** Which of the pose ROI's pixels are inside it, as weights 0..1 with a soft border (so the fusion has no seam). */
function roiCoverage(roi: RotatedRect, width: number, height: number): Float32Array {
  const size = 32;
  const ramp = new Float32Array(size * size);
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const edge = Math.min(x + 0.5, y + 0.5, size - x - 0.5, size - y - 0.5) / (size * 0.06);
      ramp[y * size + x] = Math.min(1, edge);
    }
  }
  return projectMapToImage(ramp, size, size, roi, width, height);
}

export interface MatteInputs {
  image: RawImage;
  /** Selfie segmentation at model size. */
  selfie: Float32Array;
  /** The pose model's mask in its crop's frame, and the crop. */
  poseMask: Float32Array;
  poseMaskSize: number;
  roi: RotatedRect;
}

/**
 * Fuses both masks on a grid GUIDED_SUBSAMPLE times coarser than the photo
 * (finer than either model's 256×256 output), then lets the guided filter
 * bring the edges to full resolution.
 */
export function personMatte(inputs: MatteInputs): Mask {
  const { image, roi } = inputs;
  const s = GUIDED_SUBSAMPLE;
  const sw = Math.ceil(image.width / s);
  const sh = Math.ceil(image.height / s);
  const coarseRoi = { cx: roi.cx / s, cy: roi.cy / s, width: roi.width / s, height: roi.height / s, rotation: roi.rotation };
  const selfie = resizeMap(inputs.selfie, SELFIE_INPUT, SELFIE_INPUT, sw, sh);
  const pose = projectMapToImage(inputs.poseMask, inputs.poseMaskSize, inputs.poseMaskSize, coarseRoi, sw, sh);
  const coverage = roiCoverage(coarseRoi, sw, sh);
  const fused = new Float32Array(sw * sh);
  for (let i = 0; i < fused.length; i++) {
    const w = POSE_MASK_WEIGHT * coverage[i]!;
    // The models' masks ramp over 10–20 px of the photo; steepen the ramp and let the guided filter soften it along real edges.
    const v = (w * pose[i]! + (1 - w) * selfie[i]! - 0.5) * EDGE_CONTRAST + 0.5;
    fused[i] = v < 0 ? 0 : v > 1 ? 1 : v;
  }
  return guidedUpsample(image, fused, s, GUIDED_RADIUS, GUIDED_EPS);
}

/** The photo's R, G, B (0..1) averaged over s×s blocks: the guide on the coarse grid. */
function blockColour(image: RawImage, s: number, sw: number, sh: number): [Float32Array, Float32Array, Float32Array] {
  const { data, width, height, channels } = image;
  const r = new Float32Array(sw * sh);
  const g = new Float32Array(sw * sh);
  const b = new Float32Array(sw * sh);
  const counts = new Float32Array(sw * sh);
  const cellOfX = new Int32Array(width);
  for (let x = 0; x < width; x++) cellOfX[x] = Math.floor(x / s);
  for (let y = 0; y < height; y++) {
    const row = Math.floor(y / s) * sw;
    for (let x = 0, j = y * width * channels; x < width; x++, j += channels) {
      const cell = row + cellOfX[x]!;
      r[cell]! += data[j]!;
      g[cell]! += data[j + 1]!;
      b[cell]! += data[j + 2]!;
      counts[cell]! += 1;
    }
  }
  for (let i = 0; i < counts.length; i++) {
    const k = 1 / (counts[i]! * 255);
    r[i]! *= k;
    g[i]! *= k;
    b[i]! *= k;
  }
  return [r, g, b];
}

/**
 * He and Sun's fast guided filter with the photo's colour as the guide: the
 * local linear model q = a·I + b (I the RGB colour) is fitted on the coarse
 * grid where `p` lives, its coefficients are smoothed and upsampled, and
 * applied to every full-resolution pixel, so the matte's edges follow the
 * photo's. Returns an 8-bit mask.
 */
export function guidedUpsample(image: RawImage, p: Float32Array, s: number, radius: number, eps: number): Mask {
  const { width, height, data, channels } = image;
  const sw = Math.ceil(width / s);
  const sh = Math.ceil(height / s);
  const n = sw * sh;
  const [ir, ig, ib] = blockColour(image, s, sw, sh);
  const r = Math.max(1, Math.round(radius / s));
  const product = (u: Float32Array, v: Float32Array): Float32Array => {
    const out = new Float32Array(n);
    for (let i = 0; i < n; i++) out[i] = u[i]! * v[i]!;
    return boxMean(out, sw, sh, r);
  };
  const mr = boxMean(ir, sw, sh, r);
  const mg = boxMean(ig, sw, sh, r);
  const mb = boxMean(ib, sw, sh, r);
  const mp = boxMean(p, sw, sh, r);
  const mrp = product(ir, p);
  const mgp = product(ig, p);
  const mbp = product(ib, p);
  const mrr = product(ir, ir);
  const mrg = product(ir, ig);
  const mrb = product(ir, ib);
  const mgg = product(ig, ig);
  const mgb = product(ig, ib);
  const mbb = product(ib, ib);
  const ar = new Float32Array(n);
  const ag = new Float32Array(n);
  const ab = new Float32Array(n);
  const bb = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    // Σ + εI, and the covariance of colour and p.
    const srr = mrr[i]! - mr[i]! * mr[i]! + eps;
    const srg = mrg[i]! - mr[i]! * mg[i]!;
    const srb = mrb[i]! - mr[i]! * mb[i]!;
    const sgg = mgg[i]! - mg[i]! * mg[i]! + eps;
    const sgb = mgb[i]! - mg[i]! * mb[i]!;
    const sbb = mbb[i]! - mb[i]! * mb[i]! + eps;
    const cr = mrp[i]! - mr[i]! * mp[i]!;
    const cg = mgp[i]! - mg[i]! * mp[i]!;
    const cb = mbp[i]! - mb[i]! * mp[i]!;
    // a = Σ⁻¹ c, by the symmetric 3×3 inverse (cofactors / determinant).
    const c00 = sgg * sbb - sgb * sgb;
    const c01 = srb * sgb - srg * sbb;
    const c02 = srg * sgb - srb * sgg;
    const c11 = srr * sbb - srb * srb;
    const c12 = srb * srg - srr * sgb;
    const c22 = srr * sgg - srg * srg;
    const det = srr * c00 + srg * c01 + srb * c02;
    const a0 = (c00 * cr + c01 * cg + c02 * cb) / det;
    const a1 = (c01 * cr + c11 * cg + c12 * cb) / det;
    const a2 = (c02 * cr + c12 * cg + c22 * cb) / det;
    ar[i] = a0;
    ag[i] = a1;
    ab[i] = a2;
    bb[i] = mp[i]! - a0 * mr[i]! - a1 * mg[i]! - a2 * mb[i]!;
  }
  const mar = boxMean(ar, sw, sh, r);
  const mag = boxMean(ag, sw, sh, r);
  const mab = boxMean(ab, sw, sh, r);
  const mbb2 = boxMean(bb, sw, sh, r);

  // Cells whose neighbourhood is flat (no slope, offset ≈ 0 or 1) give 0 or 255 whatever the colour: most of a photo.
  const flat = new Int8Array(n).fill(-1);
  for (let i = 0; i < n; i++) {
    const slope = Math.abs(mar[i]!) + Math.abs(mag[i]!) + Math.abs(mab[i]!);
    if (slope < FLAT_SLOPE) flat[i] = mbb2[i]! < FLAT_OFFSET ? 0 : mbb2[i]! > 1 - FLAT_OFFSET ? 1 : -1;
  }

  // Full resolution: coefficients interpolated bilinearly between coarse cell centres ((i + 0.5)·s),
  // first down the columns once per row, then across; applied to the pixel's colour.
  const out = new Uint8Array(width * height);
  const x0s = new Int32Array(width);
  const txs = new Float32Array(width);
  for (let x = 0; x < width; x++) {
    const fx = Math.min(Math.max((x + 0.5) / s - 0.5, 0), sw - 1);
    x0s[x] = Math.min(Math.floor(fx), sw - 2);
    txs[x] = fx - x0s[x]!;
  }
  const rowA0 = new Float32Array(sw);
  const rowA1 = new Float32Array(sw);
  const rowA2 = new Float32Array(sw);
  const rowB = new Float32Array(sw);
  const rowFlat = new Int8Array(sw);
  for (let y = 0; y < height; y++) {
    const fy = Math.min(Math.max((y + 0.5) / s - 0.5, 0), sh - 1);
    const iy = Math.min(Math.floor(fy), Math.max(sh - 2, 0));
    const ty = fy - iy;
    const r0 = iy * sw;
    const r1 = Math.min(iy + 1, sh - 1) * sw;
    for (let c = 0; c < sw; c++) {
      rowA0[c] = mar[r0 + c]! + (mar[r1 + c]! - mar[r0 + c]!) * ty;
      rowA1[c] = mag[r0 + c]! + (mag[r1 + c]! - mag[r0 + c]!) * ty;
      rowA2[c] = mab[r0 + c]! + (mab[r1 + c]! - mab[r0 + c]!) * ty;
      rowB[c] = mbb2[r0 + c]! + (mbb2[r1 + c]! - mbb2[r0 + c]!) * ty;
      rowFlat[c] = flat[r0 + c] === flat[r1 + c] ? flat[r0 + c]! : -1;
    }
    for (let x = 0, o = y * width, j = y * width * channels; x < width; x++, o++, j += channels) {
      const c0 = x0s[x]!;
      const f = rowFlat[c0]!;
      if (f >= 0 && rowFlat[c0 + 1] === f) {
        out[o] = f * 255;
        continue;
      }
      const tx = txs[x]!;
      const a0 = rowA0[c0]! + (rowA0[c0 + 1]! - rowA0[c0]!) * tx;
      const a1 = rowA1[c0]! + (rowA1[c0 + 1]! - rowA1[c0]!) * tx;
      const a2 = rowA2[c0]! + (rowA2[c0 + 1]! - rowA2[c0]!) * tx;
      const b0 = rowB[c0]! + (rowB[c0 + 1]! - rowB[c0]!) * tx;
      // q = a·(rgb / 255) + b, as a byte: a·rgb + 255·b.
      const v = a0 * data[j]! + a1 * data[j + 1]! + a2 * data[j + 2]! + b0 * 255 + 0.5;
      out[o] = v <= 0 ? 0 : v >= 255 ? 255 : v;
    }
  }
  return { data: out, width, height };
}
