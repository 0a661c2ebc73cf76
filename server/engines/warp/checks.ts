/**
 * The warp engine's post-conditions: what every result must satisfy before
 * it is returned. A result that fails is placed again with safer settings,
 * and refused with a typed error if it fails again (engine.ts), so a
 * customer never sees a broken picture.
 *
 * - face: the face and hair are the photo's own bytes (the core of the
 *   head region above the chin and of Face Mesh's face oval; their soft rim
 *   may mix with a collar);
 * - placement: each garment lies on the body it was fitted to: close to
 *   the person's outline (no wings, pads or tails; a skirt or a dress
 *   below the hips hangs free), inside the person's box
 *   (with room for a loose cut), not far wider than the body, centred, its
 *   top not above the shoulders (no cape over the head) and, for bottoms,
 *   not above the waist (no trousers up to the chest), its hem within a
 *   sane range below the shoulders;
 * - opacity: a garment is opaque inside its outline (only its edge is
 *   soft), never a translucent film;
 * - old clothing: the customer's own clothing of the kind replaced does not
 *   show beside the new garment (a cami over a T-shirt leaves the T-shirt
 *   on the chest: such a picture is refused, not shown); a jacket or a
 *   knit vest is worn over it, and it may show below their hems;
 * - before anything is drawn, the pose (no arms crossed over the chest for
 *   a garment with sleeves) and the garment (no one-shoulder top or dress).
 */
import { REGION, type Mask, type PersonAnalysis, type RawImage } from '../../vision/types.ts';
import { armsFolded, len, sub, type BodyFrame } from './fit/body.ts';
import type { Layer } from './fit/render.ts';
import type { GarmentCutout, Point, WarpCategory } from './types.ts';
import { squareFilter } from '../../kernel/raster.ts';
import { summarise } from './cutout/alpha.ts';
import { CORE_RADIUS2, coveredCentre, layerCoverage, oldSleevesKept, replaced, type PlacedLayer } from './composite/compose.ts';
import { limbPaint } from './composite/limbs.ts';
import { isSkin, type SkinModel } from './composite/colour.ts';
import { chinRow } from './composite/neckline.ts';

export interface Violation {
  check: 'face' | 'placement' | 'opacity' | 'old-clothing' | 'pose' | 'garment';
  detail: string;
}

/** Share of the head's core that must keep the photo's exact bytes. */
const FACE_EXACT = 0.99;
/** How far (px) inside the head region its core starts. */
const FACE_CORE = 3;
/** Room around the person's box for a loose garment, in shoulder widths. */
const LOOSE = 0.6;
/** A garment's middle may sit this far off the body's centre line, in shoulder widths. */
const OFF_CENTRE = 0.35;
/** Tops, dresses and jackets begin no higher than this above the shoulders, in shoulder widths. */
const ABOVE_SHOULDERS = 0.6;
/** Bottoms begin no higher than this share of the way from shoulders to hips. */
const WAIST_FROM_SHOULDERS = 0.45;
/** A top's or jacket's hem ends no lower than this many torso lengths below the shoulders. */
const TOP_HEM = 2.1;
/**
 * A top or dress whose shoulders' heights differ by more than this share of their distance apart is cut with one
 * shoulder (the draped one-shoulder dress: 0.49; the wide set's other tops and dresses: under 0.05).
 */
const ONE_SHOULDER = 0.25;
/** The longest short sleeve, in its garment's shoulder widths (shortSleeved). */
const SHORT_FOLDED = 1.05;
/** Above this share of the replaced regions, old clothing left showing breaks the picture. */
const OLD_CLOTHING = 0.08;
/**
 * How far from the person a garment may reach, in shoulder widths (a jacket's ease, a skirt's flare), and what
 * share of it may lie farther out: beyond that it is drawn where no body is (a sleeve flying out like a wing, a
 * shoulder standing up like a pad, a trouser leg swinging off like a tail).
 */
const REACH = { upper: 0.22, bottom: 0.35 } as const;
const OFF_BODY = 0.06;
/** A garment this many times as wide as the body across the chest is drawn at the wrong scale. */
const TOO_WIDE = 2.5;
/** Where across the chest, as a share of the torso's length below the shoulders. */
const CHEST_DEPTH = 0.45;
/** Above this share of soft pixels (alpha between 0.1 and 0.9) a layer is translucent, not edged. */
const TRANSLUCENT = 0.25;

