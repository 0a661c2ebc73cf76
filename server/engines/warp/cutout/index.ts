/**
 * A garment cut out of its product photo, with its category and landmarks.
 * A photo in which the vision layer finds one person is a garment worn by a
 * model: the garment is the model's clothing of that category (the person
 * matte within the body regions, minus skin), and the model's pose gives
 * the landmarks; one that comes out full of holes (told from the model by
 * colour, a satin's sheen reads as skin) is refused. Any other photo is a
 * flat-lay or ghost-mannequin shot: the garment is what stands out from the
 * plain background, its silhouette gives the category and landmarks, and
 * the inside back seen through its neck opening is cut away (a jacket's)
 * or marked (a top's or dress's, inside-back.ts).
 */
import { findWearer } from '../../person.ts';
import { PersonAnalyzer } from '../../../vision/person.ts';
import { POSE, REGION, type Mask, type PersonAnalysis, type RawImage } from '../../../vision/types.ts';
import { EngineError, type GarmentCategory } from '../../types.ts';
import { squareFilter } from '../../../kernel/raster.ts';
import { bareSkinShare, clothingColour, isSkin, skinModel, type SkinModel } from '../composite/colour.ts';
import type { GarmentCutout, GarmentLandmarks, Point, WarpCategory } from '../types.ts';
import { faintGarmentMatte, garmentMatte, type GarmentMatte } from './alpha.ts';
import { closeLegStripes, combineMattes, openSlits, type SlitWindow } from './combine.ts';
import { cutInsideBack, frontNeckline, insideBackMask, usualNeckline } from './inside-back.ts';
import { coverLabel, findLabel } from './label.ts';
import type { GarmentSegmenter } from './learned.ts';
import { looksLikeOuterwear } from './closure.ts';
import { categoryOf, lowerLandmarks, readSilhouette, upperLandmarks } from './silhouette.ts';

export interface CutOutOptions {
  category: GarmentCategory;
  analyzer: PersonAnalyzer;
  /** The learned segmenter; without it a flat garment is cut out by the classical matte alone. */
  segmenter?: GarmentSegmenter;
}

/** How far a model's nose lies above their shoulders' line at least, in shoulder widths. */
const NECK_RISE = 0.3;
/** A worn garment's matte less solid than this (solidity) is shreds, not a garment. */
const MIN_SOLIDITY = 0.8;
/**
 * …and so is one whose least solid quarter, top to bottom, is less solid than this: a cardigan whose print matched
 * the jeans under it came out whole above and in shreds over its lowest quarter (0.64, drawn as smeared streaks); the
 * other worn garments' quarters measure 0.74 (a skirt's waistband under a cardigan's hem) to 1.
 */
const MIN_BAND_SOLIDITY = 0.7;
const BANDS = 4;
/**
 * A slit between a hanging sleeve and the body is looked for within this share of the chest's width (armpit to
 * armpit) of an armpit's column: the sleeve hangs against the body's side, on either side of it.
 */
const SLIT_REACH = 0.25;
/**
 * On an on-model photo framed on the legs, the torso's and the thighs' clothing this close (RGB distance of their
 * means) are one garment, a dress; this far apart, a top over the bottoms for sale. Between, it is not clear.
 */
const ONE_GARMENT = 40;
const TWO_GARMENTS = 120;
/** solidity's closing radius, as a share of the garment's longer side. */
const CLOSING_RADIUS = 0.02;
/** Pixels kept around the garment when cropping. */
const MARGIN = 8;
/**
 * A soft edge pixel takes the mean colour of the garment's solid pixels (alpha ≥ SOLID) within EDGE_COLOUR pixels,
 * else that of its most opaque neighbour there.
 */
const EDGE_COLOUR = 3;
const SOLID = 250;
/** A garment smaller than this share of its photo is not a garment photo. */
const MIN_COVERAGE = 0.02;
/**
 * A garment filling less than this share of its own bounding box is fragments: a print without its shirt,
 * when a white shirt on a white background does not stand out. Those get a second, outline-bounded look
 * (`faintGarmentMatte`) before they are refused. Calibration: bench/RESULTS.md.
 */
