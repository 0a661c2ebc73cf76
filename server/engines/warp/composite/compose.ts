/**
 * Puts the drawn garments on the person so that the result reads as a
 * photograph:
 *
 * 1. Old clothing that the new garments replace but do not cover becomes
 *    skin (on the arms in an arm's shape and the forearm's light, limbs.ts;
 *    on the legs and body, with the photo's own shading) or background:
 *    the rest of an old sleeve; old clothing beside new bottoms in the rows
 *    they cover (a trouser leg, a loose waistband: the legs are inside
 *    them) and between new trousers' legs; loose old clothing standing away
 *    from the body in the rows the new garment covers (below a shorter new
 *    top the old one stays across its width). Below new bottoms' hems only
 *    the old bottoms' cloth goes, not shoes or socks. Above a new top's
 *    neckline, the old top's collar becomes neck and chest, and so does an
 *    old collar below the chin (neckline.ts).
 * 2. Each garment takes the person's shading: the photo's local luminance
 *    relative to its surroundings (folds, shadows) multiplies the garment's
 *    colour, so hues stay the garment's own.
 * 3. Layers go on in order with their anti-aliased alpha, behind the head
 *    (below the chin only its skin and hair) and the hands always, and
 *    behind the arms except for sleeves and the shoulder caps (bottoms
 *    behind an arm's own shape, not all of its region).
 *
 * Pixels that no step touches keep the photo's exact bytes: the face, hands
 * and background are untouched.
 */
import { insideConvex, segmentDistance2, skeleton, type Bone } from '../../../vision/body-layout.ts';
import { POSE, REGION, type Mask, type PersonAnalysis, type RawImage } from '../../../vision/types.ts';
import { oldBottomsColour, replaceWaistBand, type OldColours } from './bands.ts';
import { bareNeckline, bareUnderChin, chinRow, oldTopUnderChin, wallAboveShoulders, type OldTopUnderChin } from './neckline.ts';
import { add, armsFolded, bodyFrame } from '../fit/body.ts';
import { boxMean, boxOf, components, flood4, nearestThrough, squareFilter } from '../../../kernel/raster.ts';
import type { Layer } from '../fit/render.ts';
import type { WarpCategory } from '../types.ts';
import { BARE, isSkin, isSkinAt, luma, shadedSkin, skinChroma, skinModel, type SkinModel } from './colour.ts';
import { ARMS, HEAD_AND_HANDS } from './regions.ts';
import { INSIDE, OUTSIDE, limbPaint, type LimbPaint } from './limbs.ts';
import { shadingRatio } from './shading.ts';
import { blendIntoSkin } from './seamless.ts';

export interface PlacedLayer {
  layer: Layer;
  category: WarpCategory;
  /** Bottoms without legs: like a dress, a skirt leaves old trousers below its hem (see `replaced`). */
  skirt?: boolean;
  /** Worn over the customer's top (a knit vest: GarmentLandmarks.layered), which it does not replace. */
  layered?: boolean;
  /**
   * Worn over the customer's long sleeves, which stay on the arms below its shorter ones (a T-shirt over a
   * long-sleeved top: painted as bare forearms, they were flat tubes of skin); the rest of the old top it replaces.
   */
  overSleeves?: boolean;
}

export interface ComposeInput {
  image: RawImage;
  person: PersonAnalysis;
  /** In drawing order (first is lowest). */
  layers: PlacedLayer[];
  /** The person's skin colour when known better than from the pose's face points (Face Mesh's skin). */
  skin?: SkinModel | null;
  /** Face Mesh's face oval (0/255), when found. */
  face?: Mask | null;
  /**
   * Where the customer's old top ends (its hem), in pixels down the body's centre line from between the shoulders
   * (old-hem.ts); null or absent when it cannot be told.
   */
  oldTopHem?: number | null;
  /** The old top in the head's region below the chin (neckline.ts), when already told for this person and skin. */
  oldTop?: OldTopUnderChin;
}

/** The old top's hem, kept over new bottoms: a line across the body through where it ends on the centre line. */
interface OldHem {
  /** The hem's row at photo column x. */
  row(x: number): number;
  torsoLength: number;
}

function oldHem(person: PersonAnalysis, depth: number): OldHem {
  const body = bodyFrame(person);
  const centre = add(body.origin, body.down, depth);
  const slope = Math.abs(body.side.x) > 1e-6 ? body.side.y / body.side.x : 0;
  return { row: (x) => centre.y + (x - centre.x) * slope, torsoLength: body.torsoLength };
}

const HANDS = new Set<number>([REGION.leftHand, REGION.rightHand]);
/** An old sleeve's hem reaches this many shoulder widths past where its arm turns bare across (limbs.ts). */
const HEM_SLANT = 0.06;
/** Gaps up to twice this many pixels wide between folded arms' skin in front of a garment are closed. */
const FOLD_GAP = 4;
/**
 * With the arms folded, a garment (one without sleeves) lies over an upper arm only this near (squared, in shoulder
 * widths) its shoulder: measured across the folded forearms, the chest is wider than it is, and the garment's sides
 * were drawn over the upper arms.
 */
const FOLDED_CAP2 = 0.22 ** 2;
/** The bones of arms folded across the body that stay in front of a top or dress. */
const FOLDED = new Set<number>([REGION.leftLowerArm, REGION.rightLowerArm, ...HANDS]);
/** The layout's neck region is smoothed over this radius (pixels, twice) before a garment is cut round it. */
const NECK_SMOOTHING = 3;
/** Bare skin in front of a garment is decided by majority within this radius (pixels): its edge is not ragged. */
const FRONT_SMOOTHING = 2;
/** Where more than this share of that square is in front, over bare skin, the garment fades out towards the majority. */
const FRONT_EDGE = 0.2;
/** A hand's soft edge: skin-coloured pixels this close to its bare skin stay in front with it. */
const HAND_EDGE = 2;
/** Below this share of a hand's region looking like skin, the skin's colour is not the hand's: all of it stays. */
const HAND_SKIN = 0.3;
/**
 * A hand's back and fingers (the layout's hand region is a narrow wedge, and gives the rest of the hand to the torso,
 * the hips, a forearm or a thigh): from its wrist through the middle of its index and little fingers' knuckles and
 * `past` times that far on, `wrist` shoulder widths either side at the wrist, widening to `radius` at the knuckles and
 * on; over a thigh only `onLeg` of that far, so that a hand hanging beside a bare thigh does not take the thigh along.
 */
const WHOLE_HAND = { past: 1.3, wrist: 0.1, radius: 0.22, onLeg: 0.5 } as const;
const LEGS = new Set<number>([REGION.leftUpperLeg, REGION.rightUpperLeg, REGION.leftLowerLeg, REGION.rightLowerLeg]);
/**
 * Shading: local luminance (radius 8) over its surroundings (radius 32) among its own material (shading.ts), limited,
 * and how strongly it applies; it fades where the old clothing is textured (a logo or pattern is not a fold): local
 * deviation above `texture`.
 */
const SHADING = { fine: 8, coarse: 32, min: 0.85, max: 1.08, strength: 0.8, texture: 14 } as const;
/** Painted skin's shading: local luminance (radius 6) over its surroundings (radius 24), among its own material. */
const SKIN_SHADING = { fine: 6, coarse: 24 } as const;
/** How far (pixels) round a painted pixel the old clothing's texture is measured. */
const TEXTURE_RADIUS = 2;
/**
 * An old cuff (cuffsAsForearms): up to `past` of the forearm's length beyond the wrist, below a sleeve that covers
 * the forearm's last `reach` of its length with skin in less than `bare` of its pixels.
 */
const CUFF = { past: 0.3, width: 1.3, reach: 0.2, bare: 0.3 } as const;
/** The body's core: within this share (squared) of each bone's radius. */
export const CORE_RADIUS2 = 0.8;
/** A leg is inside new bottoms in a row where they cover at least this share of it. */
const SHEATHED = 0.3;
/** Old bottoms beside new ones (or in a pocket's hand region) are told by their colour averaged over a square of this radius (pixels). */
const BESIDE_SMOOTHING = 4;
/** Painted skin on a limb is this much darker at the core's edge than on the limb's axis. */
const ROUNDNESS = 0.22;
/** Pixels between a person's edge and the background sampled for filling. */
const BACKGROUND_GAP = 4;
/** The background fill is averaged down each column over this share of the photo's height either side. */
const BACKGROUND_SMOOTHING = 0.01;
/** Matte values from which a pixel mixes in some of the person (the edge that filling reaches). */
const BACKGROUND_MATTE = 16;
/** A kept old top over new bottoms runs through shadows up to this share of the torso's length (hangingTop). */
const TOP_GAP = 0.04;
/** A kept old top is told by its colour averaged over this share of the torso's length (nearestColour). */
const TOP_SMOOTHING = 0.04;
/** A kept old top's hem reaches no lower than this share of the torso's length below where it ends on the centre line. */
const HEM_SPARE = 0.05;
/** A bare arm within this many shoulder widths of its new sleeve's end (along the arm) stays in front as below it. */
const SLEEVE_END = 0.05;
/**
 * A piece of a drawn garment under this share of its largest piece is a speck cut off from it (dropSpecks): on the
 * wide set they measure 0.17 % at most (a print's bits beside a hand, #67; a collar's tip under the chin, #86,
 * 0.12 %), where a collar's side cut off below the chin by the bare neck (the under-chin test's) is 0.46 %.
 */