/** The face and hair keep the photo's bytes: null, or what changed. `face` is Face Mesh's face oval, when found. */
export function faceViolation(image: RawImage, result: Uint8Array, person: PersonAnalysis, face?: Mask | null): Violation | null {
  const { width, height, channels, data } = image;
  const labels = person.layout.labels;
  // Below the chin the head's region reaches over the neck and the old top's collar, which may become neck skin.
  const chin = chinRow(person);
  const head = (x: number, y: number): boolean => {
    if (x < 0 || y < 0 || x >= width || y >= height) return false;
    const i = y * width + x;
    return (labels[i] === REGION.head && person.matte.data[i]! >= 250 && y <= chin) || (face ? face.data[i]! >= 128 : false);
  };
  let core = 0;
  let changed = 0;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if (!head(x, y) || !head(x - FACE_CORE, y) || !head(x + FACE_CORE, y) || !head(x, y - FACE_CORE) || !head(x, y + FACE_CORE)) continue;
      core++;
      const i = y * width + x;
      const j = i * channels;
      if (result[i * 3] !== data[j] || result[i * 3 + 1] !== data[j + 1] || result[i * 3 + 2] !== data[j + 2]) changed++;
    }
  }
  if (core === 0 || changed <= (1 - FACE_EXACT) * core) return null;
  return { check: 'face', detail: `${changed} of ${core} face and hair pixels changed` };
}

/**
 * Where a drawn garment lies and whether it is opaque: the violations, if any. `skirt`: bottoms without legs, whose
 * cloth below the hips, like a dress's, hangs free of the legs.
 */
export function layerViolations(layer: Layer, category: WarpCategory, body: BodyFrame, person: PersonAnalysis, skirt = false): Violation[] {
  const out: Violation[] = [];
  let x0 = Infinity;
  let y0 = Infinity;
  let x1 = -Infinity;
  let y1 = -Infinity;
  let covered = 0;
  let soft = 0;
  let solid = 0;
  let sumX = 0;
  for (let y = 0; y < layer.height; y++) {
    for (let x = 0; x < layer.width; x++) {
      const a = layer.alpha[y * layer.width + x]!;
      if (a <= 0.02) continue;
      covered++;
      if (a > 0.1 && a < 0.9) soft++;
      if (a < 0.5) continue;
      const px = layer.x0 + x;
      const py = layer.y0 + y;
      solid++;
      sumX += px;
      if (px < x0) x0 = px;
      if (px > x1) x1 = px;
      if (py < y0) y0 = py;
      if (py > y1) y1 = py;
    }
  }
  if (!Number.isFinite(x0)) return [{ check: 'placement', detail: `the ${category} was drawn outside the photo` }];
  if (soft > TRANSLUCENT * covered)
    out.push({ check: 'opacity', detail: `${Math.round((100 * soft) / covered)} % of the ${category} is translucent` });

  const offBody = offBodyShare(layer, category, body, person, skirt || category === 'dress');
  if (offBody > OFF_BODY)
    out.push({ check: 'placement', detail: `${Math.round(100 * offBody)} % of the ${category} is drawn where there is no body` });

  const box = personBox(person);
  const room = LOOSE * body.unit;
  if (x0 < box[0] - room || x1 > box[2] + room || y1 > box[3] + room)
    out.push({ check: 'placement', detail: `the ${category} reaches outside the person` });
  const middle = sumX / Math.max(1, solid);
  const centreX = (body.shoulder.left.x + body.shoulder.right.x + body.hip.left.x + body.hip.right.x) / 4;
  if (Math.abs(middle - centreX) > OFF_CENTRE * body.unit)
    out.push({ check: 'placement', detail: `the ${category} hangs off the body's centre line` });
  const shoulderY = Math.min(body.shoulderTop.left.y, body.shoulderTop.right.y);
  const hipY = (body.hip.left.y + body.hip.right.y) / 2;
  if (category !== 'bottom') {
    const depth = CHEST_DEPTH * body.torsoLength;
    const row = Math.round(body.origin.y + body.down.y * depth) - layer.y0;
    const across = body.halfWidth(depth);
    if (row >= 0 && row < layer.height) {
      let first = -1;
      let last = -1;
      // The garment's body, not its sleeves: a sleeve on an arm held out from the body reaches as far as the arm.
      for (let x = 0; x < layer.width; x++) {
        const o = row * layer.width + x;
        if (layer.alpha[o]! >= 0.5 && layer.sleeve[o] === 0) ((first = first < 0 ? x : first), (last = x));
      }
      if (first >= 0 && last - first + 1 > TOO_WIDE * (across.left + across.right))
        out.push({ check: 'placement', detail: `the ${category} is far wider than the body` });
    }
  }
  if (category === 'bottom') {
    if (y0 < shoulderY + WAIST_FROM_SHOULDERS * (hipY - shoulderY))
      out.push({ check: 'placement', detail: 'the bottoms reach above the waist' });
  } else {
    if (y0 < shoulderY - ABOVE_SHOULDERS * body.unit)
      out.push({ check: 'placement', detail: `the ${category} reaches above the shoulders` });
    if (category !== 'dress' && y1 > shoulderY + TOP_HEM * body.torsoLength)
      out.push({ check: 'placement', detail: `the ${category}'s hem is far below the hips` });
  }
  return out;
}