const FRAGMENTED = 0.5;
/** Where a model whose head is out of the frame shows skin, and at least how much of it. */
const BARE_REGIONS = new Set<number>([REGION.neck, REGION.leftHand, REGION.rightHand, REGION.leftLowerArm, REGION.rightLowerArm]);
const MIN_BARE_SKIN = 0.1;

export async function cutOutGarment(image: RawImage, options: CutOutOptions): Promise<GarmentCutout> {
  const model = await findWearer(options.analyzer, image);
  // A model counts when their shoulders and hips are clearly in the photo and their face is skin, or cut off by the
  // top of the frame (a garment's print or a mannequin can look like a pose to the detector, but has no skin face).
  // The model's skin, measured once: it tells a face from a print's, what the photo is framed on, and the garment.
  const skin = model ? skinModel(image, model) : null;
  if (model && isModel(image, model, skin)) {
    const category = options.category === 'auto' ? framedOn(image, model, skin) : options.category;
    return withFront(wornGarment(image, model, skin, category, options.category === 'auto' ? 'silhouette' : 'request'));
  }
  return withoutInsideBack(
    withFront(flatGarment(image, options.category, options.segmenter ? await options.segmenter.segment(image) : null)),
  );
}

/**
 * A flat jacket without the inside back seen through its neck opening, a flat top or dress with it marked
 * (inside-back.ts) and the front neckline's centre kept as its `neckSeam`.
 */
function withoutInsideBack(cutout: GarmentCutout): GarmentCutout {
  if (cutout.category === 'bottom') return cutout;
  const label = findLabel(cutout.image, cutout.landmarks);
  if (label) coverLabel(cutout.image, label);
  // A garment worn over a top shows that top through its neck opening, never its own inside back: where no front
  // neckline is seen, it is taken to be a round neck's.
  const neckline =
    frontNeckline(cutout.image, cutout.landmarks) ?? (cutout.landmarks.layered ? usualNeckline(cutout.image, cutout.landmarks) : null);
  if (!neckline) return cutout;
  if (cutout.category === 'outerwear') {
    cutInsideBack(cutout.image, neckline);
    return cutout;
  }
  const centre = (neckline.rows.length - 1) >> 1;
  const neckSeam = { x: neckline.x0 + centre, y: neckline.rows[centre]! };
  return { ...cutout, landmarks: { ...cutout.landmarks, neckSeam }, insideBack: insideBackMask(cutout.image, neckline) };
}

/** A garment read as a top from its shape that has a jacket's front (closure.ts) is outerwear. */
function withFront(cutout: GarmentCutout): GarmentCutout {
  if (cutout.categorySource !== 'silhouette' || cutout.category !== 'top' || !looksLikeOuterwear(cutout)) return cutout;
  return { ...cutout, category: 'outerwear' };
}

/**
 * What an on-model product photo asked for with `auto` shows, from how it is framed: a product photo is framed on its
 * product. One whose middle lies below the model's hips, with the knees in it, is framed on the legs and shows the
 * bottoms, or a dress where the torso and the thighs wear one colour; any other shows a top. Where the colours are
 * neither alike nor clearly apart (a dark dress whose neckline shows skin), staff are asked for the category.
 */
function framedOn(image: RawImage, model: PersonAnalysis, skin: SkinModel | null): WarpCategory {
  const lm = model.landmarks;
  const hipY = (lm[POSE.leftHip]!.y + lm[POSE.rightHip]!.y) / 2;
  const knees = [POSE.leftKnee, POSE.rightKnee].every((k) => lm[k]!.visibility > 0.5 && lm[k]!.y < image.height);
  if (hipY >= 0.5 * image.height || !knees) return 'top';
  const torso = clothingColour(image, model, new Set([REGION.torso]), skin);
  const thighs = clothingColour(image, model, new Set([REGION.leftUpperLeg, REGION.rightUpperLeg]), skin);
  const apart = torso && thighs ? Math.hypot(torso[0] - thighs[0], torso[1] - thighs[1], torso[2] - thighs[2]) : Infinity;
  if (apart <= ONE_GARMENT) return 'dress';
  if (apart >= TWO_GARMENTS) return 'bottom';
  throw new EngineError(
    'garment_not_detected',
    'the garment photo shows a model in a whole outfit and it is not clear which garment is for sale; choose its category',
  );
}

