/**
 * Where the customer's own top ends on the body's centre line: the depth
 * (pixels below the shoulders, along the body's axis) at which its colour
 * gives way to another garment's, to skin or to the wall. A new top a
 * little shorter than that is drawn down to it (place.ts), so the old hem
 * does not show as a band below the new one.
 */
import { REGION, type PersonAnalysis, type RawImage } from '../../../vision/types.ts';
import { GARMENTS_APART, isSkin, type SkinModel } from '../composite/colour.ts';
import { add, type BodyFrame } from './body.ts';

/**
 * In torso lengths along the axis: where the old top's colour is taken (the chest), how far down the search goes,
 * and how many rows of another colour end it (a stripe or a seam does not). In shoulder widths: the half-width of
 * the strip sampled on the centre line. Colours GARMENTS_APART apart are two garments.
 */
const OLD_HEM = { reference: 0.45, deepest: 1.5, run: 0.04, half: 0.06, contrast: GARMENTS_APART } as const;

/** The depth at which the old top ends on the centre line, or null when it cannot be told (bare chest, hands). */
export function oldTopHem(image: RawImage, person: PersonAnalysis, body: BodyFrame, skin: SkinModel | null): number | null {
  const { width, height, channels, data } = image;
  const half = Math.max(1, Math.round(OLD_HEM.half * body.unit));
  /** The mean colour across the centre strip at a depth; 'hand' where a hand lies on it; null where it leaves the person or is skin. */
  const strip = (depth: number): [number, number, number] | 'hand' | null => {
    const centre = add(body.origin, body.down, depth);
    const sum: [number, number, number] = [0, 0, 0];
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
    const mean: [number, number, number] = [sum[0] / n, sum[1] / n, sum[2] / n];
    return skin && isSkin(skin, mean[0], mean[1], mean[2]) ? null : mean;
  };
  const start = OLD_HEM.reference * body.torsoLength;
  const reference = strip(start);
  if (reference === null || reference === 'hand') return null;
  const run = Math.max(2, Math.round(OLD_HEM.run * body.torsoLength));
  let other = 0;
  for (let depth = start; depth <= OLD_HEM.deepest * body.torsoLength; depth++) {
    const colour = strip(depth);
    // A hand over the centre line hides where the top ends.
    if (colour === 'hand') return null;
    const apart =
      colour === null || Math.hypot(colour[0] - reference[0], colour[1] - reference[1], colour[2] - reference[2]) > OLD_HEM.contrast;
    other = apart ? other + 1 : 0;
    if (other >= run) return depth - run + 1;
  }
  return null;
}
