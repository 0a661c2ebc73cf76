/**
 * Garment landmarks from the cut-out silhouette alone (no learned model):
 * the torso's edges are followed up from the hem, and where they turn
 * sharply outwards (a sleeve) or inwards (an armhole) is the armpit. Points
 * are returned in the coordinates of the garment image (not the mask).
 */
import type { GarmentCutout } from './cutout.ts';

export interface Point {
  x: number;
  y: number;
}

/** A sleeve: where it joins the body (root), where it ends, and its width at the cuff. */
export interface Sleeve {
  root: Point;
  end: Point;
  cuffWidth: number;
  /** Sleeve pixels' extent along root→end, as a fraction of the torso height (for long-sleeve detection). */
  length: number;
}

/** Landmarks of a top, a dress or outerwear ("left" is the image's left, the wearer's right). */
export interface UpperLandmarks {
  kind: 'upper';
  neckLeft: Point;
  neckRight: Point;
  neckCentre: Point;
  shoulderLeft: Point;
  shoulderRight: Point;
  armpitLeft: Point;
  armpitRight: Point;
  waistLeft: Point;
  waistRight: Point;
  hemLeft: Point;
  hemRight: Point;
  sleeveLeft: Sleeve | null;
  sleeveRight: Sleeve | null;
}

/** Landmarks of trousers, shorts or a skirt. */
export interface LowerLandmarks {
  kind: 'lower';
  waistLeft: Point;
  waistRight: Point;
  /** Where the legs part; null for a skirt. */
  crotch: Point | null;
  /** Outer and inner hem corners of each leg (for a skirt: its hem corners, inner = the centre). */
  hemLeftOuter: Point;
  hemLeftInner: Point;
  hemRightInner: Point;
  hemRightOuter: Point;
}

export type GarmentLandmarks = UpperLandmarks | LowerLandmarks;

/** Row-wise view of a binary mask. */
export class Silhouette {
  readonly top: number;
  readonly bottom: number;
  readonly left: number;
  readonly right: number;
  constructor(
    readonly mask: Uint8Array,
    readonly width: number,
    readonly height: number,
  ) {
    let top = height;
    let bottom = -1;
    let left = width;
    let right = -1;
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        if (!mask[y * width + x]) continue;
        if (y < top) top = y;
        if (y > bottom) bottom = y;
        if (x < left) left = x;
        if (x > right) right = x;
      }
    }
    this.top = top;
    this.bottom = bottom;
    this.left = left;
    this.right = right;
  }

  get boxHeight(): number {
    return this.bottom - this.top + 1;
  }

  get boxWidth(): number {
    return this.right - this.left + 1;
  }

  at(x: number, y: number): boolean {
    const xi = Math.round(x);
    const yi = Math.round(y);
    return xi >= 0 && yi >= 0 && xi < this.width && yi < this.height && this.mask[yi * this.width + xi] === 1;
  }

  /** The run of garment pixels in row y containing x, or the nearest run; null on an empty row. */
  runAt(y: number, x: number): [number, number] | null {
    const row = Math.round(y) * this.width;
    let best: [number, number] | null = null;
    let bestDistance = Infinity;
    let start = -1;
    for (let i = 0; i <= this.width; i++) {
      const on = i < this.width && this.mask[row + i] === 1;
      if (on && start < 0) start = i;
      if (!on && start >= 0) {
        const end = i - 1;
        const distance = x < start ? start - x : x > end ? x - end : 0;
        if (distance < bestDistance) ((bestDistance = distance), (best = [start, end]));
        start = -1;
      }
    }
    return best;
  }

  /** All runs of row y. */
  runs(y: number): Array<[number, number]> {
    const row = Math.round(y) * this.width;
    const out: Array<[number, number]> = [];
    let start = -1;
    for (let i = 0; i <= this.width; i++) {
      const on = i < this.width && this.mask[row + i] === 1;
      if (on && start < 0) start = i;
      if (!on && start >= 0) (out.push([start, i - 1]), (start = -1));
    }
    return out;
  }

  /** First garment row of column x at or below `from`, or -1. */
  columnTop(x: number, from = 0): number {
    const xi = Math.round(x);
    for (let y = Math.max(0, from); y < this.height; y++) if (this.mask[y * this.width + xi]) return y;
    return -1;
  }
}