const SPECK = 0.002;
/** Painted skin is matched to photo skin this many pixels inside the skin's edge (solidSkin). */
const SOLID_SKIN = 2;
/** How far (pixels) from old clothing turned to background its soft outline goes too. */
const OUTLINE = 2;
/** How far (shoulder widths) past the person the soft edge of old clothing gone under a new garment goes with it. */
const SOFT_EDGE_REACH = 0.08;
/**
 * Regions that a new garment over them hides (nothing there is kept in front of it, as a hand or bare skin on an arm
 * may be); arms too under a new top's sleeves, unless folded across the body.
 */
const HIDDEN_UNDER = new Set<number>([REGION.neck, REGION.torso, REGION.hips, ...LEGS]);

/** Which old clothing the new garments replace: above the waist, at the hips, on the legs. */
interface Replaced {
  upper: boolean;
  hips: boolean;
  legs: boolean;
}

/**
 * Which old clothing the new garments replace. A dress or a skirt replaces what is worn at the hips but not old
 * trousers below its hem: a dress or skirt over trousers is worn that way, and legs painted in their place showed as
 * flat tubes. Beside a skirt, in the rows it covers, an old trouser leg goes (removeOldClothing). A layered garment
 * (a knit vest) replaces nothing: the top under it stays.
 */
export function replaced(layers: readonly Pick<PlacedLayer, 'category' | 'skirt' | 'layered'>[]): Replaced {
  const categories = layers.map((l) => l.category);
  return {
    upper: layers.some((l) => l.category !== 'bottom' && !l.layered),
    hips: categories.some((c) => c === 'bottom' || c === 'dress'),
    legs: layers.some((l) => l.category === 'bottom' && !l.skirt),
  };
}

/** How far down each arm (0 and 1) a layer's sleeves reach, in pixels from the shoulder (limbs.ts); −∞ without one. */
function sleeveReach(layer: Layer, limbs: LimbPaint, width: number): [number, number] {
  const ends: [number, number] = [-Infinity, -Infinity];
  if (!layer.tube) return ends;
  const where = { arm: 0, along: 0 };
  for (let o = 0; o < layer.width * layer.height; o++) {
    if (layer.tube[o] !== 1 || layer.alpha[o]! < 0.5) continue;
    const i = (layer.y0 + Math.floor(o / layer.width)) * width + layer.x0 + (o % layer.width);
    if (limbs.onArm(i, where)) ends[where.arm] = Math.max(ends[where.arm]!, where.along);
  }
  return ends;
}

/**
 * Under a garment worn over the customer's long sleeves (PlacedLayer.overSleeves), whether a photo pixel (by index)
 * lies on an arm past where the garment's sleeve ends: there the old sleeve stays. Null when no garment is worn so.
 */
export function oldSleevesKept(layers: readonly PlacedLayer[], limbs: LimbPaint, width: number): ((i: number) => boolean) | null {
  const over = layers.filter((l) => l.overSleeves);
  if (over.length === 0) return null;
  const ends = [-Infinity, -Infinity];
  for (const l of over) {
    const reach = sleeveReach(l.layer, limbs, width);
    ends[0] = Math.max(ends[0]!, reach[0]);
    ends[1] = Math.max(ends[1]!, reach[1]);
  }
  const where = { arm: 0, along: 0 };
  return (i) => limbs.onArm(i, where) && where.along >= ends[where.arm]!;
}

export function compose(input: ComposeInput): Uint8Array {
  const { image, person, layers } = input;
  const { width, height, channels } = image;
  const out = new Uint8Array(width * height * 3);
  for (let i = 0, j = 0; i < width * height; i++, j += channels) {
    out[i * 3] = image.data[j]!;
    out[i * 3 + 1] = image.data[j + 1]!;
    out[i * 3 + 2] = image.data[j + 2]!;
  }
  const coverage = layerCoverage(layers, width, height);
  const lum = new Float32Array(width * height);
  for (let i = 0, j = 0; i < lum.length; i++, j += channels) lum[i] = luma(image.data[j]!, image.data[j + 1]!, image.data[j + 2]!);
  const skin = input.skin ?? skinModel(image, person);
  const categories = layers.map((l) => l.category);
  const kinds = replaced(layers);
  // The photo's broad shading, which painted skin takes.
  const shading = shadingRatio(lum, width, height, SKIN_SHADING.fine, SKIN_SHADING.coarse);
  // Trousers and skirts sheathe the legs they cover; a dress's slit may let a leg out beside it.
  const bottoms = layers.filter((l) => l.category === 'bottom');
  // What the customer wore above and below, told apart by colour: measured once for the sheathing, the band and a
  // pocketed hand's region.
  const oldColours = oldBottomsColour(image, person, skin);
  const limbs = skin ? limbPaint(image, person, skin, CORE_RADIUS2) : null;
  const trousers = bottoms.filter((l) => !l.skirt);
  const crotch = trousers.length > 0 ? openBetween(layerCoverage(trousers, width, height), width, height) : null;
  const sheathed =
    bottoms.length > 0 ? sheathedBody(image, person, skin, layerCoverage(bottoms, width, height), oldColours, limbs, crotch) : null;
  const background = wallBehind(image, person);
  // Arms folded across the body: only a garment without sleeves or with short ones is drawn on them (checks.ts),
  // behind them.
  const folded = armsFolded(person, bodyFrame(person));
  const keptSleeve = limbs ? oldSleevesKept(layers, limbs, width) : null;
  removeOldClothing(out, image, lum, person, skin, shading, coverage, kinds, sheathed, background, oldColours, folded, keptSleeve);
  // A jacket or a vest is worn over a top, whose neckline shows in its opening: only other tops and dresses bare the neck.
  const necklines = layers.filter((l) => (l.category === 'top' || l.category === 'dress') && !l.layered);
  let underChin: Uint8Array | null = null;
  if (necklines.length > 0 && skin) {
    const upperCoverage = layerCoverage(necklines, width, height);
    const painted = new Uint8Array(width * height);
    // Above the neckline as below the chin, the neck's own colour.
    const oldTop = input.oldTop ?? oldTopUnderChin(image, person, skin, input.face ?? null);
    bareNeckline({ out, image, person, skin, upperCoverage, shading, painted, paint: oldTop.neck });
    underChin = bareUnderChin({ out, image, person, skin, shading, face: input.face, oldTop });
    const walled = wallAboveShoulders({ out, image, person, skin, upperCoverage, background, underChin });
    if (walled) clearOutline(out, person, background, walled, coverage);
    // The painted neck meets the real neck and chin without a seam.
    for (let i = 0; i < painted.length; i++) painted[i] = (painted[i] === 1 || underChin[i] === 2) && !walled?.[i] ? 1 : 0;
    const reach = 2 * SOLID_SKIN + 2;
    const solid = solidSkin(image, person, skin, painted, reach);
    blendIntoSkin(out, image, painted, (i) => solid[i] === 1, reach);
  }
  // A band of old trousers above new bottoms' waistband becomes the top they were worn with.
  if (categories.length > 0 && categories.every((c) => c === 'bottom'))
    replaceWaistBand({ out, image, person, skin, coverage, torsoLength: bodyFrame(person).torsoLength, colours: oldColours });
  // New bottoms alone go under the old top, which is kept: its hem hangs over them.
  const hem = !kinds.upper && input.oldTopHem != null ? oldHem(person, input.oldTopHem) : null;
  for (const placed of layers) drawLayer(out, image, lum, person, skin, placed, underChin, oldColours, hem, folded);
  return out;
}

/**
 * The photo's skin that painted skin is matched to (blendIntoSkin): skin-coloured pixels of the person, not painted,
 * whose neighbours within SOLID_SKIN are so too. A chin's edge against the wall, its colour mixed with the wall's,
 * passes the skin test; matched to it, a painted neck came out grey.
 */
function solidSkin(image: RawImage, person: PersonAnalysis, skin: SkinModel, painted: Uint8Array, reach: number): Uint8Array {
  const { width, height, data, channels } = image;
  const solid = new Uint8Array(width * height);
  // Only within `reach` (and the erosion's radius) of the paint is it asked for.
  const box = boxOf(painted, width);
  if (!box) return solid;
  const grow = reach + SOLID_SKIN;
  const [x0, y0] = [Math.max(0, box.x0 - grow), Math.max(0, box.y0 - grow)];
  const [x1, y1] = [Math.min(width - 1, box.x1 + grow), Math.min(height - 1, box.y1 + grow)];
  const bw = x1 - x0 + 1;
  const bh = y1 - y0 + 1;
  const bare = new Uint8Array(bw * bh);
  for (let y = 0; y < bh; y++) {
    for (let x = 0; x < bw; x++) {
      const i = (y0 + y) * width + x0 + x;
      if (painted[i] === 1 || person.matte.data[i]! < 128) continue;
      const j = i * channels;
      bare[y * bw + x] = isSkin(skin, data[j]!, data[j + 1]!, data[j + 2]!) ? 1 : 0;
    }
  }
  const eroded = squareFilter(bare, bw, bh, SOLID_SKIN, false);
  for (let y = 0; y < bh; y++) solid.set(eroded.subarray(y * bw, (y + 1) * bw), (y0 + y) * width + x0);
  return solid;
}

/** How much of each photo pixel the new garments cover together (the most opaque layer's alpha). */
export function layerCoverage(layers: readonly PlacedLayer[], width: number, height: number): Float32Array {
  const coverage = new Float32Array(width * height);
  for (const { layer } of layers) {
    for (let y = 0; y < layer.height; y++) {
      for (let x = 0; x < layer.width; x++) {
        const o = (layer.y0 + y) * width + layer.x0 + x;
        coverage[o] = Math.max(coverage[o]!, layer.alpha[y * layer.width + x]!);
      }
    }
  }
  return coverage;
}