function isModel(image: RawImage, model: PersonAnalysis, skin: SkinModel | null): boolean {
  const inside = (k: number): boolean => {
    const p = model.landmarks[k]!;
    return p.visibility > 0.8 && p.x >= 0 && p.y >= 0 && p.x < image.width && p.y < image.height;
  };
  if (![POSE.leftShoulder, POSE.rightShoulder, POSE.leftHip, POSE.rightHip].every(inside)) return false;
  // A model shows bare skin at the neck, hands or forearms; a pose the detector imagines on a puffer shows only cloth.
  if ((bareSkinShare(image, model, BARE_REGIONS) ?? 0) < MIN_BARE_SKIN) return false;
  // Product photos often cut the model's head off at the top: then there is no face to check.
  const nose = model.landmarks[POSE.nose]!;
  if (nose.y < 0) return true;
  if (![POSE.nose, POSE.leftEye, POSE.rightEye].every(inside)) return false;
  if (noNeck(model)) return false;
  // Human skin, whatever its tone, has chroma in a narrow band (red over blue): a print's "face" does not.
  if (!skin || skin.cr < 4 || skin.cr > 55 || skin.cb < -45 || skin.cb > 8) return false;
  const j = (Math.round(nose.y) * image.width + Math.round(nose.x)) * image.channels;
  return (
    isSkin(skin, image.data[j]!, image.data[j + 1]!, image.data[j + 2]!) &&
    model.layout.labels[Math.round(nose.y) * image.width + Math.round(nose.x)] === REGION.head
  );
}

/**
 * Whether the nose lies less than NECK_RISE shoulder widths above the shoulders' line: a head stands on a neck
 * (about 0.6 for a person facing the camera), while a "face" the pose model finds in a shirt's print sits between
 * the shoulders it imagines.
 */
function noNeck(model: PersonAnalysis): boolean {
  const lm = model.landmarks;
  const ls = lm[POSE.leftShoulder]!;
  const rs = lm[POSE.rightShoulder]!;
  const unit = Math.hypot(ls.x - rs.x, ls.y - rs.y);
  return (ls.y + rs.y) / 2 - lm[POSE.nose]!.y < NECK_RISE * unit;
}

function flatGarment(image: RawImage, requested: GarmentCategory, learned: Mask | null): GarmentCutout {
  const classical = garmentMatte(image);
  let matte = classical;
  if (learned) {
    // The learned map decides what is garment (white on white included); the classical matte keeps the edge.
    const combined = combineMattes(learned, classical);
    if (combined && combined.coverage >= MIN_COVERAGE && !fragmented(combined, image)) matte = combined;
  }
  if (matte && (matte.coverage < MIN_COVERAGE || fragmented(matte, image))) {
    // Only a print stood out: look again for a faint garment around it, bounded by its outline.
    const faint = faintGarmentMatte(image);
    if (faint && faint.coverage >= MIN_COVERAGE && !fragmented(faint, image)) matte = faint;
  }
  if (!matte || matte.coverage < MIN_COVERAGE) {
    throw new EngineError('garment_not_detected', 'no garment stands out from the background of the garment photo');
  }
  if (fragmented(matte, image)) {
    throw new EngineError(
      'garment_not_detected',
      'the garment does not stand out from its background (white on white?); photograph it on a contrasting background',
    );
  }
  const silhouette = readSilhouette(matte.alpha);
  const category: WarpCategory = requested === 'auto' ? categoryOf(silhouette) : requested;
  const landmarks = category === 'bottom' ? lowerLandmarks(silhouette) : upperLandmarks(silhouette, category);
  // The slits of backdrop between a hanging sleeve and the body, blurred shut by the learned map, are opened again.
  // The landmarks are read with them shut: a sleeve hanging against the body is found where it parts from it near
  // the hem, and opened, the slit ended it early.
  if (classical && matte !== classical)
    for (const window of slitWindows(landmarks)) openSlits(matte.alpha, classical.alpha, matte.box, image, window);
  // Stripes of trousers in the backdrop's colour, left out by both mattes, are closed again.
  if (category === 'bottom' && landmarks.crotch) closeLegStripes(matte.alpha, matte.box, landmarks.crotch);
  return crop(image, matte.alpha, matte.box, landmarks, category, requested === 'auto' ? 'silhouette' : 'request', 'flat');
}

