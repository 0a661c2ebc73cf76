/**
 * The body as a garment sees it: a frame (origin between the shoulders,
 * unit = shoulder width, axes across and down the torso), the limbs as
 * polylines, and the body's own width at any height, measured on the body
 * layout (so a broad or a slim person gets a garment that fits them).
 */
import { POSE, REGION, type PersonAnalysis } from '../../../vision/types.ts';
import type { Point } from '../types.ts';

export interface BodyFrame {
  /** Shoulder width in pixels: the unit of every proportion. */
  unit: number;
  /** Between the shoulders. */
  origin: Point;
  /** Unit vector across the body, towards the wearer's left (image right when facing the camera). */
  side: Point;
  /** Unit vector down the torso (shoulders to hips). */
  down: Point;
  /** Shoulders to hips along `down`, in pixels. */
  torsoLength: number;
  shoulder: { left: Point; right: Point };
  /** The top of each shoulder's outline, straight above the joint (where a shoulder seam lies). */
  shoulderTop: { left: Point; right: Point };
  /**
   * The top of the body's outline above a point (against `down`), below the neck and head: where cloth resting on the
   * shoulders lies. Null where no such outline is within reach.
   */
  outlineAbove(p: Point): Point | null;
  hip: { left: Point; right: Point };
  arm: { left: Point[]; right: Point[] };
  leg: { left: Point[]; right: Point[] };
  /** Half-widths of the body (torso, hips, upper legs) towards each side at `depth` pixels below the shoulders. */
  halfWidth(depth: number): { left: number; right: number };
}

const TORSO_REGIONS = new Set<number>([REGION.torso, REGION.hips, REGION.neck, REGION.leftUpperLeg, REGION.rightUpperLeg]);
const HEAD = new Set<number>([REGION.head]);
const HEAD_AND_NECK = new Set<number>([REGION.head, REGION.neck]);

export const add = (p: Point, v: Point, k = 1): Point => ({ x: p.x + v.x * k, y: p.y + v.y * k });
export const sub = (p: Point, q: Point): Point => ({ x: p.x - q.x, y: p.y - q.y });
export const dot = (p: Point, q: Point): number => p.x * q.x + p.y * q.y;
export const len = (v: Point): number => Math.hypot(v.x, v.y);
export const mid = (p: Point, q: Point): Point => ({ x: (p.x + q.x) / 2, y: (p.y + q.y) / 2 });
export const unit = (v: Point): Point => {
  const l = len(v) || 1;
  return { x: v.x / l, y: v.y / l };
};

