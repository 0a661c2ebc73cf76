/**
 * Putting the generated garment back into the customer's own photo at its
 * full resolution: only the body regions the garment covers (grown so a
 * looser garment fits, and feathered) take the generated pixels; the head,
 * the hands and everything far from the body keep the original pixels
 * exactly.
 */
import { REGION, type BodyLayout } from '../../vision/types.ts';
import type { ModelCategory } from './denoiser.ts';
import { CATEGORY_REGIONS } from './garment.ts';

/** Box sums of a single-channel float map with radius r (separable, clamped at the edges). */
function boxSum(src: Float32Array, width: number, height: number, r: number): Float32Array {
  const tmp = new Float32Array(src.length);
  const out = new Float32Array(src.length);
  for (let y = 0; y < height; y++) {
    let sum = 0;
    for (let x = -r; x <= r; x++) sum += src[y * width + Math.min(width - 1, Math.max(0, x))]!;
    for (let x = 0; x < width; x++) {
      tmp[y * width + x] = sum;
      sum += src[y * width + Math.min(width - 1, x + r + 1)]! - src[y * width + Math.max(0, x - r)]!;
    }
  }
  for (let x = 0; x < width; x++) {
    let sum = 0;
    for (let y = -r; y <= r; y++) sum += tmp[Math.min(height - 1, Math.max(0, y)) * width + x]!;
    for (let y = 0; y < height; y++) {
      out[y * width + x] = sum;
      sum += tmp[Math.min(height - 1, y + r + 1) * width + x]! - tmp[Math.max(0, y - r) * width + x]!;
    }
  }
  return out;
}

/**
 * Where the generated image replaces the original (0..1 per pixel): the
 * category's regions grown by `grow`·height, feathered by `feather`·height,
 * and exactly 0 on the head and hands.
 */
export function blendMask(layout: BodyLayout, category: ModelCategory, grow = 0.03, feather = 0.01): Float32Array {
  const { width, height, labels } = layout;
  const regions = new Set(CATEGORY_REGIONS[category]);
  const covered = Float32Array.from(labels, (label) => (regions.has(label) ? 1 : 0));
  const growR = Math.max(1, Math.round(grow * height));
  const grown = boxSum(covered, width, height, growR).map((s) => (s > 0 ? 1 : 0));
  const featherR = Math.max(1, Math.round(feather * height));
  const area = (2 * featherR + 1) ** 2;
  const soft = boxSum(grown, width, height, featherR).map((s) => s / area);
  const kept = new Set<number>([REGION.head, REGION.leftHand, REGION.rightHand]);
  for (let i = 0; i < soft.length; i++) if (kept.has(labels[i]!)) soft[i] = 0;
  return soft;
}

/** original·(1 − mask) + generated·mask, per RGB pixel; both images are the mask's size. */
export function blendImages(original: Uint8Array, generated: Uint8Array, mask: Float32Array): Uint8Array {
  const out = new Uint8Array(original.length);
  for (let i = 0; i < mask.length; i++) {
    const m = mask[i]!;
    for (let c = 0; c < 3; c++) {
      const k = 3 * i + c;
      out[k] = m === 0 ? original[k]! : Math.round(original[k]! * (1 - m) + generated[k]! * m);
    }
  }
  return out;
}