/**
 * Old clothing of the replaced kinds that stays visible outside the new
 * garments: inside the body's core it becomes skin, keeping the photo's
 * shading; outside it (a loose old garment's edge) it becomes background.
 * A leg is no core in the rows where new bottoms sheathe it (`sheathed`,
 * from sheathedBody): the old trouser leg beside them becomes background.
 * Nor are the waist and hips in the rows where new bottoms sheathe them:
 * old bottoms beside them there (a loose waistband) become background too.
 */
function removeOldClothing(
  out: Uint8Array,
  image: RawImage,
  lum: Float32Array,
  person: PersonAnalysis,
  skin: SkinModel | null,
  shading: Float32Array,
  coverage: Float32Array,
  kinds: Replaced,
  sheathed: Sheath | null,
  background: Uint8Array,
  colours: OldColours | null,
  folded: boolean,
  keptSleeve: ((i: number) => boolean) | null,
): void {
  if (!skin || (!kinds.upper && !kinds.hips)) return;
  const { width, height, channels, data } = image;
  const { bones, torso, unit } = skeleton(person.landmarks);
  const labels = kinds.upper && !keptSleeve ? cuffsAsForearms(image, person, skin, bones) : person.layout.labels;
  const inCore = coreTest(bones, torso);
  const limbs = limbPaint(image, person, skin, CORE_RADIUS2);
  const feet = belowAnkles(person);
  // The skin model a limb pixel is painted with, its colour set pixel by pixel from the limb's own.
  const own: SkinModel = { ...skin, rgb: [...skin.rgb] };
  const limbSide = sideOfLimb(bones.filter((bone) => ARMS.has(bone.region) || LEGS.has(bone.region)));
  const centreCovered = coveredCentre(person, coverage, width, height);
  const walled = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = y * width + x;
      if (coverage[i]! > 0.98 || person.matte.data[i]! < 128) continue;
      const label = labels[i]!;
      // A leg beside new bottoms, in a row where they sheathe it (outside them, not below a skirt's curved hem).
      const besideLeg = sheathed !== null && sheathed.legInside(label, y) && sheathed.beyond(x, y);
      // Between new trousers' legs, below their crotch: old clothing, or skin of a leg that is inside them.
      const between = sheathed !== null && SHEATHABLE.has(label) && sheathed.between(i);
      // Limbs of the replaced kind: an old sleeve or trouser leg (arms folded across the body stay as they are: painted,
      // their bones' shapes lay over each other and the torso, and the wall beside an elbow became skin-coloured
      // blocks). Torso and hips: only loose clothing outside the body's core.
      // Beside a skirt, in the rows it covers, an old trouser leg is replaced too.
      const limb =
        (kinds.upper && ARMS.has(label) && !folded && !keptSleeve?.(i)) || (LEGS.has(label) && (kinds.legs || besideLeg)) || between;
      // Old clothing beside new bottoms at the waist and hips (a loose waistband, a skirt's side) is no body.
      const beside = sheathed !== null && sheathed.beside(label, x, y);
      const trunk = (kinds.upper && (label === REGION.torso || label === REGION.neck)) || (kinds.hips && label === REGION.hips) || beside;
      if (!limb && !trunk) continue;
      const j = i * channels;
      const r = data[j]!;
      const g = data[j + 1]!;
      const b = data[j + 2]!;
      // An arm's core is the arm's own shape, narrower than the old sleeve (limbs.ts); the torso's is the torso's.
      // `arm` is how much of the pixel the arm covers (its edge is anti-aliased), null off the arms.
      const arm = limbs.shape[i] === 0 ? null : (limbs.shape[i]! - OUTSIDE) / (INSIDE - OUTSIDE);
      // Skin stays; on an arm only bare skin does: beside its shape a pink sleeve's skin-coloured specks would stand
      // alone, and inside it the skin seen through a crochet or lace sleeve's holes would dot the painted arm.
      // Beside new bottoms, on a leg they sheathe in this row, nothing is the leg's skin: an old trouser leg in a
      // skin-like colour (khaki, beige) goes there like any other.
      // Beside new bottoms, cloth told from an arm as paler than its skin (Sheath.beside) goes too.
      const paleBeside = beside && arm !== null;
      if (!besideLeg && !between && !paleBeside && isSkin(skin, r, g, b) && (arm === null || limbs.bareAt(i))) continue;
      // Across a bare stretch of the arm no old sleeve goes round it: what is not skin there lies beside it.
      // Just past the old sleeve's end its hem, cut at a slant or seen at an angle, still goes round part of the arm.
      if (arm !== null && !paleBeside && limbs.bareSection(i) && !limbs.pastSleeveEnd(i, HEM_SLANT * unit)) continue;
      // On a leg only the old bottoms' cloth goes: below the ankle is the foot, and there and above it shoes and socks,
      // told from the cloth by colour, stay (painted, they were skin-coloured blobs on the shoes).
      if (LEGS.has(label) && !besideLeg && !between) {
        if (feet(x + 0.5, y + 0.5)) continue;
        if (colours && !colours.nearerBottoms(...meanColour(image, x, y, BESIDE_SMOOTHING)) && !colours.inPrint?.(i)) continue;
      }
      const torsoCore = arm !== null && arm < 1 && insideConvex(x + 0.5, y + 0.5, torso);
      // A leg inside new bottoms shows no skin beside them: there the old trouser leg becomes the wall.
      const core =
        !beside &&
        !between &&
        (arm === null ? inCore(x + 0.5, y + 0.5) && !(sheathed && sheathed.legInside(label, y)) : arm > 0 || torsoCore);
      if (trunk && core) continue;
      // Below a shorter new top the old one stays across its whole width: its loose sides are taken away only in
      // rows where the new garment covers the body's centre line (else they would leave the wall in notches).
      if (trunk && !limb && !beside && !centreCovered[y]) continue;
      const keep = coverage[i]!;
      let fr: number;
      let fg: number;
      let fb: number;
      if (core) {
        // Skin with the photo's broad shading only (the old fabric's print or weave must not show through), in the
        // limb's own skin's colours (an arm's carry its light across it), else rounded: darker towards the limb's
        // sides, as light falls on a cylinder.
        if (limbs.cloned(x + 0.5, y + 0.5, label, own.rgb)) {
          [fr, fg, fb] = own.rgb;
        } else {
          // Rounded across an arm's painted shape: across its bone's core, wider than the arm, its edges were hardly
          // darker (a flat tube).
          const across = ARMS.has(label) ? limbs.across(x + 0.5, y + 0.5, label) : null;
          const round = limbs.lit(label) ? 1 : 1 - ROUNDNESS * (across !== null ? across * across : limbSide(x + 0.5, y + 0.5));
          const model = limbs.colour(x + 0.5, y + 0.5, label, own.rgb) ? own : skin;
          // A striped or printed old sleeve's pattern is no shading: it fades out where the photo is textured.
          const shade = untextured(lum, width, height, x, y, shading[i]!);
          fr = shadedSkin(model, shade, 0) * round;
          fg = shadedSkin(model, shade, 1) * round;
          fb = shadedSkin(model, shade, 2) * round;
        }
        // At an arm's edge the wall shows through the share the arm does not cover.
        if (arm !== null && arm < 1 && !torsoCore) {
          fr = fr * arm + background[i * 3]! * (1 - arm);
          fg = fg * arm + background[i * 3 + 1]! * (1 - arm);
          fb = fb * arm + background[i * 3 + 2]! * (1 - arm);
          if (arm < 0.5) walled[i] = 1;
        }
      } else {
        fr = background[i * 3]!;
        fg = background[i * 3 + 1]!;
        fb = background[i * 3 + 2]!;
        walled[i] = 1;
      }
      // Where a new garment partly covers it (its soft edge), the fill shows through only the rest.
      const o = i * 3;
      out[o] = Math.round(fr * (1 - keep) + out[o]! * keep);
      out[o + 1] = Math.round(fg * (1 - keep) + out[o + 1]! * keep);
      out[o + 2] = Math.round(fb * (1 - keep) + out[o + 2]! * keep);
    }
  }
  clearOutline(out, person, background, walled, coverage, labels);
  clearSoftEdge(out, image, person, background, coverage, labels, kinds, folded, SOFT_EDGE_REACH * unit);
}

/**
 * The layout's labels with the cuffs of old sleeves that reach the wrists taken from the hands' regions into the
 * forearms'. A hand's region is drawn round the hand's landmarks and takes in the cuff, and no step repaints a hand:
 * below a new shorter sleeve the old white or red cuffs stayed at the wrists of painted forearms. A cuff is what of a
 * hand's region is not skin-coloured and lies within CUFF.width of its forearm bone's radius, up to CUFF.past of its
 * length beyond the wrist, where the forearm's last CUFF.reach of its length shows skin in less than CUFF.bare of its
 * pixels (a watch or a bracelet on a bare wrist stays). The labels themselves when no cuff is found.
 */
