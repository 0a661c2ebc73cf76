/**
 * Where each garment landmark goes on the body: control-point pairs for the
 * thin-plate spline. Every landmark is first carried over by a similarity
 * (garment frame → body frame, scaled by shoulder or waist width), then the
 * points that decide fit are moved onto the body's own measurements: the
 * shoulders onto the shoulders, the sides onto the body's measured width
 * times the ease, sleeves and legs along the limbs, hems down by the length.
 */
import type { GarmentCutout, GarmentLandmarks, Point } from '../types.ts';
import { add, alongPolyline, dot, len, lengthTo, mid, polylineLength, sub, unit, type BodyFrame } from './body.ts';
import type { GarmentScale } from './sizing.ts';
import type { ClothedWidth } from './old-waist.ts';
import { BODY, sleeveAxis, sleeveLabels, type PieceLabels, type Skeleton, type SleeveShape } from './sleeve.ts';

export interface ControlPair {
  from: Point;
  to: Point;
}

/** A vertical band of the cut-out, in its pixels. */
export interface Band {
  from: number;
  to: number;
  /**
   * Above the garment's row `above`, the band reaches `reach` further on both sides: two splines (a trouser's legs),
   * which agree only at their shared pins, part along the cut.
   */
  seam?: { reach: number; above: number };
}

/** Whether a garment point (x, y) lies in a band. */
export function inBand(band: Band, x: number, y: number): boolean {
  const reach = band.seam && y < band.seam.above ? band.seam.reach : 0;
  return x >= band.from - reach && x < band.to + reach;
}

export interface Piece {
  pairs: ControlPair[];
  /** Only cut-out pixels whose label has a bit of `label` belong to the piece (sleeve.ts: the body, or one sleeve). */
  owns?: { labels: PieceLabels; label: number };
  /** Only garment pixels with `from` ≤ x < `to` belong to the piece (a vertical band of the cut-out). */
  split?: Band;
  /**
   * The piece is drawn only below the polyline through these photo points, left to right and carried on straight
   * past its ends (a sleeve below the shoulders' outline), except between the x of `except` (the neck, where a collar
   * rises above it).
   */
  below?: { line: Point[]; except?: [number, number] };
  /** A sleeve mapped along the arm's bones instead of through a spline (`pairs` then unused). */
  skeleton?: Skeleton;
}

export interface Placement {
  pieces: Piece[];
  /**
   * The garment's body (not its sleeves), as a polygon in cut-out pixels:
   * body pixels stay behind the arms, sleeve pixels cover them.
   */
  bodyPolygon: Point[] | null;
}

/** The waistband's depth below the shoulders, as a share of the shoulders-to-hip-joints length. */
const WAIST_DEPTH = 0.86;
/** A skirt's waistband, at the natural waist: about a third of the way up from the hip joints to the shoulders. */
const SKIRT_WAIST_DEPTH = 0.7;
/**
 * Trousers whose legs are at least this many waistband widths long, waistband to hem, are full length: they reach
 * the ankles on any body. On the wide set full-length jeans and trousers measure 2.63–3.90 and shorts 1.04–1.50; by
 * common measurements (rise and inseam over half the waist) capri trousers come to about 2.2. Scaled from the
 * waistband alone, jeans ended at mid-shin on a slim man with long legs (#33): a body's width at the waist says
 * little about its legs' length.
 */
const FULL_LENGTH = 2.4;
/** A garment is widened to the clothes worn under it by at most this factor of the layout's width. */
const CLOTHED_WIDTH = 1.25;

/**
 * A top's hem is drawn down to the customer's own top's by at most this factor of its depth below the shoulders (of
 * the longer of its depths by the chest's scale and by the shoulders').
 */
const LENGTHEN = 1.15;
/**
 * A sleeve is drawn down to the end of the customer's own by at most this factor of its length, and past it by
 * SLEEVE_SPARE shoulder widths (the old cuff's edge).
 */
const SLEEVE_LENGTHEN = 1.4;
const SLEEVE_SPARE = 0.02;
/**
 * Trouser legs cut apart at the crotch overlap above it by this share of the waistband's width: each leg's spline
 * agrees with the other's only at the pins they share, and between those the two may part by a pixel, which showed
 * as a thin line down the fly.
 */
const SEAM = 0.02;