/** The person's matte grown by a radius, cached per analysis and radius. */
const grownMattes = new WeakMap<PersonAnalysis, Map<number, Uint8Array>>();
function grownMatte(person: PersonAnalysis, radius: number): Uint8Array {
  let byRadius = grownMattes.get(person);
  if (!byRadius) grownMattes.set(person, (byRadius = new Map()));
  let grown = byRadius.get(radius);
  if (!grown) {
    const { data, width, height } = person.matte;
    const solid = new Uint8Array(data.length);
    for (let i = 0; i < data.length; i++) solid[i] = data[i]! >= 128 ? 1 : 0;
    grown = squareFilter(solid, width, height, radius, true);
    byRadius.set(radius, grown);
  }
  return grown;
}

/** The share of a garment's solid pixels farther from the person than REACH (a skirt below the hips is free). */
function offBodyShare(layer: Layer, category: WarpCategory, body: BodyFrame, person: PersonAnalysis, skirted: boolean): number {
  const radius = Math.max(2, Math.round((category === 'bottom' ? REACH.bottom : REACH.upper) * body.unit));
  const grown = grownMatte(person, radius);
  const { width, height } = person.matte;
  const hipY = (body.hip.left.y + body.hip.right.y) / 2;
  let solid = 0;
  let off = 0;
  for (let y = 0; y < layer.height; y++) {
    const py = layer.y0 + y;
    for (let x = 0; x < layer.width; x++) {
      if (layer.alpha[y * layer.width + x]! < 0.5) continue;
      const px = layer.x0 + x;
      if (skirted && py > hipY) continue;
      solid++;
      if (px < 0 || py < 0 || px >= width || py >= height || !grown[py * width + px]) off++;
    }
  }
  return solid ? off / solid : 0;
}

/** The box of the person's matte (at half), [x0, y0, x1, y1], found once per analysis (every layer of every try). */
const personBoxes = new WeakMap<PersonAnalysis, [number, number, number, number]>();
function personBox(person: PersonAnalysis): [number, number, number, number] {
  let box = personBoxes.get(person);
  if (!box) {
    const { data, width, height } = person.matte;
    const [x0, y0, x1, y1] = summarise(data, width, height)?.box ?? [0, 0, width, height];
    // summarise's box ends past the last pixel; here it ends on it.
    box = [x0, y0, x1 - 1, y1 - 1];
    personBoxes.set(person, box);
  }
  return box;
}

const UPPER_REGIONS = new Set<number>([REGION.torso, REGION.leftUpperArm, REGION.rightUpperArm]);
const LOWER_REGIONS = new Set<number>([REGION.hips, REGION.leftUpperLeg, REGION.rightUpperLeg]);

/**
 * The customer's own clothing of the kinds the new garments replace, left showing: pixels of those body regions
 * that are not skin in the photo, not covered by a new garment, and unchanged in the result. Null when under
 * OLD_CLOTHING of the regions.
 */
export function oldClothingViolation(
  image: RawImage,
  result: Uint8Array,
  person: PersonAnalysis,
  skin: SkinModel | null,
  layers: PlacedLayer[],
): Violation | null {
  if (!skin) return null;
  const { width, height, channels, data } = image;
  const coverage = layerCoverage(layers, width, height);
  // A dress or a skirt over trousers or jeans is worn that way: below its hem the old legs are not checked, only the
  // hips; nor is the top under a knit vest (compose.ts, `replaced`), nor long sleeves below a shorter sleeve worn
  // over them (`oldSleevesKept`).
  const kinds = replaced(layers);
  const upper = kinds.upper;
  const lower = kinds.hips;
  const bottoms = kinds.legs;
  // Across a bare stretch of an arm no old sleeve goes round it (limbs.ts): what lies there beside it is not one.
  const limbs = upper ? limbPaint(image, person, skin, CORE_RADIUS2) : null;
  const keptSleeve = limbs ? oldSleevesKept(layers, limbs, width) : null;
  // A jacket is worn over the customer's top, which shows below its hem and in its opening (compose.ts keeps it in
  // rows where the body's centre line is not covered): there it is no leftover. So is a top shorter than the
  // customer's own, which shows below its hem as a cropped sweater's over a sweatshirt does (#79). Not so under a
  // jacket or top drawn without sleeves on the arms: its sleeves were not found (a puffer's hang fused with its body;
  // a white T-shirt's stood off the shoulders as wings), and it was drawn as a short vest over painted arms (#26, #68)
  // or a narrow tee over the old top (#37, #90).
  const sleevedOver = (l: PlacedLayer): boolean =>
    (l.category === 'outerwear' || l.category === 'top') && l.layer.tube?.includes(1) === true;
  const over = upper && layers.every((l) => l.category === 'bottom' || sleevedOver(l) || l.layered);
  const centre = over ? coveredCentre(person, coverage, width, height) : null;
  let region = 0;
  let showing = 0;
  for (let i = 0; i < width * height; i++) {
    const label = person.layout.labels[i]!;
    const owned =
      (upper && UPPER_REGIONS.has(label) && !keptSleeve?.(i)) ||
      (lower && (label === REGION.hips || (bottoms && LOWER_REGIONS.has(label))));
    if (person.matte.data[i]! < 200 || !owned) continue;
    if (centre && label === REGION.torso && !centre[Math.floor(i / width)]) continue;
    region++;
    if (coverage[i]! >= 0.5) continue;
    const j = i * channels;
    if (isSkin(skin, data[j]!, data[j + 1]!, data[j + 2]!)) continue;
    if (limbs && limbs.bareSection(i)) continue;
    if (result[i * 3] === data[j] && result[i * 3 + 1] === data[j + 1] && result[i * 3 + 2] === data[j + 2]) showing++;
  }
  if (region === 0 || showing <= OLD_CLOTHING * region) return null;
  return {
    check: 'old-clothing',
    detail: `the customer's own clothing shows beside the new garment (${Math.round((100 * showing) / region)} %)`,
  };
}