function cuffsAsForearms(image: RawImage, person: PersonAnalysis, skin: SkinModel, bones: readonly Bone[]): Uint8Array {
  const { width, height } = image;
  const labels = person.layout.labels;
  let relabelled: Uint8Array | null = null;
  for (const [forearm, hand] of [
    [REGION.leftLowerArm, REGION.leftHand],
    [REGION.rightLowerArm, REGION.rightHand],
  ] as const) {
    const bone = bones.find((b) => b.region === forearm);
    if (!bone) continue;
    const dx = bone.b.x - bone.a.x;
    const dy = bone.b.y - bone.a.y;
    const length2 = dx * dx + dy * dy;
    if (length2 < 1) continue;
    const reach = Math.ceil(bone.radius + Math.sqrt(length2) * CUFF.past);
    const [xa, xb] = [Math.max(0, Math.floor(bone.b.x - reach)), Math.min(width - 1, Math.ceil(bone.b.x + reach))];
    const [ya, yb] = [Math.max(0, Math.floor(bone.b.y - reach)), Math.min(height - 1, Math.ceil(bone.b.y + reach))];
    // Along the bone from the elbow (0) to the wrist (1), and the distance across it squared.
    const along = (x: number, y: number): number => ((x - bone.a.x) * dx + (y - bone.a.y) * dy) / length2;
    const across2 = (x: number, y: number, t: number): number => (bone.a.x + t * dx - x) ** 2 + (bone.a.y + t * dy - y) ** 2;
    let sleeve = 0;
    let bare = 0;
    const cuff: number[] = [];
    for (let y = ya; y <= yb; y++) {
      for (let x = xa; x <= xb; x++) {
        const i = y * width + x;
        if (person.matte.data[i]! < 128) continue;
        const t = along(x + 0.5, y + 0.5);
        if (labels[i] === forearm && t >= 1 - CUFF.reach && t <= 1) {
          if (isSkinAt(image, skin, i)) bare++;
          else sleeve++;
        } else if (
          labels[i] === hand &&
          t <= 1 + CUFF.past &&
          across2(x + 0.5, y + 0.5, t) <= (CUFF.width * bone.radius) ** 2 &&
          !isSkinAt(image, skin, i)
        ) {
          cuff.push(i);
        }
      }
    }
    if (cuff.length === 0 || bare >= CUFF.bare * (bare + sleeve)) continue;
    relabelled ??= Uint8Array.from(labels);
    for (const i of cuff) relabelled[i] = forearm;
  }
  return relabelled ?? labels;
}

/**
 * A shading ratio faded towards 1 where the photo is textured around (x, y): the luminance's deviation within
 * TEXTURE_RADIUS, against SHADING.texture, as a garment's shading fades (drawLayer). A striped sleeve's stripes are
 * not folds, and painted skin must not carry them.
 */
function untextured(lum: Float32Array, width: number, height: number, x: number, y: number, ratio: number): number {
  let sum = 0;
  let squares = 0;
  let n = 0;
  for (let v = Math.max(0, y - TEXTURE_RADIUS); v <= Math.min(height - 1, y + TEXTURE_RADIUS); v++) {
    for (let u = Math.max(0, x - TEXTURE_RADIUS); u <= Math.min(width - 1, x + TEXTURE_RADIUS); u++) {
      const l = lum[v * width + u]!;
      sum += l;
      squares += l * l;
      n++;
    }
  }
  const mean = sum / n;
  return faded(ratio, Math.sqrt(Math.max(0, squares / n - mean * mean)), 1);
}

/**
 * A shading ratio applied with `strength`, and less where the photo's luminance deviates locally by `deviation`: a
 * logo, a print or stripes are not folds (SHADING.texture is the deviation at which half of it is left).
 */
function faded(ratio: number, deviation: number, strength: number): number {
  return 1 + ((ratio - 1) * strength) / (1 + (deviation / SHADING.texture) ** 2);
}

/**
 * The soft edge of old clothing that became background (the matte's border, below the person threshold, where
 * the garment's colour mixes with the wall) becomes background too, or the old garment's outline stays as a thin
 * line. Never beside the head or hands, whose edges keep their bytes.
 */
function clearOutline(
  out: Uint8Array,
  person: PersonAnalysis,
  background: Uint8Array,
  walled: Uint8Array,
  coverage: Float32Array,
  labels = person.layout.labels,
): void {
  const { width, height } = person.layout;
  const near = squareFilter(walled, width, height, OUTLINE, true);
  const kept = new Uint8Array(width * height);
  for (let i = 0; i < kept.length; i++) kept[i] = HEAD_AND_HANDS.has(labels[i]!) ? 1 : 0;
  const protectedEdge = squareFilter(kept, width, height, OUTLINE, true);
  for (let i = 0; i < near.length; i++) {
    const matte = person.matte.data[i]!;
    if (!near[i] || protectedEdge[i] || walled[i] || matte < BACKGROUND_MATTE || matte >= 128 || coverage[i]! > 0.98) continue;
    const keep = coverage[i]!;
    for (let c = 0; c < 3; c++) out[i * 3 + c] = Math.round(background[i * 3 + c]! * (1 - keep) + out[i * 3 + c]! * keep);
  }
}

/**
 * The person's soft edge (the matte between BACKGROUND_MATTE and 128) is the edge of whatever part of the person
 * lies nearest. Where that is old clothing gone under a new garment, the edge goes too: a white tee against a pale
 * wall has a soft edge many pixels wide, and its shoulder showed beside a new jacket's as a pale rim. Edges nearest
 * the head, the hands or anything else that stays keep their bytes, and so do those nearest old clothing turned to
 * wall (but for its outline, clearOutline): where that was a mistake (an ankle taken for a trouser leg), the wall
 * grew. Reached no farther than `reach` pixels from the person.
 */
function clearSoftEdge(
  out: Uint8Array,
  image: RawImage,
  person: PersonAnalysis,
  background: Uint8Array,
  coverage: Float32Array,
  labels: Uint8Array,
  kinds: Replaced,
  folded: boolean,
  reach: number,
): void {
  const { width, height, channels, data } = image;
  const matte = person.matte.data;
  const soft = new Uint8Array(width * height);
  const inside = new Uint8Array(width * height);
  const clear = new Uint8Array(width * height);
  for (let i = 0; i < soft.length; i++) {
    const m = matte[i]!;
    if (m >= 128) inside[i] = 1;
    else if (m >= BACKGROUND_MATTE) soft[i] = 1;
    else clear[i] = 1;
  }
  const owner = nearestThrough(width, height, inside, soft, reach);
  // The wall a soft pixel hides: the nearest pixel of clear wall beyond the edge (a curtain's fold behind it; the
  // fill, smoothed down the columns, was a grey smear there).
  const wallAt = nearestThrough(width, height, clear, soft, reach);
  for (let i = 0; i < owner.length; i++) {
    const k = owner[i]!;
    if (k < 0 || !soft[i] || coverage[i]! > 0.98 || HEAD_AND_HANDS.has(labels[i]!)) continue;
    const label = labels[k]!;
    const hidden = coverage[k]! >= 0.5 && (HIDDEN_UNDER.has(label) || (kinds.upper && !folded && ARMS.has(label)));
    if (!hidden) continue;
    const keep = coverage[i]!;
    const w = wallAt[i]!;
    for (let c = 0; c < 3; c++) {
      const wall = w >= 0 ? data[w * channels + c]! : background[i * 3 + c]!;
      out[i * 3 + c] = Math.round(wall * (1 - keep) + out[i * 3 + c]! * keep);
    }
  }
}

/** Where new bottoms sheathe the body (sheathedBody). */
interface Sheath {
  /** Whether a leg's region is inside new bottoms in row y: they cover at least SHEATHED of its pixels there. */
  legInside(label: number, y: number): boolean;
  /**
   * Whether a pixel (x, y) of a given region is old clothing beside new bottoms, in a row where they sheathe the waist or
   * hips: left or right of all of them. Only the old bottoms' own cloth is (an old top's hem over the hips stays), so
   * nothing is when the old top and bottoms cannot be told apart by colour. Beside the arms only what is far paler
   * than the arm's own skin is (cream trousers by a dark-skinned arm), in any row the bottoms sheathe (an arm hangs
   * beside the thighs too): an arm's shadowed edge is not told from dark trousers.
   */
  beside(label: number, x: number, y: number): boolean;
  /** Whether x lies left or right of all new bottoms in row y. */
  beyond(x: number, y: number): boolean;
  /** Whether pixel i lies between new trousers' legs, below their crotch (openBetween). */
  between(i: number): boolean;
}

/** The regions that new bottoms sheathe: the legs, and at the waistband the torso and hips. */
const SHEATHABLE = new Set<number>([...LEGS, REGION.torso, REGION.hips]);
const SHEATHABLE_LIST = [...SHEATHABLE];

/**
 * Per region of the legs, waist and hips and per row, whether new bottoms cover at least SHEATHED of that region's
 * pixels in that row: a leg inside them, beside which the old trouser leg is not skin; a waist or hips inside
 * them, beside which an old loose waistband or skirt is no body. Rows that a hem only grazes (a curved skirt's hem
 * across the leg) keep the leg. Beside means outside the bottoms' extent in the row: a gap inside them (a fly's
 * seam the cut-out left soft) is not beside them.
 */