/**
 * A neckline seen with the inside back behind it is put `drop` shoulder widths below the shoulders' tops on the centre
 * line, the base of the neck, unless it lies deeper than `deepest` garment units below the neck's ends in the photo:
 * a crew neck drops 8–10 cm below a shoulder line of about 40, a V or a scoop 15–20 (on the wide set: crew necks,
 * collars and shallow Vs 0.04–0.32, the tulle dress's V 0.41).
 */
const NECK_SEAM = { deepest: 0.35, drop: 0.05 } as const;

/** Half the neck's width, in shoulder widths: a collar may rise above the shoulders' outline there. */
const NECK_HALF = 0.3;
/**
 * The shoulders' outline is looked for at these shares of the way from each shoulder's top to the neck, up from
 * SHOULDER_REACH shoulder widths below the straight line between the shoulders' tops.
 */
const SHOULDER_SAMPLES = [1 / 3, 2 / 3, 1] as const;
const SHOULDER_REACH = 0.1;

/** How much of a flat sleeve's width shows on an arm. */
const SLEEVE_GIRTH = 0.75;
/** A strap's top lies this far (in shoulder widths) in from the shoulder joint, about halfway out from the neck. */
const STRAP_INSET = 0.15;

/** +1 when `across` points away from the body's centre line at `p`, else −1. */
function outward(across: Point, p: Point, shoulder: Point, frame: Frame): 1 | -1 {
  const fromCentre = dot(sub(shoulder, frame.origin), frame.side);
  return dot(across, frame.side) * fromCentre >= 0 ? 1 : -1;
}

/**
 * +1 when `across` points away from `centre` at `p` (a sleeve's outer edge, away from the chest, whether it hangs
 * down or is held out), else −1.
 */
const awayFrom = (across: Point, p: Point, centre: Point): 1 | -1 => (dot(across, sub(p, centre)) >= 0 ? 1 : -1);

/** The chest's scale for lengths is trusted within these shares of the shoulders' (0.74–1.24 on the wide set). */
const CHEST_LENGTH = { least: 0.7, most: 1.3 } as const;

/** The ease a garment has around the body at a regular fit, true to size. */
const EASE = { top: 1.06, outerwear: 1.14, dress: 1.06, bottom: 1.04 } as const;

interface Frame {
  origin: Point;
  side: Point;
  down: Point;
  unit: number;
}

/** A similarity from one frame to another. */
function carry(from: Frame, to: Frame): (p: Point) => Point {
  return (p) => {
    const d = sub(p, from.origin);
    const s = dot(d, from.side) / from.unit;
    const v = dot(d, from.down) / from.unit;
    return add(add(to.origin, to.side, s * to.unit), to.down, v * to.unit);
  };
}

/** A frame from a left and right point: origin between them, side towards the left one, down perpendicular (y growing). */
function frameFrom(left: Point, right: Point): Frame {
  const side = unit(sub(left, right));
  let down = { x: -side.y, y: side.x };
  if (down.y < 0) down = { x: -down.x, y: -down.y };
  return { origin: mid(left, right), side, down, unit: len(sub(left, right)) || 1 };
}

/** Offset of a garment point along its frame's down axis, in garment units. */
const depthOf = (f: Frame, p: Point): number => dot(sub(p, f.origin), f.down) / f.unit;
const sideOf = (f: Frame, p: Point): number => dot(sub(p, f.origin), f.side) / f.unit;

export interface PlaceOptions {
  scale: GarmentScale;
  styling: readonly string[];
  /** A top tucked into bottoms ends at the waistband. */
  tucked: boolean;
  /** Only the essential points (shoulders, sides, hem, sleeve ends): for garments whose finer points fold the spline. */
  essential?: boolean;
  /**
   * Depth below the shoulders (px) that a top's hem should reach: where the customer's own top ends (old-hem.ts).
   * A hem that falls short of it by no more than LENGTHEN is drawn down to it.
   */
  coverTo?: number | null;
  /**
   * Depth below the shoulders (px) at which the customer's own bottoms begin (old-hem.ts). New bottoms whose
   * waistband would sit lower are drawn up to it, so the old waistband does not show above theirs.
   */
  coverFrom?: number | null;
  /** How wide the customer's clothes are at a depth (old-waist.ts): new garments are widened towards it. */
  clothed?: ClothedWidth | null;
  /**
   * Where the customer's own sleeves end on their arms, the wearer's left arm's first (limbs.ts). A new sleeve a
   * little shorter is drawn down to it, so the old sleeve does not show below it as a painted arm.
   */
  sleeveEnds?: readonly (Point | null)[] | null;
  /**
   * Depth below the shoulders (px) of the customer's ankles, when both are seen: a dress's hem goes no lower (a
   * maxi dress longer than its wearer was drawn past the feet, over the shoes).
   */
  floor?: number | null;
  /** Forearms folded across the body: sleeves end at the elbows, and the forearms lie in front of the garment. */
  folded?: boolean;
}