/**
 * Where a slit between a hanging sleeve and the body lies (openSlits): beside each armpit's column, within SLIT_REACH
 * of the chest's width, from the armpit down to the sleeve's end. None when the sleeves do not hang.
 */
function slitWindows(g: GarmentLandmarks): SlitWindow[] {
  if (!g.sleevesHang || !g.leftArmpit || !g.rightArmpit || !g.leftSleeveEnd || !g.rightSleeveEnd) return [];
  const reach = SLIT_REACH * Math.abs(g.leftArmpit.x - g.rightArmpit.x);
  return [
    [g.leftArmpit, g.leftSleeveEnd],
    [g.rightArmpit, g.rightSleeveEnd],
  ].map(([pit, end]) => ({ left: pit!.x - reach, right: pit!.x + reach, top: pit!.y, bottom: end!.y }));
}

function fragmented(matte: GarmentMatte, image: RawImage): boolean {
  const [bx0, by0, bx1, by1] = matte.box;
  return matte.coverage * image.width * image.height < FRAGMENTED * (bx1 - bx0) * (by1 - by0);
}

/** The garment a model wears: their clothing in the category's body regions, and landmarks from their pose. */
function wornGarment(
  image: RawImage,
  model: PersonAnalysis,
  skin: SkinModel | null,
  category: WarpCategory,
  source: 'request' | 'silhouette',
): GarmentCutout {
  const worn = wornGarmentMask(image, model, category, skin);
  if (worn.pixels < MIN_COVERAGE * image.width * image.height) {
    throw new EngineError('garment_not_detected', `the model in the garment photo wears no ${category} that can be cut out`);
  }
  // Told from the model by colour, a garment whose sheen or print is near their skin, or whose colour is near their
  // other clothes, comes out full of holes (and takes skin in): drawn, it is shreds.
  if (solidity(worn.mask, worn.box) < MIN_SOLIDITY || leastSolidBand(worn.mask, worn.box) < MIN_BAND_SOLIDITY) {
    throw new EngineError(
      'garment_not_detected',
      `the ${category} in the garment photo cannot be told apart from the model wearing it; use a flat-lay or ghost-mannequin photo`,
    );
  }
  return crop(image, worn.mask, worn.box, wornLandmarks(model, worn.mask, category), category, source, 'worn');
}

/**
 * How solid a garment's matte is: its pixels (alpha ≥ 128) within `box` over those of its closing by a square of
 * CLOSING_RADIUS of the box's longer side (holes and notches narrower than that filled). A garment cut out whole is
 * near 1; one cut out in shreds is well below.
 */
export function solidity(mask: Mask, box: readonly [number, number, number, number]): number {
  const [x0, y0, x1, y1] = box;
  const w = x1 - x0;
  const h = y1 - y0;
  if (w <= 0 || h <= 0) return 0;
  const solid = new Uint8Array(w * h);
  let area = 0;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      if (mask.data[(y0 + y) * mask.width + x0 + x]! < 128) continue;
      solid[y * w + x] = 1;
      area++;
    }
  }
  const r = Math.max(2, Math.round(CLOSING_RADIUS * Math.max(w, h)));
  const closed = squareFilter(squareFilter(solid, w, h, r, true), w, h, r, false);
  let closedArea = 0;
  for (let k = 0; k < closed.length; k++) closedArea += closed[k]!;
  return closedArea === 0 ? 0 : area / closedArea;
}

