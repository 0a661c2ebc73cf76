/**
 * What the model needs to know about a garment photo and the regions a
 * garment covers: the model's category for a request's category (or one
 * detected from the photo), the body regions each category dresses, and a
 * worn garment with everything but the garment greyed out (127), as the
 * reference does with its human parser.
 */
import { REGION, type BodyLayout, type Mask } from '../../vision/types.ts';
import type { GarmentCategory } from '../types.ts';
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

/** A worn garment photo with every pixel outside the garment's regions (or outside the person) set to 127. */
export function greyOutsideGarment(rgb: Uint8Array, layout: BodyLayout, matte: Mask, category: ModelCategory): Uint8Array {
  const keep = new Set(CATEGORY_REGIONS[category]);
  const out = Uint8Array.from(rgb);
  for (let i = 0; i < layout.labels.length; i++) {
    if (keep.has(layout.labels[i]!) && matte.data[i]! >= 128) continue;
    out[3 * i] = out[3 * i + 1] = out[3 * i + 2] = 127;
  }
  return out;
}