export function placeGarment(cutout: GarmentCutout, body: BodyFrame, options: PlaceOptions): Placement {
  const g = cutout.landmarks;
  if (cutout.category === 'bottom') return placeBottom(g, body, options);
  return placeUpper(cutout, body, options);
}

function placeUpper(cutout: GarmentCutout, body: BodyFrame, options: PlaceOptions): Placement {
  const g = cutout.landmarks;
  const { scale } = options;
  if (!g.leftShoulder || !g.rightShoulder) throw new Error('the garment has no shoulders to hang from');
  const gf = frameFrom(g.leftShoulder, g.rightShoulder);
  const bf: Frame = { origin: body.origin, side: body.side, down: body.down, unit: body.unit };
  const sim = carry(gf, bf);
  const ease = EASE[cutout.category === 'bottom' ? 'top' : cutout.category] * scale.width;
  const U = body.unit;
  const up = { x: -body.down.x, y: -body.down.y };
  const pairs: ControlPair[] = [];
  const put = (from: Point | undefined, to: Point): void => {
    if (from) pairs.push({ from, to });
  };

  // Shoulders: on top of the shoulder joints, a little wider for bigger sizes; dropped for oversized. Straps lie on
  // the shoulders STRAP_INSET in from the joints: at the joints they slid off onto the arms.
  const shoulderSpread = 1 + (scale.width - 1) * 0.6;
  const shoulderTarget = (joint: Point, sign: 1 | -1): Point => {
    // On the shoulder's outline (hair over it is ignored by the layout), a little inside it so the seam is on the body.
    const outline = sign > 0 ? body.shoulderTop.left : body.shoulderTop.right;
    let p = add({ x: joint.x, y: joint.y }, up, Math.max(0.06 * U, dot(sub(joint, outline), body.down) - 0.02 * U));
    const out = g.straps ? -STRAP_INSET * U : 0.04 * U + (shoulderSpread - 1) * 0.5 * U;
    p = add(p, body.side, sign * out);
    if (scale.droppedShoulder) p = add(add(p, body.side, sign * 0.07 * U), body.down, 0.06 * U);
    return p;
  };
  const leftShoulder = shoulderTarget(body.shoulder.left, 1);
  const rightShoulder = shoulderTarget(body.shoulder.right, -1);
  put(g.leftShoulder, leftShoulder);
  put(g.rightShoulder, rightShoulder);

  // Neckline: carried over from the shoulder line, which now sits on the shoulders' outline.
  const lift = dot(sub(mid(body.shoulder.left, body.shoulder.right), mid(leftShoulder, rightShoulder)), body.down);
  if (!options.essential) for (const p of [g.neckLeft, g.neckRight, g.neckFront]) if (p) put(p, add(sim(p), up, lift));
  // A neckline seen with the inside back behind it (a ghost-mannequin photo, shot from a little above) lies deeper
  // below the shoulders in the photo than as worn: carried over with the shoulders, the inside back and its label
  // filled the opening down to it (#25). Unless it plunges (a deep V), it goes at the base of the neck.
  const seam = g.neckSeam;
  const neckEnds = g.neckLeft && g.neckRight ? mid(g.neckLeft, g.neckRight) : null;
  if (!options.essential && seam && neckEnds && depthOf(gf, seam) - depthOf(gf, neckEnds) <= NECK_SEAM.deepest) {
    const base = add(mid(body.shoulderTop.left, body.shoulderTop.right), body.down, NECK_SEAM.drop * U);
    put(seam, add(base, body.side, sideOf(gf, seam) * U));
  }

  // Sides: armpit, waist and hem at the body's measured width times the ease; lengths scaled.
  const lengthFactor = options.tucked ? 1 : scale.length;
  /** Pixels on the body per garment unit down the garment: first the shoulders' scale, then the chest's (below). */
  let lengthUnit = U;
  const sidePoint = (p: Point | undefined, sign: 1 | -1, minHalf = 0, maxHalf = Infinity, stretch = 1): Point | null => {
    if (!p) return null;
    let depth = depthOf(gf, p) * lengthUnit * lengthFactor * stretch;
    if (options.tucked) depth = Math.min(depth, body.torsoLength * WAIST_DEPTH);
    const measured = clothedHalfWidth(body, depth, options.clothed ?? null);
    const half = Math.max(Math.min((sign > 0 ? measured.left : measured.right) * ease, maxHalf), minHalf);
    return add(add(body.origin, body.down, depth), body.side, sign * half);
  };
  const chestHalfG = g.leftArmpit && g.rightArmpit ? Math.abs(sideOf(gf, g.leftArmpit) - sideOf(gf, g.rightArmpit)) / 2 : 0.5;
  // Lengths keep the garment's own proportions: drawn as wide across the chest as the body's chest times the ease, it
  // is drawn as long as its photo is for that width. Scaled from the shoulders, a garment came out longer by the ratio
  // of the customer's shoulders to their chest (1.13–1.27 on the fixtures' tees: thigh-length tunics). A chest
  // measured far off the shoulders' scale (a layout that missed the torso) is not trusted that far. Not a dress's: its
  // armpits are found less surely (a skirt wider than the bodice is taken for its body, and a tee dress's armpits
  // were put at its sleeves' ends), and a chest that wide drew it to the crotch with its bodice above the shoulders.
  // A top hanging loose from its straps (a jersey) is not fitted to the chest: it is at least as wide under the arms as
  // its own shoulders put it. Fitted to the chest, a jersey was drawn narrow, and as short as its width made it.
  const looseHalf = g.hangsLoose ? chestHalfG * U * scale.width : 0;
  const [pitL, pitR] = [sidePoint(g.leftArmpit, 1, looseHalf), sidePoint(g.rightArmpit, -1, looseHalf)];
  if (pitL && pitR && cutout.category !== 'dress')
    lengthUnit = U * Math.min(CHEST_LENGTH.most, Math.max(CHEST_LENGTH.least, len(sub(pitL, pitR)) / 2 / chestHalfG / U));
  const armpitL = sidePoint(g.leftArmpit, 1, looseHalf);
  const armpitR = sidePoint(g.rightArmpit, -1, looseHalf);
  if (armpitL) put(g.leftArmpit, armpitL);
  if (armpitR) put(g.rightArmpit, armpitR);
  // The garment's own flare below the armpits, relative to its chest width, is kept.
  const chestHalfB = armpitL && armpitR ? len(sub(armpitL, armpitR)) / 2 : 0.5 * U * ease;
  const flare = (p: Point | undefined): number => (p ? (Math.abs(sideOf(gf, p)) / chestHalfG) * chestHalfB : 0);
  for (const [p, sign] of [
    [g.leftWaist, 1],
    [g.rightWaist, -1],
  ] as const) {
    const t = sidePoint(p, sign);
    if (t) put(p, t);
  }
  // A top's hem a little above where the customer's own top ends is drawn down to it (a garment's length from a flat
  // photo is only so exact: anywhere between the chest's scale and the shoulders', and a little past), so the old hem
  // does not show as a band below it. Not a jacket's: one shorter than the top under it is worn that way.
  const hemDepth = g.leftHem && g.rightHem ? depthOf(gf, mid(g.leftHem, g.rightHem)) * lengthUnit * lengthFactor : 0;
  const cover = options.coverTo ?? 0;
  const longest = hemDepth * Math.max(1, U / lengthUnit) * LENGTHEN;
  const floor = options.floor ?? Infinity;
  const stretch =
    cutout.category === 'top' && !options.tucked && hemDepth > 0 && cover > hemDepth && cover <= longest
      ? cover / hemDepth
      : cutout.category === 'dress' && hemDepth > floor
        ? floor / hemDepth
        : 1;
  for (const [p, sign] of [
    [g.leftHem, 1],
    [g.rightHem, -1],
  ] as const) {
    // Below the chest a top keeps its own shape: not narrower than 0.9 of it, and not flaring more than 1.15 of it
    // (the body's measured width down there may include a hand or a hip bone the fabric hangs past).
    const t = sidePoint(p, sign, flare(p) * 0.9, Math.max(flare(p), chestHalfB) * 1.15, stretch);
    if (t) put(p, t);
  }
  // The hem's centre keeps the hem straight.
  if (g.leftHem && g.rightHem) {
    const hemMid = mid(g.leftHem, g.rightHem);
    let depth = depthOf(gf, hemMid) * lengthUnit * lengthFactor * stretch;
    if (options.tucked) depth = Math.min(depth, body.torsoLength * WAIST_DEPTH);
    put(hemMid, add(add(body.origin, body.down, depth), body.side, sideOf(gf, hemMid) * U));
  }

  // Sleeves: along the arms, as long (relative to the shoulders) as on the garment.
  const rolled = options.styling.includes('sleeves-rolled');
  const bodyPairs = pairs.length;
  const tubes: (SleeveShape & { outward: 1 | -1; skeleton: Skeleton })[] = [];
  /**
   * A sleeve's length along `arm`, or along `drawn` where it is drawn along another line from another start: drawn down
   * to the old sleeve's end `old` when a little short of it.
   */
  const onArm = (lengthG: number, arm: readonly Point[], old: Point | null, drawn = arm): number => {
    let length = (lengthG / gf.unit) * U * scale.sleeve;
    if (scale.droppedShoulder) length -= 0.08 * U;
    if (rolled) length = Math.min(length, len(sub(arm[1]!, arm[0]!)) + 0.25 * len(sub(arm[2]!, arm[1]!)));
    else if (old) {
      const cover = lengthTo(drawn, old) + SLEEVE_SPARE * U;
      if (cover > length && cover <= length * SLEEVE_LENGTHEN) length = cover;
    }
    return Math.min(length, options.folded ? len(sub(arm[1]!, arm[0]!)) : polylineLength(arm) * 1.04);
  };
  for (const [end, shoulderG, arm, shoulderB, pitG, top, old] of [
    [g.leftSleeveEnd, g.leftShoulder, body.arm.left, leftShoulder, g.leftArmpit, body.shoulderTop.left, options.sleeveEnds?.[0]],
    [g.rightSleeveEnd, g.rightShoulder, body.arm.right, rightShoulder, g.rightArmpit, body.shoulderTop.right, options.sleeveEnds?.[1]],
  ] as const) {
    if (!end) continue;
    const path = [shoulderB, ...arm.slice(1)];
    const length = onArm(len(sub(end, shoulderG)), arm, old ?? null, path);
    const at = alongPolyline(path, length);
    // A flat sleeve is wider than the arm it goes round (half its girth shows): about 0.75 of its flat width, more with ease.
    const halfG = g.sleeveHalfWidth ?? 0.12 * gf.unit;
    const half = (halfG / gf.unit) * U * SLEEVE_GIRTH * Math.max(ease, 1);
    const across = { x: -at.direction.y, y: at.direction.x };
    const dirG = unit(sub(end, shoulderG));
    const acrossG = { x: -dirG.y, y: dirG.x };
    if (pitG && beyondArmhole(end, shoulderG, pitG, gf.origin)) {
      // The sleeve on the arm's bones from the shoulder joint, as long as along its axis on the garment.
      const shape = { shoulder: shoulderG, armpit: pitG, end, half: halfG };
      const outwardG = awayFrom(acrossG, end, add(gf.origin, gf.down, 0.5 * gf.unit));
      const axis = sleeveAxis(shape, outwardG);
      const bone = unit(sub(arm[1]!, arm[0]!));
      const bones = fromShoulderTop(arm, top);
      tubes.push({
        ...shape,
        outward: outwardG,
        skeleton: {
          root: axis.root,
          end,
          bones,
          length: onArm(axis.length, bones, old ?? null),
          girth: half / halfG,
          half: halfG,
          outwardG,
          outwardB: awayFrom({ x: -bone.y, y: bone.x }, arm[0]!, add(bf.origin, bf.down, 0.5 * U)),
        },
      });
    }
    put(end, at.point);
    if (options.essential) continue;
    // Only the outer edge of the opening: the inner edge lies against the body's side, where the armpit already pins it.
    put(
      add(end, acrossG, halfG * outward(acrossG, end, shoulderG, gf)),
      add(at.point, across, half * outward(across, at.point, shoulderB, bf)),
    );
    // Halfway along, so the sleeve bends with the elbow.
    const halfway = alongPolyline(path, length / 2);
    put(mid(end, shoulderG), halfway.point);
  }

  const bodyPolygon = [g.leftShoulder, g.leftArmpit, g.leftHem, g.rightHem, g.rightArmpit, g.rightShoulder].filter(
    (p): p is Point => p !== undefined,
  );
  const open = cutout.category === 'outerwear' && options.styling.includes('open');
  const polygon = bodyPolygon.length >= 4 ? bodyPolygon : null;
  if (tubes.length < 2) return { pieces: open ? openFront(pairs, gf, body) : [{ pairs }], bodyPolygon: polygon };
  // Each sleeve is cut from the body along its armhole and drawn along its arm (sleeve.ts); the body keeps its
  // spline (an open jacket's, one for each half). A sleeve turned down the arm must not rise above the shoulders'
  // outline (its cap would stand up like a pad), nor the body's own top corners: only the collar may.
  const labels = sleeveLabels(cutout, tubes, Math.max(g.leftHem?.y ?? Infinity, g.rightHem?.y ?? Infinity));
  const neckX = (body.shoulderTop.right.x + body.shoulderTop.left.x) / 2;
  const collar: [number, number] = [neckX - NECK_HALF * U, neckX + NECK_HALF * U];
  const shoulderLine = shoulderOutline(body, collar);
  const bodyPieces = open ? openFront(pairs.slice(0, bodyPairs), gf, body) : [{ pairs: pairs.slice(0, bodyPairs) }];
  return {
    pieces: [
      ...bodyPieces.map((piece) => ({ ...piece, owns: { labels, label: BODY }, below: { line: shoulderLine, except: collar } })),
      ...tubes.map((t, k) => ({ pairs: [], owns: { labels, label: 2 << k }, below: { line: shoulderLine }, skeleton: t.skeleton })),
    ],
    bodyPolygon: polygon,
  };
}