function sheathedBody(
  image: RawImage,
  person: PersonAnalysis,
  skin: SkinModel | null,
  coverage: Float32Array,
  colours: OldColours | null,
  limbs: LimbPaint | null,
  crotch: Uint8Array | null,
): Sheath {
  const { width, height } = image;
  const labels = person.layout.labels;
  const size = (Math.max(...SHEATHABLE) + 1) * height;
  const total = new Uint32Array(size);
  const covered = new Uint32Array(size);
  const { left, right } = rowExtents(coverage, width, height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = y * width + x;
      const label = labels[i]!;
      if (!SHEATHABLE.has(label) || person.matte.data[i]! < 128) continue;
      total[label * height + y]!++;
      if (coverage[i]! >= 0.5) covered[label * height + y]!++;
    }
  }
  const rows = new Uint8Array(size);
  for (let k = 0; k < size; k++) rows[k] = total[k]! > 0 && covered[k]! >= SHEATHED * total[k]! ? 1 : 0;
  const beyond = (x: number, y: number): boolean => x < left[y]! || x > right[y]!;
  // A bold print of the old bottoms (pattern.ts) where neither the pixel nor its neighbours' mean is skin-coloured.
  const printAt = (i: number, mean: readonly [number, number, number]): boolean =>
    colours !== null && colours.inPrint !== null && colours.inPrint(i) && !(skin && (isSkin(skin, ...mean) || isSkinAt(image, skin, i)));
  return {
    legInside: (label, y) => LEGS.has(label) && rows[label * height + y] === 1,
    beyond,
    between: (i) => crotch !== null && crotch[i] === 1,
    beside: (label, x, y) => {
      const arm = ARMS.has(label);
      if (!colours || (!arm && label !== REGION.hips && label !== REGION.torso)) return false;
      if (!beyond(x, y)) return false;
      // The old bottoms' cloth, told by its colour averaged over a few pixels (a highlight on jeans is not left as a
      // speck); averaged only here, since few pixels lie beside new bottoms. A bold print's pale patches are told by
      // its texture.
      const i = y * width + x;
      if (!arm) {
        if (!rows[REGION.torso * height + y] && !rows[REGION.hips * height + y]) return false;
        const mean = meanColour(image, x, y, BESIDE_SMOOTHING);
        return colours.test(...mean) || printAt(i, mean);
      }
      // An arm hangs beside the legs too: any row the new bottoms sheathe.
      if (!SHEATHABLE_LIST.some((region) => rows[region * height + y] === 1)) return false;
      const mean = meanColour(image, x, y, BESIDE_SMOOTHING, person.matte);
      // Beside an arm only cloth far paler than the arm's own skin, outside its shape, nearer the old bottoms' colour
      // than the top's: an arm's shadowed edge is not told from dark trousers, but cream ones beside a dark-skinned
      // arm pass the skin test and are no part of it. A bold print goes even inside the arm's shape (a little wider
      // than some arms), where neither the pixel nor its neighbours are skin-coloured.
      if (limbs === null) return false;
      if (printAt(i, mean)) return true;
      return limbs.shape[i] === OUTSIDE && limbs.paler(i, luma(...mean)) && colours.nearerBottoms(...mean);
    },
  };
}

/** Per row, the first and last x a coverage covers (at least half); width and −1 in a row it does not reach. */
function rowExtents(coverage: Float32Array, width: number, height: number): { left: Int32Array; right: Int32Array } {
  const left = new Int32Array(height).fill(width);
  const right = new Int32Array(height).fill(-1);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if (coverage[y * width + x]! < 0.5) continue;
      left[y] = Math.min(left[y]!, x);
      right[y] = x;
    }
  }
  return { left, right };
}

/**
 * The gap between a pair of trousers' legs: runs of pixels they do not cover (less than half) between covered ones
 * in their row, part of which has nothing of the trousers below it in its column. What the customer wore shows there
 * in the photo (a skirt's or a dress's middle, old shorts), and no leg is there: the legs are inside the trousers. A
 * gap closed below (a fly's seam the cut-out left soft, a hole in an on-model photo's cut-out) is not one.
 */
function openBetween(coverage: Float32Array, width: number, height: number): Uint8Array {
  const { left, right } = rowExtents(coverage, width, height);
  // Open below: nothing of the trousers under the pixel in its column.
  const open = new Uint8Array(width * height);
  for (let x = 0; x < width; x++) {
    for (let y = height - 1; y >= 0 && coverage[y * width + x]! < 0.5; y--) open[y * width + x] = 1;
  }
  // A run of uncovered pixels across a row between the legs is the gap when any of it is open below: a leg slanting
  // inwards under part of it does not close the rest.
  const out = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) {
    let x = left[y]! + 1;
    while (x < right[y]!) {
      let end = x;
      let opens = false;
      for (; end < right[y]! && coverage[y * width + end]! < 0.5; end++) if (open[y * width + end]) opens = true;
      if (opens) out.fill(1, y * width + x, y * width + end);
      x = end + 1;
    }
  }
  return out;
}

/**
 * A photo's mean colour over the square of radius r round (x, y), clipped to the photo; over the person's pixels only
 * when their matte is given (an arm's edge is not paler for the wall beside it).
 */
function meanColour(image: RawImage, x: number, y: number, r: number, matte?: Mask): [number, number, number] {
  const { width, height, channels, data } = image;
  const sum: [number, number, number] = [0, 0, 0];
  let n = 0;
  for (let v = Math.max(0, y - r); v <= Math.min(height - 1, y + r); v++) {
    for (let u = Math.max(0, x - r); u <= Math.min(width - 1, x + r); u++) {
      if (matte && matte.data[v * width + u]! < 128) continue;
      const j = (v * width + u) * channels;
      sum[0] += data[j]!;
      sum[1] += data[j + 1]!;
      sum[2] += data[j + 2]!;
      n++;
    }
  }
  return n > 0 ? [sum[0] / n, sum[1] / n, sum[2] / n] : [0, 0, 0];
}

/**
 * Whether a point lies past a seen ankle along its shin (from the knee), on that leg's side: the foot, where a shoe
 * is. Never for an ankle the pose does not see (a half-body photo).
 */
function belowAnkles(person: PersonAnalysis): (x: number, y: number) => boolean {
  const lm = person.landmarks;
  const legs = [
    [lm[POSE.leftKnee]!, lm[POSE.leftAnkle]!, lm[POSE.rightAnkle]!],
    [lm[POSE.rightKnee]!, lm[POSE.rightAnkle]!, lm[POSE.leftAnkle]!],
  ].filter(([, ankle]) => ankle!.visibility >= 0.5);
  return (x, y) =>
    legs.some(([knee, ankle, other]) => {
      const dx = ankle!.x - knee!.x;
      const dy = ankle!.y - knee!.y;
      const nearer = Math.hypot(x - ankle!.x, y - ankle!.y) <= Math.hypot(x - other!.x, y - other!.y);
      return nearer && (x - ankle!.x) * dx + (y - ankle!.y) * dy > 0;
    });
}

/** Per row, whether the new garments cover the body's centre line there (the line from the shoulders' to the hips' middle). */
export function coveredCentre(person: PersonAnalysis, coverage: Float32Array, width: number, height: number): Uint8Array {
  const out = new Uint8Array(height);
  const lm = person.landmarks;
  const top = {
    x: (lm[POSE.leftShoulder]!.x + lm[POSE.rightShoulder]!.x) / 2,
    y: (lm[POSE.leftShoulder]!.y + lm[POSE.rightShoulder]!.y) / 2,
  };
  const bottom = { x: (lm[POSE.leftHip]!.x + lm[POSE.rightHip]!.x) / 2, y: (lm[POSE.leftHip]!.y + lm[POSE.rightHip]!.y) / 2 };
  const dy = bottom.y - top.y || 1;
  for (let y = 0; y < height; y++) {
    const x = Math.round(top.x + ((bottom.x - top.x) * (y - top.y)) / dy);
    out[y] = x >= 0 && x < width && coverage[y * width + x]! >= 0.5 ? 1 : 0;
  }
  return out;
}

/**
 * How far across a limb a point lies, squared: 0 on the nearest limb bone's axis, 1 at the edge of its core
 * (CORE_RADIUS of its radius) and beyond; 0 when no limb bone is near.
 */
function sideOfLimb(limbs: ReturnType<typeof skeleton>['bones']): (x: number, y: number) => number {
  return (x, y) => {
    let nearest = Infinity;
    for (const bone of limbs) nearest = Math.min(nearest, segmentDistance2(x, y, bone) / (bone.radius * bone.radius * CORE_RADIUS2));
    return Number.isFinite(nearest) ? Math.min(1, nearest) : 0;
  };
}

/** Whether a point is inside the body's core: the torso quadrilateral or within a bone's radius. */
function coreTest(
  bones: ReturnType<typeof skeleton>['bones'],
  torso: ReturnType<typeof skeleton>['torso'],
): (x: number, y: number) => boolean {
  return (x, y) =>
    insideConvex(x, y, torso) || bones.some((bone) => segmentDistance2(x, y, bone) <= bone.radius * bone.radius * CORE_RADIUS2);
}

/** The wall behind each person, per photo: found once for every compositing of a try-on (each caution level). */
const walls = new WeakMap<PersonAnalysis, { image: RawImage; fill: Uint8Array }>();

function wallBehind(image: RawImage, person: PersonAnalysis): Uint8Array {
  const known = walls.get(person);
  if (known && known.image === image) return known.fill;
  const fill = backgroundFill(image, person);
  walls.set(person, { image, fill });
  return fill;
}

/**
 * A background estimate for person pixels: along each row, the colours of
 * the nearest background pixels to the left and right, blended by distance
 * (studio walls are smooth across a row), then averaged down each column
 * (smoothDown).
 */
function backgroundFill(image: RawImage, person: PersonAnalysis): Uint8Array {
  const { width, height, data, channels } = image;
  const out = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++) {
    let x = 0;
    while (x < width) {
      if (person.matte.data[y * width + x]! < BACKGROUND_MATTE) {
        x++;
        continue;
      }
      let end = x;
      while (end < width && person.matte.data[y * width + end]! >= BACKGROUND_MATTE) end++;
      // A few pixels away from the person's edge, where the matte's soft border no longer mixes in the person.
      const sampleAt = (from: number, dir: 1 | -1): [number, number, number] | null => {
        const colour: [number, number, number] = [0, 0, 0];
        let n = 0;
        for (let d = BACKGROUND_GAP; d < BACKGROUND_GAP + 3; d++) {
          const px = from + dir * d;
          if (px < 0 || px >= width || person.matte.data[y * width + px]! >= BACKGROUND_MATTE) continue;
          for (let c = 0; c < 3; c++) colour[c]! += data[(y * width + px) * channels + c]!;
          n++;
        }
        return n > 0 ? [colour[0] / n, colour[1] / n, colour[2] / n] : null;
      };
      const leftColour = sampleAt(x - 1, -1);
      const rightColour = sampleAt(end, 1);
      for (let k = x; k < end; k++) {
        const t = end - x > 1 ? (k - x) / (end - x - 1) : 0.5;
        for (let c = 0; c < 3; c++) {
          const a = leftColour?.[c] ?? rightColour?.[c] ?? 128;
          const b = rightColour?.[c] ?? a;
          out[(y * width + k) * 3 + c] = Math.round(a * (1 - t) + b * t);
        }
      }
      x = end;
    }
  }
  smoothDown(out, person.matte, width, height, Math.max(1, Math.round(BACKGROUND_SMOOTHING * height)));
  return out;
}

