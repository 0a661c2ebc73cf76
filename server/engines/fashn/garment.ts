/**
 * What the model needs to know about a garment photo and the regions a
 * garment covers: the model's category for a request's category (or one
 * detected from the photo), the body regions each category dresses, and a
 * worn garment with everything but the garment greyed out (127), as the
 * reference does with its human parser's clothing labels.
 */
import { components, squareFilter } from '../../kernel/raster.ts';
import { REGION, type Mask } from '../../vision/types.ts';
import type { GarmentCategory } from '../types.ts';
import type { WarpCategory } from '../warp/types.ts';
import type { ModelCategory } from './denoiser.ts';

/** The body regions a category covers (where its pixels may change). */
export const CATEGORY_REGIONS: Readonly<Record<ModelCategory, readonly number[]>> = {
  tops: [REGION.neck, REGION.torso, REGION.leftUpperArm, REGION.leftLowerArm, REGION.rightUpperArm, REGION.rightLowerArm],
  bottoms: [REGION.hips, REGION.leftUpperLeg, REGION.leftLowerLeg, REGION.rightUpperLeg, REGION.rightLowerLeg],
  'one-pieces': [
    REGION.neck,
    REGION.torso,
    REGION.leftUpperArm,
    REGION.leftLowerArm,
    REGION.rightUpperArm,
    REGION.rightLowerArm,
    REGION.hips,
    REGION.leftUpperLeg,
    REGION.leftLowerLeg,
    REGION.rightUpperLeg,
    REGION.rightLowerLeg,
  ],
};

/** The model category for a request's category; `auto` is decided from the photo by the caller. */
export function modelCategory(category: Exclude<GarmentCategory, 'auto'>): ModelCategory {
  switch (category) {
    case 'bottom':
      return 'bottoms';
    case 'dress':
      return 'one-pieces';
    default:
      return 'tops';
  }
}

/**
 * A category guessed from a flat-lay photo's silhouette (pixels that differ
 * from the corner colour): tall with a gap between two legs in its lower
 * third → bottoms, tall without → one-pieces, otherwise tops.
 */
export function detectFlatLayCategory(rgb: Uint8Array, width: number, height: number): ModelCategory {
  const corner = [rgb[0]!, rgb[1]!, rgb[2]!];
  const fg = (x: number, y: number): boolean => {
    const at = (y * width + x) * 3;
    return Math.abs(rgb[at]! - corner[0]!) + Math.abs(rgb[at + 1]! - corner[1]!) + Math.abs(rgb[at + 2]! - corner[2]!) > 60;
  };
  let [minX, minY, maxX, maxY] = [width, height, -1, -1];
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if (!fg(x, y)) continue;
      minX = Math.min(minX, x);
      maxX = Math.max(maxX, x);
      minY = Math.min(minY, y);
      maxY = Math.max(maxY, y);
    }
  }
  if (maxX < 0) return 'tops';
  const [w, h] = [maxX - minX + 1, maxY - minY + 1];
  if (h < 1.3 * w) return 'tops';
  // A row in the lower third that crosses background between two garment runs has a gap between legs.
  let gapRows = 0;
  const rowsChecked = Math.max(1, Math.floor(h / 3));
  for (let y = maxY - rowsChecked + 1; y <= maxY; y++) {
    let runs = 0;
    let inside = false;
    for (let x = minX; x <= maxX; x++) {
      const f = fg(x, y);
      if (f && !inside) runs++;
      inside = f;
    }
    if (runs >= 2) gapRows++;
  }
  return gapRows > rowsChecked / 2 ? 'bottoms' : 'one-pieces';
}

/** The warp cut-out's category whose worn-garment mask stands for the reference parser's labels of a model category. */
export function wornCategory(category: ModelCategory): WarpCategory {
  return category === 'bottoms' ? 'bottom' : category === 'one-pieces' ? 'dress' : 'top';
}

/** A piece of the garment smaller than this share of its largest piece is a stray, not the garment. */
const STRAY_PIECE = 0.1;

/**
 * The garment's solid pixels (mask at least 128) less anything thinner than 2·radius + 1 (the outline of a bare arm
 * or neck, whose edge pixels, blended with the background, no longer look like skin: a morphological opening) and
 * less stray pieces (trousers showing between a hand and the hip, in a colour close to the top's).
 */
export function solidGarment(garment: Mask, radius: number): Mask {
  const { width, height } = garment;
  const solid = new Uint8Array(garment.data.length);
  for (let i = 0; i < solid.length; i++) solid[i] = garment.data[i]! >= 128 ? 1 : 0;
  const opened = squareFilter(squareFilter(solid, width, height, radius, false), width, height, radius, true);
  const { label, sizes } = components(opened, width, 1);
  const largest = Math.max(0, ...sizes);
  const out = new Uint8Array(opened.length);
  for (let i = 0; i < out.length; i++) if (opened[i] && sizes[label[i]!]! >= STRAY_PIECE * largest) out[i] = 255;
  return { data: out, width, height };
}

/**
 * A worn garment photo with every pixel that is not the garment set to 127: skin, hair, background and the model's
 * other clothes alike (the reference keeps only its parser's clothing labels of the category).
 */
export function greyOutsideGarment(rgb: Uint8Array, garment: Mask): Uint8Array {
  const out = Uint8Array.from(rgb);
  for (let i = 0; i < garment.data.length; i++) {
    if (garment.data[i]! >= 128) continue;
    out[3 * i] = out[3 * i + 1] = out[3 * i + 2] = 127;
  }
  return out;
}
