/**
 * Where the customer's own clothes change on the body's centre line, as
 * depths (pixels below the shoulders, along the body's axis):
 *
 * - the old top's hem, going down from the chest until its colour gives
 *   way to another garment's, to skin or to the wall. A new top a little
 *   shorter than that is drawn down to it (place.ts), so the old hem does
 *   not show as a band below the new one;
 * - the old bottoms' top, going up from the hips until their colour gives
 *   way to the top's or to skin. New bottoms whose waistband sits lower
 *   are drawn up to it, so the old waistband does not show above the new
 *   one.
 */
import { REGION, type PersonAnalysis, type RawImage } from '../../../vision/types.ts';
import { GARMENTS_APART, clothingColour, isSkin, type SkinModel } from '../composite/colour.ts';
import { add, type BodyFrame } from './body.ts';

/**
 * In torso lengths along the axis: where the old top's colour is taken (the chest), how far down the search goes,
 * and how many rows of another colour end it (a stripe or a seam does not). In shoulder widths: the half-width of
 * the strip sampled on the centre line. Colours GARMENTS_APART apart are two garments.
 */
const OLD_HEM = { reference: 0.45, deepest: 1.5, run: 0.04, half: 0.06, contrast: GARMENTS_APART } as const;
/**
 * In torso lengths: where the old bottoms' colour is taken (just above the hip joints, below any waistband) and how
 * far up the search goes (the highest waistband worn, a little below the natural waist).
 */
const OLD_WAIST = { reference: 0.95, highest: 0.55 } as const;

type Rgb = [number, number, number];
type Strip = (depth: number) => Rgb | 'hand' | null;

const THIGHS = new Set<number>([REGION.leftUpperLeg, REGION.rightUpperLeg]);

/** Two colours of two garments. */
const apart = (a: Rgb, b: Rgb): boolean => Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]) > OLD_HEM.contrast;

/** The depth at which the old top ends on the centre line, or null when it cannot be told (bare chest, hands). */
export function oldTopHem(image: RawImage, person: PersonAnalysis, body: BodyFrame, skin: SkinModel | null): number | null {
  return edgeFrom(centreStrip(image, person, body, skin), body, OLD_HEM.reference, OLD_HEM.deepest);
}

/**
 * The depth at which the old bottoms begin on the centre line (their waistband's top, or the hem of a top worn over
 * them), or null when it cannot be told (bare skin or a hand there, one garment from the hips up to the waist).
 */
export function oldBottomsTop(image: RawImage, person: PersonAnalysis, body: BodyFrame, skin: SkinModel | null): number | null {
  // What is worn at the hips is the bottoms only if it is what is worn on the thighs: a top hanging over the hips
  // would otherwise be followed up to the first stripe or print on it.
  const thighs = clothingColour(image, person, THIGHS, skin);
  if (!thighs) return null;
  return edgeFrom(centreStrip(image, person, body, skin), body, OLD_WAIST.reference, OLD_WAIST.highest, thighs);
}

/**
 * Going from depth `from` to depth `to` (torso lengths, either way), the first depth where the strip's colour is
 * another garment's, skin or the wall for a run of rows: the last depth of the reference colour there. Null when the
 * colour at `from` is not a garment's, or not the `expected` garment's.
 */
function edgeFrom(strip: Strip, body: BodyFrame, from: number, to: number, expected?: Rgb): number | null {
  const start = from * body.torsoLength;
  const end = to * body.torsoLength;
  const step = end >= start ? 1 : -1;
  const reference = strip(start);
  if (reference === null || reference === 'hand' || (expected && apart(reference, expected))) return null;
  const run = Math.max(2, Math.round(OLD_HEM.run * body.torsoLength));
  let other = 0;
  for (let depth = start; depth * step <= end * step; depth += step) {
    const colour = strip(depth);
    // A hand over the centre line hides where the garment ends.
    if (colour === 'hand') return null;
    other = colour === null || apart(colour, reference) ? other + 1 : 0;
    if (other >= run) return depth - step * (run - 1);
  }
  return null;
}

/** The mean colour across the centre strip at a depth; 'hand' where a hand lies on it; null where it leaves the person or is skin. */
function centreStrip(image: RawImage, person: PersonAnalysis, body: BodyFrame, skin: SkinModel | null): Strip {
  const { width, height, channels, data } = image;
  const half = Math.max(1, Math.round(OLD_HEM.half * body.unit));
  return (depth) => {
    const centre = add(body.origin, body.down, depth);
    const sum: Rgb = [0, 0, 0];
    let outside = false;
    for (let k = -half; k <= half; k++) {
      const x = Math.round(centre.x + body.side.x * k);
      const y = Math.round(centre.y + body.side.y * k);
      if (x < 0 || y < 0 || x >= width || y >= height) {
        outside = true;
        continue;
      }
      const i = y * width + x;
      const label = person.layout.labels[i]!;
      if (label === REGION.leftHand || label === REGION.rightHand) return 'hand';
      if (person.matte.data[i]! < 128) outside = true;
      const j = i * channels;
      sum[0] += data[j]!;
      sum[1] += data[j + 1]!;
      sum[2] += data[j + 2]!;
    }
    if (outside) return null;
    const n = 2 * half + 1;
    const mean: Rgb = [sum[0] / n, sum[1] / n, sum[2] / n];
    return skin && isSkin(skin, mean[0], mean[1], mean[2]) ? null : mean;
  };
}