/**
 * The fill averaged down each column over the person's pixels within r rows: a row whose samples caught the soft
 * edge of a garment or a hand beside the wall is no streak across the fill.
 */
function smoothDown(fill: Uint8Array, matte: Mask, width: number, height: number, r: number): void {
  const inside = matte.data;
  // Only the columns the person spans have a fill.
  let x0 = width;
  let x1 = -1;
  for (let i = 0; i < width * height; i++) {
    if (inside[i]! < BACKGROUND_MATTE) continue;
    const x = i % width;
    if (x < x0) x0 = x;
    if (x > x1) x1 = x;
  }
  if (x1 < 0) return;
  const source = fill.slice();
  // Running sums per column (and channel) over the window, moved down a row at a time: rows are walked in order.
  const sum = new Int32Array(width * 3);
  const count = new Int32Array(width);
  const add = (y: number, sign: number): void => {
    for (let x = x0, i = y * width + x0; x <= x1; x++, i++) {
      if (inside[i]! < BACKGROUND_MATTE) continue;
      count[x] = count[x]! + sign;
      const j = i * 3;
      const k = x * 3;
      sum[k] = sum[k]! + sign * source[j]!;
      sum[k + 1] = sum[k + 1]! + sign * source[j + 1]!;
      sum[k + 2] = sum[k + 2]! + sign * source[j + 2]!;
    }
  };
  for (let y = 0; y < Math.min(r, height); y++) add(y, 1);
  for (let y = 0; y < height; y++) {
    if (y + r < height) add(y + r, 1);
    if (y - r - 1 >= 0) add(y - r - 1, -1);
    for (let x = x0, i = y * width + x0; x <= x1; x++, i++) {
      if (inside[i]! < BACKGROUND_MATTE) continue;
      const n = count[x]!;
      const j = i * 3;
      const k = x * 3;
      fill[j] = (sum[k]! / n + 0.5) | 0;
      fill[j + 1] = (sum[k + 1]! / n + 0.5) | 0;
      fill[j + 2] = (sum[k + 2]! / n + 0.5) | 0;
    }
  }
}

/**
 * What is left of a garment as specks cut off from it by what stays in front (a collar's tip under the chin, between
 * the skin in front and the jaw's shadow) goes: pieces of it (4-connected, at least half opaque) under SPECK of its
 * largest piece. `soft` (what may show of each pixel) is changed.
 */
function dropSpecks(layer: Layer, soft: Float32Array): void {
  const { width: lw, height: lh, alpha } = layer;
  const solid = new Uint8Array(lw * lh);
  for (let k = 0; k < solid.length; k++) solid[k] = alpha[k]! * soft[k]! >= 0.5 ? 1 : 0;
  const { label: piece, sizes } = components(solid, lw, 1);
  let largest = 0;
  for (const size of sizes) largest = Math.max(largest, size);
  // A speck's soft rim goes with it: what is not solid takes the piece of a solid neighbour within a pixel.
  for (let k = 0; k < piece.length; k++) {
    const id = piece[k]!;
    if (id >= 0 && sizes[id]! < SPECK * largest) soft[k] = 0;
  }
  for (let y = 0; y < lh; y++) {
    for (let x = 0; x < lw; x++) {
      const k = y * lw + x;
      if (piece[k] !== -1 || soft[k] === 0) continue;
      let near = -1;
      for (const r of [x > 0 ? k - 1 : -1, x < lw - 1 ? k + 1 : -1, y > 0 ? k - lw : -1, y < lh - 1 ? k + lw : -1])
        if (r >= 0 && piece[r]! >= 0 && (near < 0 || sizes[piece[r]!]! > sizes[near]!)) near = piece[r]!;
      if (near >= 0 && sizes[near]! < SPECK * largest) soft[k] = 0;
    }
  }
}

/**
 * Which hand pixels of a layer's box stay in front of it: the bare skin of the hands and the skin-coloured pixels
 * within HAND_EDGE of it (its edge, which the test for skin over an area misses). A hand's region is drawn round the
 * hand's landmarks and also holds what lies under a hand in a pocket or beside it (the pocket's dark edge, an old
 * cuff), which would show through a new garment in patches.
 * When the skin's colour is not found on a hand at all (a glove, a hand in deep shade), the whole region stays, but
 * for what of it is old clothing (`cloth`: for new bottoms the old bottoms' cloth; for a top, a dress or a jacket,
 * what is nearer either old garment's colour than the skin's): a hand in a pocket shows none.
 */
function handsInFront(
  labels: Uint8Array,
  width: number,
  layer: Layer,
  skinLike: Float32Array,
  skinArea: Float32Array,
  cloth: ((o: number) => boolean) | null,
): Uint8Array {
  const { x0, y0, width: lw, height: lh } = layer;
  const bare = new Uint8Array(lw * lh);
  const region = new Uint8Array(lw * lh);
  let regionPixels = 0;
  let barePixels = 0;
  for (let y = 0; y < lh; y++) {
    for (let x = 0; x < lw; x++) {
      const o = y * lw + x;
      if (!HANDS.has(labels[(y0 + y) * width + x0 + x]!)) continue;
      region[o] = 1;
      regionPixels++;
      if (skinLike[o] === 1 && skinArea[o]! >= BARE.share) {
        bare[o] = 1;
        barePixels++;
      }
    }
  }
  if (barePixels < HAND_SKIN * regionPixels) {
    // What of it is old clothing is no hand: the hand is in a pocket.
    if (cloth) for (let o = 0; o < region.length; o++) if (region[o] && cloth(o)) region[o] = 0;
    return region;
  }
  // Only skin-coloured: the wall or cloth seen between a hand and the body, kept in front, stood round it as a light
  // halo over a new garment (#84, #24).
  const near = squareFilter(bare, lw, lh, HAND_EDGE, true);
  for (let o = 0; o < near.length; o++) near[o] = near[o]! & region[o]! & (skinLike[o] === 1 ? 1 : 0);
  return near;
}

/**
 * The bare skin of each hand that stays in front (`hands`, from its region) grown over the rest of the hand: the
 * bare skin joined to it within the hand's shape (WHOLE_HAND), beyond its wrist, and not `cloth` (nearer an old
 * garment's colour than the mean of the hand's own skin). The layout gives the back of a hand in a pocket to the
 * torso and a forearm, so a longer top was drawn over most of it and left the region's skin standing in the cloth in
 * patches (#72). Grown in place in `hands`, which then covers pixels of any label: outside the hand's region they
 * stay in front as bare skin does, their edge smoothed.
 */
function wholeHands(
  hands: Uint8Array,
  labels: Uint8Array,
  width: number,
  layer: Layer,
  bare: (o: number) => boolean,
  cloth: ((o: number, hand: readonly number[]) => boolean) | null,
  image: RawImage,
  person: PersonAnalysis,
  U: number,
): void {
  const { x0, y0, width: lw, height: lh } = layer;
  const lm = person.landmarks;
  const capsules = [
    [REGION.leftHand, lm[POSE.leftWrist]!, lm[POSE.leftIndex]!, lm[POSE.leftPinky]!],
    [REGION.rightHand, lm[POSE.rightWrist]!, lm[POSE.rightIndex]!, lm[POSE.rightPinky]!],
  ].map(([region, wrist, index, pinky]) => {
    const [w, i, p] = [wrist, index, pinky] as { x: number; y: number }[];
    const knuckles = { x: (i!.x + p!.x) / 2, y: (i!.y + p!.y) / 2 };
    const tip = { x: w!.x + (knuckles.x - w!.x) * WHOLE_HAND.past, y: w!.y + (knuckles.y - w!.y) * WHOLE_HAND.past };
    const [dx, dy] = [tip.x - w!.x, tip.y - w!.y];
    const length2 = dx * dx + dy * dy;
    // Narrow at the wrist, as broad as the hand from its knuckles on.
    const inside = (px: number, py: number, onLeg: boolean): boolean => {
      const t = length2 > 0 ? ((px - w!.x) * dx + (py - w!.y) * dy) / length2 : 0;
      if (t < 0) return false;
      const along = Math.min(1, t);
      const radius = U * (WHOLE_HAND.wrist + (WHOLE_HAND.radius - WHOLE_HAND.wrist) * Math.min(1, t * WHOLE_HAND.past));
      const d2 = (w!.x + along * dx - px) ** 2 + (w!.y + along * dy - py) ** 2;
      return d2 <= radius * radius * (onLeg ? WHOLE_HAND.onLeg ** 2 : 1);
    };
    return { region: region as number, inside };
  });
  for (const { region, inside } of capsules) {
    const seeds: number[] = [];
    const colour = [0, 0, 0];
    for (let o = 0; o < hands.length; o++) {
      const i = (y0 + Math.floor(o / lw)) * width + x0 + (o % lw);
      if (!hands[o] || !bare(o) || labels[i] !== region) continue;
      seeds.push(o);
      for (let c = 0; c < 3; c++) colour[c]! += image.data[i * image.channels + c]!;
    }
    for (let c = 0; c < 3; c++) colour[c]! /= Math.max(1, seeds.length);
    // The colour test averages a square round the pixel: each pixel's answer is kept (1 cloth, 2 not).
    const isCloth = new Uint8Array(lw * lh);
    const grown = flood4(lw, lh, seeds, (x, y) => {
      const n = y * lw + x;
      if (!bare(n) || !inside(x0 + x + 0.5, y0 + y + 0.5, LEGS.has(labels[(y0 + y) * width + x0 + x]!))) return false;
      if (cloth && isCloth[n] === 0) isCloth[n] = cloth(n, colour) ? 1 : 2;
      return isCloth[n] !== 1;
    });
    for (const n of grown) hands[n] = 1;
  }
}