/** The solidity of the least solid of BANDS horizontal bands of `box`: shreds over part of a garment. */
export function leastSolidBand(mask: Mask, box: readonly [number, number, number, number]): number {
  const [x0, y0, x1, y1] = box;
  let least = 1;
  for (let k = 0; k < BANDS; k++) {
    const top = y0 + Math.round((k * (y1 - y0)) / BANDS);
    const bottom = y0 + Math.round(((k + 1) * (y1 - y0)) / BANDS);
    least = Math.min(least, solidity(mask, [x0, top, x1, bottom]));
  }
  return least;
}

/** A model's garment of one category: its matte, its bounding box [x0, y0, x1, y1) and its count of solid pixels. */
export interface WornGarmentMask {
  mask: Mask;
  box: [number, number, number, number];
  pixels: number;
}

/**
 * Which pixels of a photo are the garment of `category` that the model wears: the person matte within the
 * category's body regions, less bare skin and, near the waist, less the model's other garment (told apart by
 * colour). The FASHN engine keeps these pixels of a worn garment photo, as the reference keeps its parser's.
 */
export function wornGarmentMask(
  image: RawImage,
  model: PersonAnalysis,
  category: WarpCategory,
  skin: SkinModel | null = skinModel(image, model),
): WornGarmentMask {
  const regions = new Set<number>(
    category === 'bottom'
      ? [REGION.hips, REGION.leftUpperLeg, REGION.rightUpperLeg, REGION.leftLowerLeg, REGION.rightLowerLeg]
      : category === 'dress'
        ? [
            REGION.torso,
            REGION.hips,
            REGION.leftUpperArm,
            REGION.rightUpperArm,
            REGION.leftLowerArm,
            REGION.rightLowerArm,
            REGION.leftUpperLeg,
            REGION.rightUpperLeg,
          ]
        : [REGION.torso, REGION.leftUpperArm, REGION.rightUpperArm, REGION.leftLowerArm, REGION.rightLowerArm],
  );
  const { width, height, data, channels } = image;
  // The model's other garment (trousers under a top, a top over trousers) is told apart by colour.
  const upper = clothingColour(image, model, new Set<number>([REGION.torso]), skin);
  const lower = clothingColour(image, model, new Set<number>([REGION.leftUpperLeg, REGION.rightUpperLeg]), skin);
  const own = category === 'bottom' ? lower : upper;
  const other = category === 'bottom' ? upper : lower;
  const distance = (j: number, c: [number, number, number]): number =>
    Math.hypot(data[j]! - c[0], data[j + 1]! - c[1], data[j + 2]! - c[2]);
  const separable = category !== 'dress' && own && other && Math.hypot(own[0] - other[0], own[1] - other[1], own[2] - other[2]) > 40;
  // Only near the waist, where the two garments meet (a dark print on a light chest is not trousers).
  const shoulderY = (model.landmarks[POSE.leftShoulder]!.y + model.landmarks[POSE.rightShoulder]!.y) / 2;
  const hipY = (model.landmarks[POSE.leftHip]!.y + model.landmarks[POSE.rightHip]!.y) / 2;
  const waistBand = [shoulderY + 0.6 * (hipY - shoulderY), hipY + 0.5 * (hipY - shoulderY)];
  const nearWaist = (i: number): boolean => {
    const y = (i / width) | 0;
    return y >= waistBand[0]! && y <= waistBand[1]!;
  };
  const alpha = new Uint8Array(width * height);
  let x0 = width;
  let y0 = height;
  let x1 = 0;
  let y1 = 0;
  let count = 0;
  for (let i = 0; i < alpha.length; i++) {
    if (!regions.has(model.layout.labels[i]!)) continue;
    const j = i * channels;
    if (skin && isSkin(skin, data[j]!, data[j + 1]!, data[j + 2]!)) continue;
    if (separable && nearWaist(i) && distance(j, other!) < distance(j, own!)) continue;
    alpha[i] = model.matte.data[i]!;
    if (alpha[i]! < 128) continue;
    count++;
    const x = i % width;
    const y = (i / width) | 0;
    if (x < x0) x0 = x;
    if (y < y0) y0 = y;
    if (x >= x1) x1 = x + 1;
    if (y >= y1) y1 = y + 1;
  }
  return { mask: { data: alpha, width, height }, box: [x0, y0, x1, y1], pixels: count };
}

