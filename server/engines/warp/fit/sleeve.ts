/**
 * A sleeve drawn along the arm. A spline through a few pins folds a sleeve over itself where the arm bends (a hand
 * on the hip) and lets it flare where the pins run out; a sleeve is a tube, so it is mapped as one. Each photo
 * point near the arm is found by its distance along the arm's bones (from the shoulder's top, projected onto the
 * upper arm, to the elbow and the wrist) and across them; those become a distance along the sleeve's axis in the
 * cut-out (from its middle at the shoulder seam to its end) and across it, the width scaled by the sleeve's girth.
 * Round the outside of a bent elbow the sleeve is a fan about the joint. The sleeve's cap beyond its armhole line is
 * the sleeve's; above the axis's root, inside that line, the garment's body holds the shoulder seam on its spline.
 */
import type { GarmentCutout, Point } from '../types.ts';
import { add, alongPolyline, dot, len, mid, sub, unit } from './body.ts';

/** Which piece each cut-out pixel belongs to: a label per pixel, row by row. */
export interface PieceLabels {
  width: number;
  height: number;
  labels: Uint8Array;
}

/** A sleeve in the cut-out, between its armhole (shoulder seam to armpit) and its end. */
export interface SleeveShape {
  shoulder: Point;
  armpit: Point;
  end: Point;
  /** Half its width at the end. */
  half: number;
}

export interface Skeleton {
  /** The sleeve's axis in the cut-out (sleeveAxis): its middle at the shoulder seam, and its end. */
  root: Point;
  end: Point;
  /** The arm's bones in the photo, from the shoulder joint; the sleeve covers `length` pixels of them. */
  bones: Point[];
  length: number;
  /** Photo pixels across the arm per cut-out pixel across the sleeve. */
  girth: number;
  /** Half the sleeve's width at its end, in cut-out pixels. */
  half: number;
  /** +1 when the bones' left-hand normal points away from the body, as the cut-out's does from the garment. */
  outwardB: 1 | -1;
  outwardG: 1 | -1;
}

/**
 * Round a bent elbow the sleeve reaches this many of its half-widths (at its end) from the joint: a sleeve is often
 * wider at the elbow than at its cuff, and 1.25 left a notch of backdrop there (#72), 1.6 a step where the fan met the
 * wider sleeve (#13, #28, #34, #64). Past the sleeve's own edge the fan maps outside its cloth, which draws nothing.
 */
const FAN = 2.5;
/** A cut-out point no garment is at. */
export const NOWHERE: Point = { x: -1e6, y: -1e6 };

const normal = (d: Point, sign: 1 | -1): Point => ({ x: -d.y * sign, y: d.x * sign });

/** A map between the cut-out and the photo, as a thin-plate spline is one. */
export interface PointMap {
  map(x: number, y: number): Point;
}

/** The sleeve's axis in the cut-out as a frame: its length, and unit vectors along it and outwards across it. */
function axisFrame(s: Skeleton): { axisLength: number; along: Point; across: Point } {
  const axis = sub(s.end, s.root);
  const along = unit(axis);
  return { axisLength: len(axis) || 1, along, across: normal(along, s.outwardG) };
}

/** The photo point a cut-out point goes to (used to find where the garment lands). */
export function skeletonForward(s: Skeleton): PointMap {
  const { axisLength, along, across } = axisFrame(s);
  return {
    map(x, y) {
      const d = sub({ x, y }, s.root);
      const u = dot(d, along) / axisLength;
      const v = dot(d, across);
      const { point, direction } = alongPolyline(s.bones, u * s.length);
      return add(point, normal(direction, s.outwardB), v * s.girth);
    },
  };
}

/** The cut-out point a photo point shows (the sleeve's inverse map). */
export function skeletonInverse(s: Skeleton): PointMap {
  const { axisLength, along, across } = axisFrame(s);
  const segments = s.bones.slice(1).map((b, i) => {
    const a = s.bones[i]!;
    const l = len(sub(b, a)) || 1;
    return { a, direction: unit(sub(b, a)), length: l };
  });
  const offsets: number[] = [];
  let total = 0;
  for (const seg of segments) {
    offsets.push(total);
    total += seg.length;
  }
  // Round the outside of a bent elbow the sleeve is a fan about the joint, FAN half-widths of its end wide.
  const fan = FAN * s.half * s.girth;
  const plain = (x: number, y: number): Point => {
    let best = Infinity;
    let at = 0;
    let side = 0;
    let past = false;
    segments.forEach((seg, i) => {
      const d = sub({ x, y }, seg.a);
      const free = dot(d, seg.direction);
      let t = free;
      if (i > 0) t = Math.max(t, 0);
      if (i < segments.length - 1) t = Math.min(t, seg.length);
      const off = { x: d.x - seg.direction.x * t, y: d.y - seg.direction.y * t };
      const distance = len(off);
      if (distance < best) {
        best = distance;
        at = offsets[i]! + t;
        past = t !== free;
        // Past a bone's end (round the outside of a bent elbow) the distance is to the joint itself, on the bend's
        // outer side: told from this bone's normal alone, points beyond a sharp bend (a hand on the hip) flipped to
        // the inner side and back, and the fan's edge came out sawtoothed (#98).
        const joint = !past ? -1 : t === 0 ? i - 1 : i;
        const outer = joint < 0 ? null : sub(segments[joint]!.direction, segments[joint + 1]!.direction);
        const towards = outer && len(outer) > 1e-6 ? outer : d;
        side = Math.sign(dot(towards, normal(seg.direction, s.outwardB))) * distance;
      }
    });
    if (past && best > fan) return NOWHERE;
    const u = at / (s.length || 1);
    return add(add(s.root, along, u * axisLength), across, side / s.girth);
  };
  return { map: plain };
}