/**
 * The old top's cloth over new bottoms, in their layer's box: per column, from where the top is first met (its colour
 * `nearest` the old top's, 1, rather than the old bottoms', 0, or skin, 2; within `gap` of the column's first pixel
 * it may be) down to its hem, through gaps of up to `gap` pixels (a fold's shadow). Below a longer gap (trousers) it
 * has ended. `may`: the pixels the top can be (the torso, the hips, the legs, beside a hanging arm, a hand's region);
 * `lowest`: per column, the lowest row its hem may reach (the old bottoms below it may have a print or a faded patch
 * in the top's colour).
 */
function hangingTop(
  layer: Layer,
  may: (o: number) => boolean,
  nearest: (o: number) => number,
  gap: number,
  lowest: (x: number) => number,
): Uint8Array {
  const { width: lw, height: lh } = layer;
  const kept = new Uint8Array(lw * lh);
  for (let x = 0; x < lw; x++) {
    // The top comes down from above the box: a column whose first `gap` pixels it may be show none of it has none.
    // What it may not be (an arm or a hand in front) and skin neither continue nor end it.
    let seen = 0;
    let misses = 0;
    let last = -1;
    const end = Math.min(lh - 1, Math.floor(lowest(x)));
    for (let y = 0; y <= end; y++) {
      const o = y * lw + x;
      const colour = nearest(o);
      if (!may(o) || colour === 2) continue;
      seen++;
      if (colour !== 1) {
        if (++misses > gap) break;
        continue;
      }
      if (last < 0 && seen > gap) break;
      for (let v = last < 0 ? y : last + 1; v <= y; v++) if (may(v * lw + x)) kept[v * lw + x] = 1;
      misses = 0;
      last = y;
    }
  }
  return kept;
}

/**
 * Per pixel of a layer's box, which of `references` the photo's colour there, averaged over the pixels of `mask`
 * within a square of radius r (clipped to the box), is nearest; 255 where none of the mask lies within it.
 */
function nearestColour(
  image: RawImage,
  layer: Layer,
  mask: Float32Array,
  r: number,
  references: readonly (readonly number[])[],
): Uint8Array {
  const { x0, y0, width: lw, height: lh } = layer;
  const weight = boxMean(mask, lw, lh, r);
  const means = [0, 1, 2].map((c) => {
    const plane = new Float32Array(lw * lh);
    for (let y = 0; y < lh; y++)
      for (let x = 0; x < lw; x++)
        plane[y * lw + x] = mask[y * lw + x]! * image.data[((y0 + y) * image.width + x0 + x) * image.channels + c]!;
    return boxMean(plane, lw, lh, r);
  });
  const out = new Uint8Array(lw * lh).fill(255);
  for (let o = 0; o < out.length; o++) {
    const w = weight[o]!;
    if (w <= 0) continue;
    let best = Infinity;
    references.forEach((ref, k) => {
      const d = (means[0]![o]! / w - ref[0]!) ** 2 + (means[1]![o]! / w - ref[1]!) ** 2 + (means[2]![o]! / w - ref[2]!) ** 2;
      if (d < best) {
        best = d;
        out[o] = k;
      }
    });
  }
  return out;
}