/**
 * The shoulders' outline, left to right: from each shoulder's top towards the neck, raised to the body's own outline
 * where that is higher (a shoulder rises towards the neck; cut along a straight line between the shoulders' tops, a
 * garment's shoulders were flat below it and the customer's own stood above them, boxy, #19, #72).
 */
function shoulderOutline(body: BodyFrame, collar: [number, number]): Point[] {
  const [a, b] = [body.shoulderTop.right, body.shoulderTop.left];
  const straight = (x: number): number => a.y + ((b.y - a.y) * (x - a.x)) / (b.x - a.x || 1);
  const points: Point[] = [a];
  for (const [top, neck] of [
    [a, collar[0]],
    [b, collar[1]],
  ] as const) {
    for (const t of SHOULDER_SAMPLES) {
      const x = top.x + (neck - top.x) * t;
      const start = add({ x, y: straight(x) }, body.down, SHOULDER_REACH * body.unit);
      const outline = body.outlineAbove(start);
      points.push({ x, y: outline ? Math.min(straight(x), outline.y) : straight(x) });
    }
  }
  points.push(b);
  // Past the shoulders' tops the line goes on level with them: carried on along its last stretch, which rises to the
  // neck, it fell away outwards and cut the top off sleeves held out from the body (hands on hips, #91, #94).
  const far = 4 * body.unit;
  points.push({ x: a.x - far, y: straight(a.x - far) }, { x: b.x + far, y: straight(b.x + far) });
  return points.sort((p, q) => p.x - q.x);
}