/** The silhouette of a cut-out. */
export function silhouetteOf(cutout: GarmentCutout): Silhouette {
  return new Silhouette(cutout.mask, cutout.maskWidth, cutout.maskHeight);
}

/** Finds the landmarks of an upper-body garment (top, dress, outerwear) on a silhouette, in mask pixels. */
export function upperLandmarks(s: Silhouette): UpperLandmarks {
  const h = s.boxHeight;
  const hemY = s.bottom - Math.max(1, Math.round(h * 0.02));
  const centreRun = s.runAt(s.top + h * 0.7, (s.left + s.right) / 2) ?? [s.left, s.right];
  const cx = (centreRun[0] + centreRun[1]) / 2;
  const edgeLeft = torsoEdges(s, hemY, cx, -1);
  const edgeRight = torsoEdges(s, hemY, cx, 1);
  const armpitLeft = edgeLeft.armpit;
  const armpitRight = edgeRight.armpit;

  const shoulderLeft = shoulderPoint(s, armpitLeft, cx, -1);
  const shoulderRight = shoulderPoint(s, armpitRight, cx, 1);
  const neck = neckPoints(s, shoulderLeft.x, shoulderRight.x, cx);

  const hemRun = s.runAt(hemY, cx) ?? centreRun;
  let waistY = s.top + h * 0.45;
  let narrowest = Infinity;
  const waistFrom = Math.max(armpitLeft.y, armpitRight.y) + h * 0.05;
  for (let y = Math.round(waistFrom); y < s.top + h * 0.75; y++) {
    const run = s.runAt(y, cx);
    if (run && run[1] - run[0] < narrowest) ((narrowest = run[1] - run[0]), (waistY = y));
  }
  const waistRun = s.runAt(waistY, cx) ?? centreRun;

  return {
    kind: 'upper',
    neckLeft: neck.left,
    neckRight: neck.right,
    neckCentre: neck.centre,
    shoulderLeft,
    shoulderRight,
    armpitLeft,
    armpitRight,
    waistLeft: { x: waistRun[0], y: waistY },
    waistRight: { x: waistRun[1], y: waistY },
    hemLeft: { x: hemRun[0], y: hemY },
    hemRight: { x: hemRun[1], y: hemY },
    sleeveLeft: sleeve(s, shoulderLeft, armpitLeft, edgeLeft.edgeAt, -1, h),
    sleeveRight: sleeve(s, shoulderRight, armpitRight, edgeRight.edgeAt, 1, h),
  };
}

/**
 * Follows one torso edge up from the hem. The armpit is the lowest point
 * where the edge turns steeply outwards (a sleeve joins) or inwards (an
 * armhole), above the lower third of the garment.
 */
function torsoEdges(s: Silhouette, hemY: number, cx: number, side: -1 | 1): { armpit: Point; edgeAt: (y: number) => number } {
  const h = s.boxHeight;
  const edges = new Float32Array(s.height).fill(NaN);
  for (let y = s.bottom; y >= s.top; y--) {
    const run = s.runAt(y, cx);
    if (run) edges[y] = side < 0 ? run[0] : run[1];
  }
  const step = Math.max(2, Math.round(h * 0.03));
  const lowest = s.top + h * 0.5;
  const highest = s.top + h * 0.12;
  let armpitY = -1;
  for (let y = Math.round(Math.min(hemY - step, lowest)); y >= highest; y--) {
    const here = edges[y]!;
    const below = edges[y + step]!;
    if (Number.isNaN(here) || Number.isNaN(below)) continue;
    const outward = (here - below) * side;
    if (Math.abs(outward) > step * 0.9) {
      // The armpit is the first row, coming up from below, where the edge turns.
      armpitY = y + 1;
      for (let r = y + step; r > y; r--) {
        if (Math.abs(edges[r - 1]! - edges[r]!) > 0.9) {
          armpitY = r;
          break;
        }
      }
      break;
    }
  }
  if (armpitY < 0) armpitY = Math.round(s.top + h * 0.3);
  const armpitX = Number.isNaN(edges[armpitY]!) ? cx + side * s.boxWidth * 0.3 : edges[armpitY]!;
  const edgeAt = (y: number): number => {
    if (y <= armpitY) return armpitX;
    const e = edges[Math.round(y)];
    return e === undefined || Number.isNaN(e) ? armpitX : e;
  };
  return { armpit: { x: armpitX, y: armpitY }, edgeAt };
}