/** One garment over the picture so far, shaded by the photo, behind what must stay in front. */
function drawLayer(
  out: Uint8Array,
  image: RawImage,
  lum: Float32Array,
  person: PersonAnalysis,
  skin: SkinModel | null,
  placed: PlacedLayer,
  underChin: Uint8Array | null,
  oldColours: OldColours | null,
  hem: OldHem | null,
  foldedArms: boolean,
): void {
  const { width, data, channels } = image;
  const { layer, category } = placed;
  const { x0, y0, width: lw, height: lh } = layer;
  if (lw === 0 || lh === 0) return;
  const labels = person.layout.labels;
  const U = Math.hypot(person.landmarks[11]!.x - person.landmarks[12]!.x, person.landmarks[11]!.y - person.landmarks[12]!.y);
  const shoulders = [person.landmarks[11]!, person.landmarks[12]!];
  const capRadius2 = (0.3 * U) ** 2;
  const limbs = skin ? limbPaint(image, person, skin, CORE_RADIUS2) : null;

  // Bare skin is skin-coloured over an area: a few skin-coloured pixels on old clothing (pink cloth, a light seam)
  // are not, or the new garment would be drawn round them and the old clothing would show through in specks.
  const skinLike = new Float32Array(lw * lh);
  for (let y = 0; y < lh; y++) {
    for (let x = 0; x < lw; x++) {
      const j = ((y0 + y) * width + x0 + x) * channels;
      skinLike[y * lw + x] = !skin || isSkin(skin, data[j]!, data[j + 1]!, data[j + 2]!) ? 1 : 0;
    }
  }
  const skinArea = boxMean(skinLike, lw, lh, BARE.radius);
  // Whether a pixel of the layer's box is nearer the old bottoms' colour than the old top's, averaged over a few pixels
  // (a striped top's dark stripes are not trousers), by colour alone.
  const trousers =
    category === 'bottom' && oldColours
      ? (o: number): boolean => {
          const x = x0 + (o % lw);
          const y = y0 + Math.floor(o / lw);
          return oldColours.nearerBottoms(...meanColour(image, x, y, BESIDE_SMOOTHING)) || !!oldColours.inPrint?.(y * width + x);
        }
      : null;
  // A hand hidden in a trouser pocket shows the trousers in its region: new bottoms cover that cloth. Where the hand
  // shows too little skin to be found, brown or khaki trousers pass for skin, and so do their shadowed folds. Over it a
  // longer new top covers what there is nearer either old garment's colour than the skin's (the pocket, an old cuff).
  const clothes =
    category !== 'bottom' && oldColours && skin
      ? (o: number): boolean => {
          const mean = meanColour(image, x0 + (o % lw), y0 + Math.floor(o / lw), BESIDE_SMOOTHING);
          const d = [oldColours.bottom, oldColours.top, skin.rgb].map((c) => Math.hypot(mean[0] - c[0], mean[1] - c[1], mean[2] - c[2]));
          return d[2]! > Math.min(d[0]!, d[1]!);
        }
      : null;
  const hands = handsInFront(labels, width, layer, skinLike, skinArea, trousers ?? clothes);
  // Skin-coloured cloth beside a hand (khaki shorts) is told by its colour averaged round it, nearer an old garment's
  // than the hand's own.
  const besideHand = oldColours
    ? (o: number, hand: readonly number[]): boolean => {
        const mean = meanColour(image, x0 + (o % lw), y0 + Math.floor(o / lw), BESIDE_SMOOTHING);
        const d = [oldColours.bottom, oldColours.top, hand].map((c) => Math.hypot(mean[0] - c[0]!, mean[1] - c[1]!, mean[2] - c[2]!));
        return d[2]! > Math.min(d[0]!, d[1]!);
      }
    : null;
  wholeHands(hands, labels, width, layer, (o) => skinLike[o] === 1 && skinArea[o]! >= BARE.share, besideHand, image, person, U);
  // The old top, kept, hangs over new bottoms: its cloth stays in front on the torso, the hips and the thighs, beside
  // a hanging arm's own shape (the cuff of a long sleeve) and round a hand by the hip. It is told from the old bottoms
  // by its colour averaged widely over the pixels it may be (a striped shirt's dark stripes are no trousers; an arm
  // in front is not averaged in).
  let keptTop: Uint8Array | null = null;
  if (hem && oldColours) {
    const may = new Float32Array(lw * lh);
    for (let o = 0; o < may.length; o++) {
      const i = (y0 + Math.floor(o / lw)) * width + x0 + (o % lw);
      const label = labels[i]!;
      const besideArm = ARMS.has(label) && limbs !== null && limbs.shape[i]! <= OUTSIDE;
      may[o] = label === REGION.torso || label === REGION.hips || LEGS.has(label) || besideArm || HANDS.has(label) ? 1 : 0;
    }
    // Averaged widely (a dark stripe is the top's), but narrowly where the wide mean takes in a bare forearm beside
    // the top and reads as skin.
    const references = [oldColours.bottom, oldColours.top, ...(skin ? [skin.rgb] : [])];
    const wide = nearestColour(image, layer, may, Math.max(BESIDE_SMOOTHING, Math.round(TOP_SMOOTHING * hem.torsoLength)), references);
    const narrow = nearestColour(image, layer, may, BESIDE_SMOOTHING, references);
    // A bold print of the old bottoms is theirs whatever its patches' colours.
    const inPrint = oldColours.inPrint;
    const colour = (o: number): number => {
      if (inPrint && inPrint((y0 + Math.floor(o / lw)) * width + x0 + (o % lw))) return 0;
      return wide[o] === 2 && narrow[o] === 1 ? 1 : wide[o]!;
    };
    keptTop = hangingTop(
      layer,
      (o) => may[o] === 1,
      colour,
      Math.max(2, Math.round(TOP_GAP * hem.torsoLength)),
      (x) => hem.row(x0 + x) + HEM_SPARE * hem.torsoLength - y0,
    );
  }
  // How far down each arm the garment's sleeve reaches: a bare arm above its end lies in the sleeve, which only misses
  // a strip of it where the arm crosses the body (the tube is drawn along the arm's bones, narrower than a forearm
  // seen slanting), and the garment's body covers that strip rather than leaving a slit of skin.
  const sleeveEnds = limbs ? sleeveReach(layer, limbs, width) : [-Infinity, -Infinity];
  const where = { arm: 0, along: 0 };
  const inSleeve = (i: number): boolean => limbs !== null && limbs.onArm(i, where) && where.along < sleeveEnds[where.arm]! - SLEEVE_END * U;
  // Forearms folded across the body lie in front of a top or dress drawn behind them (one without long sleeves):
  // the layout's coarse regions give parts of them to the torso, where the garment cut into them in shards.
  const folded = category !== 'bottom' && foldedArms ? skeleton(person.landmarks).bones.filter((b) => FOLDED.has(b.region)) : [];
  // The layout's neck, its stair-stepped edges rounded off: a garment's neckline cut round it followed the steps (#40).
  const neckLabel = new Float32Array(lw * lh);
  for (let o = 0; o < neckLabel.length; o++)
    neckLabel[o] = labels[(y0 + Math.floor(o / lw)) * width + x0 + (o % lw)] === REGION.neck ? 1 : 0;
  const neck = boxMean(boxMean(neckLabel, lw, lh, NECK_SMOOTHING), lw, lh, NECK_SMOOTHING);
  // Where the garment may show: not over the head, hair or hands (`allowed`); over arms only as a sleeve or at the
  // shoulder caps, and not over bare skin or a kept top in front of it (`inFront`).
  const allowed = new Float32Array(lw * lh);
  const inFront = new Float32Array(lw * lh);
  // Halfway from the chin down to the shoulders.
  const low = (chinRow(person) + (shoulders[0]!.y + shoulders[1]!.y) / 2) / 2;
  for (let y = 0; y < lh; y++) {
    for (let x = 0; x < lw; x++) {
      const o = y * lw + x;
      const i = (y0 + y) * width + x0 + x;
      const label = labels[i]!;
      let ok = label !== REGION.head || (underChin !== null && underChin[i]! > 0);
      // Bottoms go behind an arm hanging beside them: behind its own shape (limbs.ts), not all of its region, which
      // takes in the old trousers between the arm and the hip; and where the layout gives the arm's edge to the hips,
      // behind its skin-coloured pixels inside its shape there too, anti-aliased (the layout's coarse regions
      // stair-stepped that edge; the shape alone, a little wider than some arms, left a gap beside them). The old
      // bottoms' bold print inside the shape is no arm: the new bottoms cover it.
      let arm = 0;
      if (ok && category === 'bottom') {
        if (!limbs) arm = ARMS.has(label) ? 1 : 0;
        else if (ARMS.has(label)) arm = limbs.shape[i]! > OUTSIDE && (skinLike[y * lw + x] === 1 || !oldColours?.inPrint?.(i)) ? 1 : 0;
        else if (!HANDS.has(label) && skinLike[y * lw + x] === 1) arm = limbs.armCover(x0 + x + 0.5, y0 + y + 0.5);
        if (arm >= 0.5) ok = false;
      }
      // The head's region low over the shoulders (hair on them, the neck's sides) stays in front with its edge
      // smoothed, as bare skin's is: cut along the layout's coarse cells, a garment's shoulders followed their steps
      // (#40). The face and the jaw above are never smoothed.
      if (!ok && label === REGION.head && y0 + y > low) {
        allowed[o] = 1;
        inFront[o] = 1;
        continue;
      }
      allowed[o] = ok ? 1 - arm : 0;
      if (!ok) continue;
      // A hand in front (handsInFront, wholeHands), its edge smoothed as bare skin's is: cut along its region's coarse
      // cells, the garment met a hand, or the pocket a hidden hand leaves, in steps (#103, #43).
      if (hands[o]) {
        inFront[o] = 1;
        continue;
      }
      // Through a layered garment's neck opening shows the top worn under it, not its inside back.
      if ((keptTop && keptTop[o]) || (placed.layered && layer.insideBack?.[o] === 1)) {
        inFront[o] = 1;
        continue;
      }
      // Folded forearms and hands: skin by its chroma alone (a hand's back in shadow fails the face's skin test).
      if (folded.some((b) => segmentDistance2(x0 + x + 0.5, y0 + y + 0.5, b) <= b.radius * b.radius)) {
        const j = i * channels;
        if (skinLike[o] === 1 || skinChroma(data[j]!, data[j + 1]!, data[j + 2]!)) {
          inFront[o] = 1;
          continue;
        }
      }
      const bare = skinLike[o] === 1 && skinArea[o]! >= BARE.share;
      if (!bare) continue;
      // New bottoms cover what lies beside an arm's shape and is far paler than its skin: cloth (cream trousers by a
      // dark-skinned arm) that passes the skin test.
      if (
        category === 'bottom' &&
        limbs &&
        limbs.shape[i] === OUTSIDE &&
        limbs.paler(i, luma(...meanColour(image, x0 + x, y0 + y, BESIDE_SMOOTHING, person.matte)))
      )
        continue;
      // Bare arms and neck stay in front of the garment's body (not of its sleeves, nor at the shoulder caps), and
      // bare skin anywhere in front of its inside back, seen through its neck opening.
      if (neck[o]! >= 0.5) inFront[o] = 1;
      else if (ARMS.has(label) && layer.sleeve[o] === 0) {
        const px = x0 + x;
        const py = y0 + y;
        const cap = folded.length > 0 ? FOLDED_CAP2 * U * U : capRadius2;
        if (!shoulders.some((s) => (px - s.x) ** 2 + (py - s.y) ** 2 < cap) && !inSleeve(i)) inFront[o] = 1;
      }
      if (layer.insideBack?.[o] === 1) inFront[o] = 1;
    }
  }
  // Between folded forearms and hands, a sliver in shadow (neither skin by the face's test nor by its chroma) is no
  // garment showing through: gaps narrower than FOLD_GAP inside the arms' bands are closed.
  if (folded.length > 0) {
    const front8 = new Uint8Array(lw * lh);
    for (let k = 0; k < front8.length; k++) front8[k] = inFront[k]! > 0 ? 1 : 0;
    const closed = squareFilter(squareFilter(front8, lw, lh, FOLD_GAP, true), lw, lh, FOLD_GAP, false);
    for (let k = 0; k < closed.length; k++) {
      if (!closed[k] || inFront[k]) continue;
      const px = x0 + (k % lw) + 0.5;
      const py = y0 + Math.floor(k / lw) + 0.5;
      if (folded.some((b) => segmentDistance2(px, py, b) <= b.radius * b.radius)) inFront[k] = 1;
    }
  }
  // What is in front is told pixel by pixel, so its edge against the garment is ragged: it is taken by majority over a
  // square of radius FRONT_SMOOTHING. The face is never smoothed. Over bare skin the garment fades out
  // over the last stretch below the majority (FRONT_EDGE), so its edge against the neck or an arm in front is
  // anti-aliased, not a staircase of the layout's cells. Over old clothing it is cut at the majority: faded, it would
  // let the old top or sleeve under its edge show as a dark halo.
  const front = boxMean(inFront, lw, lh, FRONT_SMOOTHING);
  for (let k = 0; k < allowed.length; k++) {
    if (front[k]! >= 0.5) allowed[k] = 0;
    else if (front[k]! > FRONT_EDGE && skinLike[k] === 1) allowed[k] = Math.min(allowed[k]!, (0.5 - front[k]!) / (0.5 - FRONT_EDGE));
  }
  // Softened inwards only: pixels that must stay in front stay exactly the photo's.
  const soft = boxMean(allowed, lw, lh, 1);
  for (let k = 0; k < soft.length; k++) if (allowed[k] === 0) soft[k] = 0;
  dropSpecks(layer, soft);

  // Shading from the photo under the garment.
  const local = new Float32Array(lw * lh);
  for (let y = 0; y < lh; y++) for (let x = 0; x < lw; x++) local[y * lw + x] = lum[(y0 + y) * width + x0 + x]!;
  const fine = boxMean(local, lw, lh, SHADING.fine);
  const ratios = shadingRatio(local, lw, lh, SHADING.fine, SHADING.coarse);
  const squares = new Float32Array(lw * lh);
  for (let k = 0; k < squares.length; k++) squares[k] = local[k]! * local[k]!;
  const meanSquares = boxMean(squares, lw, lh, SHADING.fine);

  for (let y = 0; y < lh; y++) {
    for (let x = 0; x < lw; x++) {
      const o = y * lw + x;
      const a = layer.alpha[o]! * soft[o]!;
      if (a <= 0) continue;
      const i = ((y0 + y) * width + x0 + x) * 3;
      const ratio = Math.min(SHADING.max, Math.max(SHADING.min, ratios[o]!));
      const deviation = Math.sqrt(Math.max(0, meanSquares[o]! - fine[o]! * fine[o]!));
      const shade = faded(ratio, deviation, SHADING.strength);
      for (let c = 0; c < 3; c++) {
        const g = Math.min(255, layer.rgb[o * 3 + c]! * shade);
        out[i + c] = Math.round(g * a + out[i + c]! * (1 - a));
      }
    }
  }
}