/**
 * An arm's bones with the upper arm's line reaching back to where the shoulder's top projects onto it: a sleeve's
 * seam is on top of the shoulder, not at the joint inside it (the joint itself when the arm is held out level).
 * Rooted at the joint, a sleeve began a tenth of a shoulder width low, and the body's corners stood above it.
 */
export function fromShoulderTop(arm: readonly Point[], top: Point): Point[] {
  const bone = unit(sub(arm[1]!, arm[0]!));
  const back = Math.max(0, -dot(sub(top, arm[0]!), bone));
  return [add(arm[0]!, bone, -back), ...arm.slice(1)];
}

/**
 * Whether a sleeve's end lies beyond its armhole (the line from the shoulder to the armpit), on the far side from the
 * garment's centre. A short sleeve hanging from a dropped shoulder may end on the body's side of that line: cut from
 * the body along it, that whole half of the body went with the sleeve and was drawn along the arm (#37, #90).
 */
function beyondArmhole(end: Point, shoulder: Point, armpit: Point, centre: Point): boolean {
  const line = sub(armpit, shoulder);
  const cross = (p: Point): number => line.x * (p.y - shoulder.y) - line.y * (p.x - shoulder.x);
  return cross(end) * cross(centre) < 0;
}

/** Whether a cut-out point belongs to a piece. */
export function ownedBy(piece: Piece, x: number, y: number): boolean {
  if (piece.split && !inBand(piece.split, x, y)) return false;
  if (!piece.owns) return true;
  const { labels, label } = piece.owns;
  const ix = Math.min(labels.width - 1, Math.max(0, Math.floor(x)));
  const iy = Math.min(labels.height - 1, Math.max(0, Math.floor(y)));
  return (labels.labels[iy * labels.width + ix]! & label) !== 0;
}