export function bodyFrame(person: PersonAnalysis): BodyFrame {
  const lm = (k: number): Point => ({ x: person.landmarks[k]!.x, y: person.landmarks[k]!.y });
  const shoulder = { left: lm(POSE.leftShoulder), right: lm(POSE.rightShoulder) };
  const hip = { left: lm(POSE.leftHip), right: lm(POSE.rightHip) };
  const origin = mid(shoulder.left, shoulder.right);
  const hips = mid(hip.left, hip.right);
  const down = unit(sub(hips, origin));
  // Across the body, perpendicular to `down`, pointing the way the left shoulder lies.
  let side = { x: -down.y, y: down.x };
  if (dot(side, sub(shoulder.left, shoulder.right)) < 0) side = { x: -side.x, y: -side.y };
  const torsoLength = dot(sub(hips, origin), down);
  const unitWidth = Math.max(len(sub(shoulder.left, shoulder.right)), 0.5 * torsoLength, 1);
  const { labels, width, height } = person.layout;

  /** Steps from the axis towards ±side until the torso-like labels end (short gaps of one or two pixels are crossed). */
  const reach = (from: Point, dir: Point): number => {
    let last = 0;
    const limit = unitWidth * 1.5;
    for (let d = 0; d < limit; d += 1) {
      const x = Math.round(from.x + dir.x * d);
      const y = Math.round(from.y + dir.y * d);
      if (x < 0 || y < 0 || x >= width || y >= height) break;
      if (TORSO_REGIONS.has(labels[y * width + x]!)) last = d;
      else if (d - last > 3) break;
    }
    return last;
  };

  /**
   * How far straight up (against `down`) from `p` the person's pixels go, within 0.4 shoulder widths, before the
   * matte ends or a region in `stop` begins; −1 where `p` itself is not such a pixel.
   */
  const climb = (p: Point, stop: ReadonlySet<number>): number => {
    let last = -1;
    for (let d = 0; d < 0.4 * unitWidth; d++) {
      const x = Math.round(p.x - down.x * d);
      const y = Math.round(p.y - down.y * d);
      if (x < 0 || y < 0 || x >= width || y >= height) break;
      const i = y * width + x;
      if (person.matte.data[i]! < 128 || stop.has(labels[i]!)) break;
      last = d;
    }
    return last;
  };

  /** From a shoulder joint straight up to the last person pixel that is not head or hair. */
  const top = (joint: Point): Point => add(joint, down, -Math.max(climb(joint, HEAD), 0.05 * unitWidth));

  return {
    unit: unitWidth,
    shoulderTop: { left: top(shoulder.left), right: top(shoulder.right) },
    outlineAbove(p: Point) {
      const last = climb(p, HEAD_AND_NECK);
      return last < 0 ? null : add(p, down, -last);
    },
    origin,
    side,
    down,
    torsoLength,
    shoulder,
    hip,
    arm: {
      left: [shoulder.left, lm(POSE.leftElbow), lm(POSE.leftWrist)],
      right: [shoulder.right, lm(POSE.rightElbow), lm(POSE.rightWrist)],
    },
    leg: {
      left: [hip.left, lm(POSE.leftKnee), lm(POSE.leftAnkle)],
      right: [hip.right, lm(POSE.rightKnee), lm(POSE.rightAnkle)],
    },
    halfWidth(depth: number) {
      // The axis runs from the shoulders' midpoint through the hips' midpoint.
      const centre = add(origin, down, depth);
      const fallback = 0.4 * unitWidth;
      const left = reach(centre, side);
      const right = reach(centre, { x: -side.x, y: -side.y });
      return { left: left > 0.1 * unitWidth ? left : fallback, right: right > 0.1 * unitWidth ? right : fallback };
    },
  };
}

/**
 * Whether both forearms are folded across the body: each wrist seen between the shoulders' and the hips' heights, and
 * past the body's centre line on the far side from its own shoulder by more than a tenth of the shoulder width.
 */
export function armsFolded(person: PersonAnalysis, body: BodyFrame): boolean {
  const shoulderY = (body.shoulder.left.y + body.shoulder.right.y) / 2;
  const hipY = (body.hip.left.y + body.hip.right.y) / 2;
  const crossed = (wrist: number, towardsOwnSide: 1 | -1): boolean => {
    const w = person.landmarks[wrist]!;
    if (w.visibility < 0.5 || w.y < shoulderY || w.y > hipY) return false;
    return towardsOwnSide * dot(sub(w, body.origin), body.side) < -0.1 * body.unit;
  };
  return crossed(POSE.leftWrist, 1) && crossed(POSE.rightWrist, -1);
}

/** The point `distance` pixels along a polyline from its first point; past either end it continues straight on. */
export function alongPolyline(points: readonly Point[], distance: number): { point: Point; direction: Point } {
  let remaining = distance;
  for (let i = 0; i + 1 < points.length; i++) {
    const a = points[i]!;
    const b = points[i + 1]!;
    const seg = len(sub(b, a));
    const direction = unit(sub(b, a));
    if (remaining <= seg || i + 2 === points.length) return { point: add(a, direction, remaining), direction };
    remaining -= seg;
  }
  return { point: points[0]!, direction: { x: 0, y: 1 } };
}

/** How far along a polyline the point nearest `p` on it lies. */
export function lengthTo(points: readonly Point[], p: Point): number {
  let best = Infinity;
  let at = 0;
  let walked = 0;
  for (let i = 0; i + 1 < points.length; i++) {
    const a = points[i]!;
    const seg = sub(points[i + 1]!, a);
    const l = len(seg);
    const t = l > 0 ? Math.max(0, Math.min(1, dot(sub(p, a), seg) / (l * l))) : 0;
    const d = len(sub(p, add(a, seg, t)));
    if (d < best) [best, at] = [d, walked + t * l];
    walked += l;
  }
  return at;
}

export function polylineLength(points: readonly Point[]): number {
  let total = 0;
  for (let i = 0; i + 1 < points.length; i++) total += len(sub(points[i + 1]!, points[i]!));
  return total;
}