/** Landmarks of a worn garment from the model's pose and the garment's extent along the limbs. */
function wornLandmarks(model: PersonAnalysis, mask: Mask, category: WarpCategory): GarmentLandmarks {
  const p = (k: number): Point => ({ x: model.landmarks[k]!.x, y: model.landmarks[k]!.y });
  const on = (q: Point): boolean => {
    const x = Math.round(q.x);
    const y = Math.round(q.y);
    return x >= 0 && y >= 0 && x < mask.width && y < mask.height && mask.data[y * mask.width + x]! >= 128;
  };
  /** The last point along a polyline that is still on the garment. */
  const extent = (points: Point[]): Point => {
    let last = points[0]!;
    for (let i = 0; i + 1 < points.length; i++) {
      const a = points[i]!;
      const b = points[i + 1]!;
      const n = Math.ceil(Math.hypot(b.x - a.x, b.y - a.y));
      for (let k = 0; k <= n; k++) {
        const q = { x: a.x + ((b.x - a.x) * k) / n, y: a.y + ((b.y - a.y) * k) / n };
        if (on(q)) last = q;
      }
    }
    return last;
  };
  const ls = p(POSE.leftShoulder);
  const rs = p(POSE.rightShoulder);
  const lh = p(POSE.leftHip);
  const rh = p(POSE.rightHip);
  const unit = Math.hypot(ls.x - rs.x, ls.y - rs.y);
  const lowest = (x: number): number => {
    let y = -1;
    for (let yy = 0; yy < mask.height; yy++) if (on({ x, y: yy })) y = yy;
    return y;
  };
  if (category === 'bottom') {
    const waistY = Math.min(lh.y, rh.y) - 0.12 * unit;
    const leftHem = extent([lh, p(POSE.leftKnee), p(POSE.leftAnkle)]);
    const rightHem = extent([rh, p(POSE.rightKnee), p(POSE.rightAnkle)]);
    const legHalf = 0.12 * unit;
    return {
      waistbandLeft: { x: lh.x + 0.1 * unit, y: waistY },
      waistbandRight: { x: rh.x - 0.1 * unit, y: waistY },
      crotch: { x: (lh.x + rh.x) / 2, y: (lh.y + rh.y) / 2 + 0.25 * unit },
      leftLegHemOuter: { x: leftHem.x + legHalf, y: leftHem.y },
      leftLegHemInner: { x: leftHem.x - legHalf, y: leftHem.y },
      rightLegHemOuter: { x: rightHem.x - legHalf, y: rightHem.y },
      rightLegHemInner: { x: rightHem.x + legHalf, y: rightHem.y },
    };
  }
  const hemY = Math.max(lowest(Math.round((ls.x + lh.x) / 2)), lowest(Math.round((rs.x + rh.x) / 2)));
  const out: GarmentLandmarks = {
    leftShoulder: { x: ls.x + 0.04 * unit, y: ls.y - 0.06 * unit },
    rightShoulder: { x: rs.x - 0.04 * unit, y: rs.y - 0.06 * unit },
    neckLeft: { x: (ls.x + rs.x) / 2 + 0.15 * unit, y: (ls.y + rs.y) / 2 - 0.1 * unit },
    neckRight: { x: (ls.x + rs.x) / 2 - 0.15 * unit, y: (ls.y + rs.y) / 2 - 0.1 * unit },
    leftArmpit: { x: ls.x - 0.05 * unit, y: ls.y + 0.45 * unit },
    rightArmpit: { x: rs.x + 0.05 * unit, y: rs.y + 0.45 * unit },
    leftHem: { x: lh.x + 0.1 * unit, y: hemY },
    rightHem: { x: rh.x - 0.1 * unit, y: hemY },
  };
  const leftEnd = extent([ls, p(POSE.leftElbow), p(POSE.leftWrist)]);
  const rightEnd = extent([rs, p(POSE.rightElbow), p(POSE.rightWrist)]);
  if (Math.hypot(leftEnd.x - ls.x, leftEnd.y - ls.y) > 0.15 * unit && Math.hypot(rightEnd.x - rs.x, rightEnd.y - rs.y) > 0.15 * unit) {
    out.leftSleeveEnd = leftEnd;
    out.rightSleeveEnd = rightEnd;
    out.sleeveHalfWidth = 0.13 * unit;
  }
  return out;
}