/** An open jacket: each half hangs from its own shoulder and parts from the centre line, more towards the hem. */
function openFront(pairs: ControlPair[], gf: Frame, body: BodyFrame): Piece[] {
  const centreX = gf.origin.x;
  const halves: Piece[] = [];
  for (const keep of ['right-of', 'left-of'] as const) {
    // Image right of the centre line is the wearer's left.
    const sign = keep === 'right-of' ? 1 : -1;
    const own = pairs.filter((p) => (p.from.x - centreX) * sign > -1e-6);
    const parted = own.map((p) => {
      const depth = Math.max(0, dot(sub(p.to, body.origin), body.down)) / body.torsoLength;
      const nearCentre = Math.abs(p.from.x - centreX) < 0.2 * gf.unit;
      return nearCentre ? { from: p.from, to: add(p.to, body.side, sign * 0.12 * body.unit * Math.min(depth, 1.2)) } : p;
    });
    halves.push({ pairs: parted, split: keep === 'right-of' ? { from: centreX, to: Infinity } : { from: -Infinity, to: centreX } });
  }
  return halves;
}

/**
 * The body's half-widths at a depth: the layout's, widened to the clothes worn there where they reach further (arms
 * hanging close to the body take pixels of it in the layout), at most CLOTHED_WIDTH times.
 */