/** The shoulder point: above the armpit, on the top contour, moved inwards until the garment rises well above the armpit (straps). */
function shoulderPoint(s: Silhouette, armpit: Point, cx: number, side: -1 | 1): Point {
  const rise = armpit.y - s.top;
  for (let x = armpit.x; side < 0 ? x < cx : x > cx; x -= side) {
    const y = s.columnTop(x, s.top);
    if (y >= 0 && y < armpit.y - rise * 0.45) return { x, y };
  }
  return { x: armpit.x, y: s.top };
}

function neckPoints(s: Silhouette, leftX: number, rightX: number, cx: number): { left: Point; right: Point; centre: Point } {
  const highest = (from: number, to: number): Point => {
    let best: Point = { x: (from + to) / 2, y: s.height };
    const lo = Math.round(Math.min(from, to));
    const hi = Math.round(Math.max(from, to));
    for (let x = lo; x <= hi; x++) {
      const y = s.columnTop(x, s.top);
      // Ties go to the column nearest the centre: the neck edge, not the shoulder.
      if (y >= 0 && (y < best.y || (y === best.y && Math.abs(x - cx) < Math.abs(best.x - cx)))) best = { x, y };
    }
    return best;
  };
  const inner = (rightX - leftX) * 0.05;
  const left = highest(leftX + inner, cx - inner);
  const right = highest(cx + inner, rightX - inner);
  const centreY = s.columnTop(cx, s.top);
  return { left, right, centre: { x: cx, y: centreY >= 0 ? centreY : Math.max(left.y, right.y) } };
}

function sleeve(s: Silhouette, shoulder: Point, armpit: Point, edgeAt: (y: number) => number, side: -1 | 1, h: number): Sleeve | null {
  const root = { x: (shoulder.x + armpit.x) / 2, y: (shoulder.y + armpit.y) / 2 };
  // Sleeve pixels: beyond the torso's edge and connected to the armhole (not stray bits of hem).
  const beyond = new Uint8Array(s.mask.length);
  for (let y = s.top; y <= s.bottom; y++) {
    const edge = edgeAt(y);
    for (let x = s.left; x <= s.right; x++) if (s.mask[y * s.width + x] && (x - edge) * side > 0) beyond[y * s.width + x] = 1;
  }
  const queue: number[] = [];
  const seen = new Uint8Array(s.mask.length);
  const seedX = Math.round(armpit.x + side);
  for (let y = Math.round(shoulder.y); y <= armpit.y; y++) {
    for (let dx = 0; dx <= 2; dx++) {
      const i = y * s.width + seedX + side * dx;
      if (seedX + side * dx >= 0 && seedX + side * dx < s.width && beyond[i] && !seen[i]) ((seen[i] = 1), queue.push(i));
    }
  }
  let far = 0;
  const xs: number[] = [];
  const ys: number[] = [];
  for (let head = 0; head < queue.length; head++) {
    const i = queue[head]!;
    const x = i % s.width;
    const y = (i - x) / s.width;
    xs.push(x);
    ys.push(y);
    far = Math.max(far, Math.hypot(x - root.x, y - root.y));
    const next = [x > 0 ? i - 1 : -1, x < s.width - 1 ? i + 1 : -1, i - s.width, i + s.width];
    for (const j of next) if (j >= 0 && j < beyond.length && beyond[j] && !seen[j]) ((seen[j] = 1), queue.push(j));
  }
  const count = xs.length;
  if (count < h * h * 0.01) return null;
  let ex = 0;
  let ey = 0;
  let n = 0;
  for (let i = 0; i < xs.length; i++) {
    if (Math.hypot(xs[i]! - root.x, ys[i]! - root.y) < far * 0.93) continue;
    ex += xs[i]!;
    ey += ys[i]!;
    n++;
  }
  const end = { x: ex / n, y: ey / n };
  const ux = (end.x - root.x) / (Math.hypot(end.x - root.x, end.y - root.y) || 1);
  const uy = (end.y - root.y) / (Math.hypot(end.x - root.x, end.y - root.y) || 1);
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = 0; i < xs.length; i++) {
    const along = (xs[i]! - root.x) * ux + (ys[i]! - root.y) * uy;
    if (along < far * 0.85) continue;
    const across = -(xs[i]! - root.x) * uy + (ys[i]! - root.y) * ux;
    if (across < lo) lo = across;
    if (across > hi) hi = across;
  }
  return { root, end, cuffWidth: Math.max(1, hi - lo), length: Math.hypot(end.x - root.x, end.y - root.y) / h };
}