/**
 * Garments the engine cannot draw without a broken picture: a one-shoulder top or dress. Its bare shoulder leaves the
 * customer's own top to show there, and its draped side, fitted as a hem, hung off the arm (with its hem found at
 * the corners, the draped dress passed every other check so). Told on a flat or ghost-mannequin photo by its shoulders'
 * heights. Null when every garment can be drawn.
 */
export function garmentViolation(garments: readonly Pick<GarmentCutout, 'category' | 'landmarks' | 'photo'>[]): Violation | null {
  for (const { category, landmarks, photo } of garments) {
    const { leftShoulder: a, rightShoulder: b } = landmarks;
    // A worn garment's shoulders are its model's, who may lean.
    if ((category !== 'top' && category !== 'dress') || photo !== 'flat' || !a || !b) continue;
    if (Math.abs(a.y - b.y) > ONE_SHOULDER * Math.abs(a.x - b.x))
      return { check: 'garment', detail: `a one-shoulder ${category} cannot be drawn on a photo without breaking it` };
  }
  return null;
}

/**
 * Poses the engine cannot dress without a broken picture: both forearms folded across the chest when a garment with
 * long sleeves is asked for above the waist (its sleeves have nowhere to go: drawn along the folded arms they were flat
 * blocks). A top or dress without sleeves, or with short ones (shortSleeved: they end at the elbows, place.ts), is
 * drawn behind the folded forearms, and bottoms lie below them. Null when the pose is fine for these garments.
 */
export function poseViolation(
  person: PersonAnalysis,
  body: BodyFrame,
  garments: readonly Pick<GarmentCutout, 'category' | 'landmarks'>[],
): Violation | null {
  if (garments.every((g) => g.category === 'bottom' || sleeveless(g) || shortSleeved(g))) return null;
  if (armsFolded(person, body))
    return { check: 'pose', detail: 'the arms are crossed over the body; photograph the customer with the arms down or at the sides' };
  return null;
}

/** A top or dress with no sleeves found: a cami, a tank, a strapless or halter top, a slip dress. */
export function sleeveless({ category, landmarks }: Pick<GarmentCutout, 'category' | 'landmarks'>): boolean {
  return (category === 'top' || category === 'dress') && !landmarks.leftSleeveEnd && !landmarks.rightSleeveEnd;
}

/** A top's, dress's or jacket's longer sleeve, in its shoulder widths; 0 without sleeves (bottoms). */
export function sleeveShare({ landmarks: g }: Pick<GarmentCutout, 'landmarks'>): number {
  if (!g.leftShoulder || !g.rightShoulder) return 0;
  const unit = len(sub(g.leftShoulder, g.rightShoulder)) || 1;
  const along = (end: Point | undefined, shoulder: Point): number => (end ? len(sub(end, shoulder)) : 0);
  return Math.max(along(g.leftSleeveEnd, g.leftShoulder), along(g.rightSleeveEnd, g.rightShoulder)) / unit;
}

/**
 * A top or dress with short sleeves: at most SHORT_FOLDED of its shoulders' width long, from its shoulder point to its
 * end's centre (on the wide set, short sleeves measure 0.2 to 0.99 so, three-quarter and long ones 1.13 to 2.35).
 */
export function shortSleeved(garment: Pick<GarmentCutout, 'category' | 'landmarks'>): boolean {
  const { category, landmarks: g } = garment;
  if ((category !== 'top' && category !== 'dress') || !g.leftShoulder || !g.rightShoulder) return false;
  return sleeveShare(garment) <= SHORT_FOLDED;
}
