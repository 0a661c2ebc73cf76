/**
 * Where the customer's own clothes change on the body's centre line, as
 * depths (pixels below the shoulders, along the body's axis):
 *
 * - the old top's hem, going down from the chest until its colour gives
 *   way to another garment's, to skin or to the wall. A new top a little
 *   shorter than that is drawn down to it (place.ts), so the old hem does
 *   not show as a band below the new one;
 * - the old bottoms' top, going up from the hips until their colour gives
 *   way to the top's or to skin, on the centre line and a little to either
 *   side of it. New bottoms whose waistband sits lower are drawn up to it,
 *   so the old waistband does not show above the new one.
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
 * In torso lengths: where the old bottoms' colour is taken (just above the hip joints, below any waistband), how far
 * below that it is looked for when a belt or buckle lies there, how far up the search goes (the highest waistband
 * worn, a little below the natural waist), the widest belt, and how many rows of skin or wall end one.
 */
const OLD_WAIST = { reference: 0.95, lowest: 1.1, highest: 0.55, belt: 0.12, bare: 0.01 } as const;
/** Besides the centre line, the old bottoms' top is looked for this many shoulder widths to either side of it. */
const SIDE_STRIPS = [0.15] as const;

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
 * them), or null when it cannot be told (bare skin or a hand there, one garment from the hips up to the waist). Where
 * they are seen to begin higher a little to either side (SIDE_STRIPS), that is where they begin: a waistband rising
 * over the hips, or a navel's bare skin at the centre line below folded forearms, left a band of the old jeans above
 * new shorts at the sides, painted as skin in blocks (#6).
 */
export function oldBottomsTop(image: RawImage, person: PersonAnalysis, body: BodyFrame, skin: SkinModel | null): number | null {
  // What is worn at the hips is the bottoms only if it is what is worn on the thighs: a top hanging over the hips
  // would otherwise be followed up to the first stripe or print on it.
  const thighs = clothingColour(image, person, THIGHS, skin);
  if (!thighs) return null;
  const centre = bottomsTopAlong(centreStrip(image, person, body, skin), body, thighs);
  if (centre === null) return null;
  const sides = SIDE_STRIPS.flatMap((offset) => [-offset, offset]).map((offset) =>
    bottomsTopAlong(centreStrip(image, person, body, skin, offset), body, thighs),
  );
  return Math.min(centre, ...sides.filter((top): top is number => top !== null));
}

/** Where the old bottoms (`thighs`: their colour on the thighs) begin along a strip down the body; null if not told. */
function bottomsTopAlong(strip: Strip, body: BodyFrame, thighs: Rgb): number | null {
  // A belt or its buckle may lie where the colour is taken: the bottoms' own cloth is looked for below it.
  const from = firstOf(strip, body, OLD_WAIST.reference, OLD_WAIST.lowest, thighs);
  const reference = from === null ? null : strip(from * body.torsoLength);
  if (from === null || reference === null || reference === 'hand') return null;
  // A belt is part of the bottoms: past one, the bottoms go on up only where they are seen to end at skin or the
  // wall. Where something else ends them (a tucked top, or a stripe of their colour in a top's print), they begin
  // below the belt.
  const below = edgeFrom(strip, body, from, OLD_WAIST.highest, thighs);
  let edge = below;
  while (edge !== null) {
    const band = bandAbove(strip, body, edge, reference);
    if (band === null) return below;
    if (band.above === 'bare') return band.top;
    edge = edgeFrom(strip, body, band.top / body.torsoLength, OLD_WAIST.highest, thighs);
  }
  return below;
}

/**
 * The first depth from `from` down to `to` (torso lengths) where the strip shows the `expected` garment for a run of
 * rows, in torso lengths; null if none, or a hand first.
 */
function firstOf(strip: Strip, body: BodyFrame, from: number, to: number, expected: Rgb): number | null {
  const run = Math.max(2, Math.round(OLD_HEM.run * body.torsoLength));
  const first = strip(from * body.torsoLength);
  if (first !== null && first !== 'hand' && !apart(first, expected)) return from;
  let seen = 0;
  for (let depth = from * body.torsoLength; depth <= to * body.torsoLength; depth++) {
    const colour = strip(depth);
    if (colour === 'hand') return null;
    seen = colour !== null && !apart(colour, expected) ? seen + 1 : 0;
    if (seen >= run) return (depth - run + 1) / body.torsoLength;
  }
  return null;
}

/**
 * What lies above the bottoms where their colour (`reference`) gives way at depth `edge`: a belt (rows neither of
 * their colour nor bare, no wider than OLD_WAIST.belt) and above it skin or the wall ('bare', its top the first bare
 * row) or the bottoms' cloth again ('cloth', its top the first row of it). Where the bottoms end at skin or the wall
 * there is no belt: 'bare' at `edge` itself. Null for a wider band (a garment worn over them), or a hand.
 */
function bandAbove(strip: Strip, body: BodyFrame, edge: number, reference: Rgb): { top: number; above: 'cloth' | 'bare' } | null {
  const bareRows = Math.max(2, Math.round(OLD_WAIST.bare * body.torsoLength));
  const widest = edge - OLD_WAIST.belt * body.torsoLength;
  for (let depth = edge; depth >= widest; depth--) {
    const colour = strip(depth);
    if (colour === 'hand') return null;
    if (colour !== null && !apart(colour, reference)) return { top: depth, above: 'cloth' };
    if (colour !== null) continue;
    let bare = 1;
    while (bare < bareRows && strip(depth - bare) === null) bare++;
    if (bare === bareRows) return { top: depth, above: 'bare' };
  }
  return null;
}

/**
 * Going from depth `from` to depth `to` (torso lengths, either way), the first depth where the strip's colour is
 * another garment's, skin or the wall for a run of rows: the first depth of that run. Null when the
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

/**
 * The mean colour across the centre strip (or one `offset` shoulder widths beside it) at a depth; 'hand' where a hand lies
 * on it; null where it leaves the person or is skin.
 */
function centreStrip(image: RawImage, person: PersonAnalysis, body: BodyFrame, skin: SkinModel | null, offset = 0): Strip {
  const { width, height, channels, data } = image;
  const half = Math.max(1, Math.round(OLD_HEM.half * body.unit));
  const from = add(body.origin, body.side, offset * body.unit);
  return (depth) => {
    const centre = add(from, body.down, depth);
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