/** Finds the landmarks of trousers, shorts or a skirt, in mask pixels. */
export function lowerLandmarks(s: Silhouette): LowerLandmarks {
  const h = s.boxHeight;
  const waistY = s.top + Math.max(1, Math.round(h * 0.02));
  const waistRuns = s.runs(waistY);
  const waistLeft = { x: waistRuns[0]?.[0] ?? s.left, y: waistY };
  const waistRight = { x: waistRuns[waistRuns.length - 1]?.[1] ?? s.right, y: waistY };
  const cx = (waistLeft.x + waistRight.x) / 2;
  const crotch = findCrotch(s, cx);
  const hemY = s.bottom - Math.max(1, Math.round(h * 0.015));
  const runs = s.runs(hemY);
  const first = runs[0] ?? [s.left, s.right];
  const last = runs[runs.length - 1] ?? first;
  if (crotch && runs.length >= 2) {
    return {
      kind: 'lower',
      waistLeft,
      waistRight,
      crotch,
      hemLeftOuter: { x: first[0], y: hemY },
      hemLeftInner: { x: first[1], y: hemY },
      hemRightInner: { x: last[0], y: hemY },
      hemRightOuter: { x: last[1], y: hemY },
    };
  }
  const mid = (first[0] + last[1]) / 2;
  return {
    kind: 'lower',
    waistLeft,
    waistRight,
    crotch: null,
    hemLeftOuter: { x: first[0], y: hemY },
    hemLeftInner: { x: mid, y: hemY },
    hemRightInner: { x: mid, y: hemY },
    hemRightOuter: { x: last[1], y: hemY },
  };
}

/** The top of the background gap between the legs near the centre, if the legs part over at least a fifth of the height. */
export function findCrotch(s: Silhouette, cx: number): Point | null {
  const h = s.boxHeight;
  const half = s.boxWidth * 0.12;
  let crotch: Point | null = null;
  const widths: number[] = [];
  for (let y = s.bottom - Math.round(h * 0.03); y > s.top + h * 0.1; y--) {
    const runs = s.runs(y).filter(([a, b]) => b - a >= s.boxWidth * 0.04);
    let gap: number | null = null;
    let width = 0;
    for (let i = 0; i + 1 < runs.length; i++) {
      const mid = (runs[i]![1] + runs[i + 1]![0]) / 2;
      if (Math.abs(mid - cx) < half) ((gap = mid), (width = runs[i + 1]![0] - runs[i]![1] - 1));
    }
    if (gap === null) break;
    crotch = { x: gap, y };
    widths.push(width);
  }
  if (!crotch || s.bottom - crotch.y < h * 0.2) return null;
  // The gap closes to a point narrower than a mask pixel: extend the narrowing V up to its apex.
  const span = widths.length - 1;
  const last = widths[span]! + 1; // anti-aliased edge pixels count as garment, so the gap looks a pixel narrower
  const narrowing = span > 0 ? (widths[0]! - widths[span]!) / span : 0;
  if (narrowing > 0.02) crotch = { x: crotch.x, y: crotch.y - Math.min(h * 0.1, last / narrowing) };
  return crotch;
}

/** Scales landmark coordinates (mask pixels → garment image pixels). */
export function scaleLandmarks<T extends GarmentLandmarks>(landmarks: T, scale: number): T {
  const map = (value: unknown): unknown => {
    if (value === null || typeof value !== 'object') return value;
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) {
      if (typeof v === 'number') out[key] = key === 'length' ? v : v * scale;
      else out[key] = map(v);
    }
    return out;
  };
  return map(landmarks) as T;
}