/**
 * The sleeve's axis in the cut-out: from its end back towards the shoulder seam, the sleeve's middle at the seam
 * half its end's width inside it (away from the outer edge). A sleeve lying against the body in the photo (a jumper
 * laid flat with its sleeves down) shows only its outer part outside the body's outline; its axis still runs down
 * its middle.
 */
export function sleeveAxis(t: SleeveShape, outward: 1 | -1): { root: Point; along: Point; across: Point; length: number } {
  const rough = unit(sub(t.end, t.shoulder));
  const across = normal(rough, outward);
  const root = add(t.shoulder, across, -t.half);
  const axis = sub(t.end, root);
  const along = unit(axis);
  return { root, along, across: normal(along, outward), length: len(axis) || 1 };
}

/**
 * Labels the cut-out's pixels by piece, as bits: BODY where the garment's body is drawn from, and bit k + 1 where
 * sleeve k is. A pixel beyond a sleeve's armhole line (through its shoulder seam and armpit, on the side of its
 * end) and within a tapering reach of the armhole's middle and the sleeve's end (a skirt flaring out beside a long
 * sleeve is not sleeve) is that sleeve's alone; the band of the sleeve's width along its axis is the sleeve's too,
 * where it lies over the body in the photo, and stays the body's there as well, above the body's hem (`hem`, a
 * row: sleeves hanging below a cropped body are sleeve alone).
 */
export function sleeveLabels(cutout: GarmentCutout, sleeves: readonly (SleeveShape & { outward: 1 | -1 })[], hem: number): PieceLabels {
  const { width, height, data } = cutout.image;
  const labels = new Uint8Array(width * height);
  for (let i = 0; i < labels.length; i++) if (data[i * 4 + 3] !== 0) labels[i] = BODY;
  // Each sleeve lies on its own side of the line between the shoulders' middle: only that side is looked at.
  const centre = sleeves.reduce((sum, t) => sum + t.shoulder.x, 0) / Math.max(1, sleeves.length);
  sleeves.forEach((t, k) => {
    const [fromX, toX] = sleeves.length < 2 ? [0, width] : t.end.x > centre ? [Math.floor(centre), width] : [0, Math.ceil(centre)];
    const bit = 2 << k;
    const line = sub(t.armpit, t.shoulder);
    const cross = (px: number, py: number): number => line.x * (py - t.shoulder.y) - line.y * (px - t.shoulder.x);
    const endSide = Math.sign(cross(t.end.x, t.end.y));
    const armhole = mid(t.shoulder, t.armpit);
    const toEnd = sub(t.end, armhole);
    const toEndLength = len(toEnd) || 1;
    const toEndUnit = unit(toEnd);
    const rootReach = 0.65 * len(line);
    const endReach = 1.5 * t.half;
    const axis = sleeveAxis(t, t.outward);
    const beyond = (2 * t.half) / Math.min(toEndLength, axis.length);
    const cuffBottom = t.end.y + 2 * t.half;
    for (let y = 0; y < height; y++) {
      for (let x = Math.max(0, fromX); x < Math.min(width, toX); x++) {
        const i = y * width + x;
        if (labels[i] === 0) continue;
        const px = x + 0.5;
        const py = y + 0.5;
        // The band along the axis, a quarter wider at the seam than at the end.
        const bx = px - axis.root.x;
        const by = py - axis.root.y;
        const u = (bx * axis.along.x + by * axis.along.y) / axis.length;
        if (u >= 0 && u <= 1 + beyond && Math.abs(bx * axis.along.y - by * axis.along.x) <= t.half * (1.25 - 0.25 * Math.min(u, 1)))
          labels[i] = py > hem ? bit : labels[i]! | bit;
        if (Math.sign(cross(px, py)) !== endSide) continue;
        const dx = px - armhole.x;
        const dy = py - armhole.y;
        const share = (dx * toEndUnit.x + dy * toEndUnit.y) / toEndLength;
        const reach = share <= 0 ? rootReach : rootReach + (endReach - rootReach) * Math.min(share, 1);
        // The sleeve's cap, above its armhole's middle, is the sleeve's alone: drawn by the body's spline too, it
        // stood out past the shoulders as wings above the sleeve.
        if (share <= 1 + beyond && Math.abs(dx * toEndUnit.y - dy * toEndUnit.x) <= reach) labels[i] = bit;
        // Beyond the armhole line and above the cuff's bottom, what is not sleeve is no one's (drawn as body, it
        // hung down beside the torso); below it a skirt flares out.
        else if (py <= cuffBottom) labels[i]! &= ~BODY;
      }
    }
  });
  return { width, height, labels };
}

/** The bit of PieceLabels for the garment's body. */
export const BODY = 1;
