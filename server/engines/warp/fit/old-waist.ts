/**
 * How wide the customer's clothes are at a depth of the body: from the
 * body's axis outwards to bare skin (an arm hanging beside the waist).
 * Clothes that run on to the wall tell nothing: a sleeve hanging against
 * the waist is the same white as the shirt. The body's own width (body.ts) is measured from the layout's
 * labels, which give the pixels nearest an arm's bone to the arm: where the
 * arms hang close to the body, the body measured so is narrower than the
 * clothes worn there, and new garments placed to it leave the old ones
 * showing at their sides (bottoms: #75, #78, #99 of the wide set; tops on a
 * broad body: #52). New garments are widened towards this width (place.ts),
 * never past a share of the body's.
 */
import type { PersonAnalysis, RawImage } from '../../../vision/types.ts';
import { BARE, isSkin, type SkinModel } from '../composite/colour.ts';
import { add, type BodyFrame } from './body.ts';

/** Bare skin ends the clothes: this many skin-coloured pixels in a row (a speck of skin colour on cloth does not). */
const SKIN_RUN = 2 * BARE.radius + 1;

/**
 * The clothes' half-widths at a depth (pixels along the body's axis below the shoulders), left and right in pixels,
 * where bare skin ends them; 0 on a side where it does not.
 */
export type ClothedWidth = (depth: number) => { left: number; right: number };

export function clothedWidth(image: RawImage, person: PersonAnalysis, body: BodyFrame, skin: SkinModel): ClothedWidth {
  const { width, height, channels, data } = image;
  const limit = 1.5 * body.unit;
  const reach = (depth: number, sign: 1 | -1): number => {
    const centre = add(body.origin, body.down, depth);
    let last = 0;
    let skinRun = 0;
    for (let d = 0; d < limit; d++) {
      const x = Math.round(centre.x + sign * body.side.x * d);
      const y = Math.round(centre.y + sign * body.side.y * d);
      if (x < 0 || y < 0 || x >= width || y >= height) break;
      const i = y * width + x;
      if (person.matte.data[i]! < 128) break;
      const j = i * channels;
      if (isSkin(skin, data[j]!, data[j + 1]!, data[j + 2]!)) {
        if (++skinRun >= SKIN_RUN) return last;
        continue;
      }
      skinRun = 0;
      last = d;
    }
    // Clothes that run on to the wall may be a sleeve hanging beside the waist, not the waist: nothing is told.
    return 0;
  };
  return (depth) => ({ left: reach(depth, 1), right: reach(depth, -1) });
}