function clothedHalfWidth(body: BodyFrame, depth: number, clothed: ClothedWidth | null): { left: number; right: number } {
  const measured = body.halfWidth(depth);
  if (!clothed) return measured;
  const worn = clothed(depth);
  const widen = (own: number, clothes: number): number => Math.max(own, Math.min(clothes, own * CLOTHED_WIDTH));
  return { left: widen(measured.left, worn.left), right: widen(measured.right, worn.right) };
}

function placeBottom(g: GarmentLandmarks, body: BodyFrame, options: PlaceOptions): Placement {
  if (!g.waistbandLeft || !g.waistbandRight) throw new Error('the garment has no waistband to place');
  const { scale } = options;
  const ease = EASE.bottom * scale.width;
  const gf = frameFrom(g.waistbandLeft, g.waistbandRight);
  // The waistband sits a little above the hip joints; a skirt's at the natural waist. Where the customer's own
  // bottoms begin higher, the waistband is drawn up to them (raised), while the rest stays where it was: its width and
  // scale are measured at its own depth, and the legs and crotch lengthened by as much.
  const ownDepth = body.torsoLength * (g.crotch ? WAIST_DEPTH : SKIRT_WAIST_DEPTH);
  const waistDepth = Math.min(ownDepth, options.coverFrom ?? Infinity);
  const raised = ownDepth - waistDepth;
  const measured = clothedHalfWidth(body, ownDepth, options.clothed ?? null);
  const waistCentre = add(body.origin, body.down, waistDepth);
  const waistL = add(waistCentre, body.side, measured.left * ease);
  const waistR = add(waistCentre, body.side, -measured.right * ease);
  const bf: Frame = { origin: waistCentre, side: body.side, down: body.down, unit: len(sub(waistL, waistR)) };
  const sim = carry(gf, bf);
  const pairs: ControlPair[] = [
    { from: g.waistbandLeft, to: waistL },
    { from: g.waistbandRight, to: waistR },
  ];
  // How much the legs had to be shortened to fit the body's legs; the crotch follows the same proportion.
  let compression = 1;
  for (const [outer, inner, leg, sign] of [
    [g.leftLegHemOuter, g.leftLegHemInner, body.leg.left, 1],
    [g.rightLegHemOuter, g.rightLegHemInner, body.leg.right, -1],
  ] as const) {
    if (!outer || !inner) continue;
    const hemG = mid(outer, inner);
    const topG = g.crotch ? { x: (hemG.x + (sign > 0 ? g.waistbandLeft.x : g.waistbandRight.x)) / 2, y: gf.origin.y } : gf.origin;
    // Leg length from the waistband to the hem, relative to the waistband's width.
    const lengthG = depthOf(gf, hemG) - depthOf(gf, topG);
    // The leg's path starts at the waistband's height, straight above the hip joint.
    const start = leg[0]!;
    const path = [add(start, body.down, -Math.max(dot(sub(start, waistCentre), body.down), 0)), ...leg];
    const natural = lengthG * bf.unit * scale.length + raised;
    const longest = polylineLength(path) * 1.04;
    const length = g.crotch && lengthG >= FULL_LENGTH ? longest : Math.min(natural, longest);
    compression = Math.min(compression, length / Math.max(natural, 1));
    const at = alongPolyline(path, length);
    const across = { x: -at.direction.y, y: at.direction.x };
    const acrossSign = dot(across, body.side) * sign > 0 ? 1 : -1;
    const halfG = len(sub(outer, inner)) / 2;
    const half = (halfG / gf.unit) * bf.unit * Math.max(scale.width, 0.9);
    // A wide leg cannot reach past the body's centre line into the other leg: what it loses inside it keeps outside.
    const toMiddle = Math.abs(dot(sub(at.point, waistCentre), body.side));
    const inward = Math.min(half, 0.95 * toMiddle);
    const outerTo = add(at.point, across, acrossSign * (2 * half - inward));
    const innerTo = add(at.point, across, -acrossSign * inward);
    pairs.push({ from: outer, to: outerTo });
    pairs.push({ from: inner, to: innerTo });
    // A point part-way down the leg, at the same share of the leg's length on the body, so the leg bends with the body's.
    // A skirt hangs from the waist in its own shape: its point goes halfway between the waistband's side and the hem's
    // middle (pinned to legs standing together, an A-line maxi skirt narrowed at the knees like a mermaid's, #111).
    const kneeG = mid(hemG, mid(g.crotch ?? gf.origin, sign > 0 ? g.waistbandLeft : g.waistbandRight));
    const share = Math.min(0.9, Math.max(0.1, (depthOf(gf, kneeG) - depthOf(gf, topG)) / Math.max(lengthG, 1e-6)));
    const kneeTo = g.crotch
      ? alongPolyline(path, share * length).point
      : mid(mid(outerTo, innerTo), mid(waistCentre, sign > 0 ? waistL : waistR));
    pairs.push({ from: kneeG, to: kneeTo });
  }
  if (!g.crotch) return { pieces: [{ pairs }], bodyPolygon: null };
  const depth = (depthOf(gf, g.crotch) * bf.unit * scale.length + raised) * compression;
  const crotch: ControlPair = { from: g.crotch, to: add(add(waistCentre, body.down, depth), body.side, sideOf(gf, g.crotch) * bf.unit) };
  const fly: ControlPair = { from: mid(g.waistbandLeft, g.waistbandRight), to: mid(waistL, waistR) };
  // Each leg on its own spline, cut at the crotch's x (the wearer's left leg is on the image's right): one spline
  // over both would pull a leg across when the body's legs stand apart or the garment's legs touch. Both share the
  // waistband's centre and the crotch, so they meet along the fly.
  const [wl, wr, ...legPairs] = pairs;
  const own = (start: number): ControlPair[] => legPairs.slice(start, start + 3);
  const leftFirst = g.leftLegHemOuter && g.leftLegHemInner;
  const rightStart = leftFirst ? 3 : 0;
  // Only real legs are cut apart: each leg's hem wholly on its own side of the crotch (an asymmetric skirt can
  // give a "crotch" whose legs are not).
  const legs =
    leftFirst &&
    g.rightLegHemOuter &&
    g.rightLegHemInner &&
    Math.min(g.leftLegHemOuter!.x, g.leftLegHemInner!.x) > g.crotch.x &&
    Math.max(g.rightLegHemOuter.x, g.rightLegHemInner.x) < g.crotch.x;
  if (!legs) return { pieces: [{ pairs: [...pairs, crotch] }], bodyPolygon: null };
  const seam = { reach: SEAM * len(sub(g.waistbandLeft, g.waistbandRight)), above: g.crotch.y };
  return {
    pieces: [
      { pairs: [wl!, wr!, fly, crotch, ...own(0)], split: { from: g.crotch.x, to: Infinity, seam } },
      { pairs: [wl!, wr!, fly, crotch, ...own(rightStart)], split: { from: -Infinity, to: g.crotch.x, seam } },
    ],
    bodyPolygon: null,
  };
}