/** Crops the photo and alpha to the box plus a margin, as RGBA, and moves the landmarks with it. */
function crop(
  image: RawImage,
  alpha: Mask,
  box: [number, number, number, number],
  landmarks: GarmentLandmarks,
  category: WarpCategory,
  categorySource: 'request' | 'silhouette',
  photo: 'flat' | 'worn',
): GarmentCutout {
  const x0 = Math.max(0, box[0] - MARGIN);
  const y0 = Math.max(0, box[1] - MARGIN);
  const x1 = Math.min(image.width, box[2] + MARGIN);
  const y1 = Math.min(image.height, box[3] + MARGIN);
  const w = x1 - x0;
  const h = y1 - y0;
  const data = new Uint8Array(w * h * 4);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = (y0 + y) * image.width + x0 + x;
      const j = i * image.channels;
      const o = (y * w + x) * 4;
      data[o] = image.data[j]!;
      data[o + 1] = image.data[j + 1]!;
      data[o + 2] = image.data[j + 2]!;
      data[o + 3] = alpha.data[i]!;
    }
  }
  cleanEdgeColours(data, w, h);
  const moved: GarmentLandmarks = {};
  for (const [key, value] of Object.entries(landmarks) as [keyof GarmentLandmarks, GarmentLandmarks[keyof GarmentLandmarks]][]) {
    if (typeof value === 'number' || typeof value === 'boolean') (moved as Record<string, unknown>)[key] = value;
    else if (value) (moved as Record<string, unknown>)[key] = { x: value.x - x0, y: value.y - y0 };
  }
  return { image: { data, width: w, height: h, channels: 4 }, category, categorySource, photo, origin: { x: x0, y: y0 }, landmarks: moved };
}

/**
 * A pixel on the garment's soft edge mixes the garment with what was behind it in the photo (a white wall, a
 * model's skin). Its alpha already says how much of it is garment, so its colour should be the garment's alone:
 * drawn as it is, the wall's white comes along twice and outlines the garment with a light line, as on a sticker.
 * Each soft pixel (RGBA `data`, straight alpha) takes the colour of the solid garment beside it (see EDGE_COLOUR).
 */
export function cleanEdgeColours(data: Uint8Array, width: number, height: number): void {
  const source = data.slice();
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const o = (y * width + x) * 4;
      const a = source[o + 3]!;
      if (a === 0 || a >= SOLID) continue;
      const sum = [0, 0, 0];
      let n = 0;
      let best = -1;
      let bestAlpha = a;
      for (let v = Math.max(0, y - EDGE_COLOUR); v <= Math.min(height - 1, y + EDGE_COLOUR); v++) {
        for (let u = Math.max(0, x - EDGE_COLOUR); u <= Math.min(width - 1, x + EDGE_COLOUR); u++) {
          const q = (v * width + u) * 4;
          const alpha = source[q + 3]!;
          if (alpha >= SOLID) {
            for (let c = 0; c < 3; c++) sum[c]! += source[q + c]!;
            n++;
          } else if (alpha > bestAlpha) {
            bestAlpha = alpha;
            best = q;
          }
        }
      }
      if (n > 0) for (let c = 0; c < 3; c++) data[o + c] = Math.round(sum[c]! / n);
      else if (best >= 0) for (let c = 0; c < 3; c++) data[o + c] = source[best + c]!;
    }
  }
}
