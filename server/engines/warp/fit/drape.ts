/**
 * What gravity does to a drawn garment at the shoulders: cloth rests on
 * them. A garment laid flat has square shoulders and sleeves spread or
 * hanging as blocks; fitted to a body with sloping shoulders and arms at
 * the sides, its corners would stand off the body like pads or wings. Near
 * the shoulders, the garment may reach only a little way past the person's
 * outline (a collar or a puffer's thickness), a margin that widens towards
 * the armpits, where a sleeve's ease or a jacket's cut may stand away. At
 * its other end, a long sleeve ends where the hand comes out of it.
 */
import { POSE, REGION, type PersonAnalysis, type RawImage } from '../../../vision/types.ts';
import { isSkin, type SkinModel } from '../composite/colour.ts';
import type { Point } from '../types.ts';
import type { BodyFrame } from './body.ts';
import type { Layer } from './render.ts';

/**
 * The margin past the person's outline, in shoulder widths: `top` at the shoulders' tops, growing to `bottom`
 * at `depth` torso lengths below the shoulders (about the armpits), free below. Within `collar` shoulder widths of
 * the centre line (a neck's half-width is about 0.2) nothing is clipped (collars, hoods), and within `neck` nothing
 * over the person; over the wall there the margin is wider by up to `rise`, the most at `collar`. `feather` pixels
 * soften the cut. What stands past the outline there is rounded to `corner` shoulder widths (roundCorners).
 */
const DRAPE = { top: 0.03, bottom: 0.16, depth: 0.3, collar: 0.2, neck: 0.3, rise: 0.1, feather: 1.5, corner: 0.15 } as const;
/** Cloth over a shoulder reaches up to the outline from this far below it (shoulder widths; reachShoulders). */
const REACH = 0.12;
/** The shoulders' outline goes on this far past each shoulder's top (shoulder widths), round its cap. */
const PAST = 0.12;
/** The new top line is smoothed over this many shoulder widths each way (reachShoulders). */
const SMOOTH = 0.04;
/** A column's rise is taken up by stretching this many times as many rows below its old top. */
const SPREAD = 3;
/** The rise tapers off over this many shoulder widths towards the neck. */
const TAPER = 0.08;
/** The soft rows above a garment's first solid one, stretched up with it. */
const SOFT = 2;

/** A box of photo pixels, [x0, x1) × [y0, y1). */
interface Box {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

/**
 * Distance (px, chamfer 3-4 / 3) from each pixel of `box` to the nearest pixel of the person's body inside it
 * (the head and hair, which may hang over the shoulders, are not body). Exact wherever the nearest body pixel lies
 * in the box, so a box grown by the largest distance that matters gives exact answers up to that distance.
 */
export function distanceToBody(person: PersonAnalysis, box: Box): Float32Array {
  const { data, width } = person.matte;
  const labels = person.layout.labels;
  const w = box.x1 - box.x0;
  const h = box.y1 - box.y0;
  const body = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = (box.y0 + y) * width + box.x0 + x;
      body[y * w + x] = data[i]! >= 128 && labels[i] !== REGION.head ? 1 : 0;
    }
  }
  return chamfer(body, w, h);
}

/** Distance (px, chamfer 3-4 / 3) from each pixel of a w × h grid to the nearest pixel where `from` is 1. */
function chamfer(from: Uint8Array, w: number, h: number): Float32Array {
  const far = 1e9;
  const d = new Float32Array(w * h);
  for (let k = 0; k < d.length; k++) d[k] = from[k] ? 0 : far;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const k = y * w + x;
      let v = d[k]!;
      if (v === 0) continue;
      if (x > 0) v = Math.min(v, d[k - 1]! + 3);
      if (y > 0) {
        v = Math.min(v, d[k - w]! + 3);
        if (x > 0) v = Math.min(v, d[k - w - 1]! + 4);
        if (x + 1 < w) v = Math.min(v, d[k - w + 1]! + 4);
      }
      d[k] = v;
    }
  }
  for (let y = h - 1; y >= 0; y--) {
    for (let x = w - 1; x >= 0; x--) {
      const k = y * w + x;
      let v = d[k]!;
      if (v === 0) continue;
      if (x + 1 < w) v = Math.min(v, d[k + 1]! + 3);
      if (y + 1 < h) {
        v = Math.min(v, d[k + w]! + 3);
        if (x + 1 < w) v = Math.min(v, d[k + w + 1]! + 4);
        if (x > 0) v = Math.min(v, d[k + w - 1]! + 4);
      }
      d[k] = v;
    }
  }
  for (let k = 0; k < d.length; k++) d[k] = d[k]! / 3;
  return d;
}

/**
 * A photo point's distance down the body's axis and across it (towards the wearer's left) from between the shoulders,
 * and the depth of the higher shoulder's top.
 */
function shoulderAxes(body: BodyFrame): {
  along: (x: number, y: number) => number;
  across: (x: number, y: number) => number;
  top: number;
} {
  const { origin, down, side, shoulderTop } = body;
  const along = (x: number, y: number): number => (x - origin.x) * down.x + (y - origin.y) * down.y;
  const across = (x: number, y: number): number => (x - origin.x) * side.x + (y - origin.y) * side.y;
  const top = Math.min(along(shoulderTop.left.x, shoulderTop.left.y), along(shoulderTop.right.x, shoulderTop.right.y));
  return { along, across, top };
}

/** The layer with what stands off the shoulders (see DRAPE) taken away; the layer itself is changed. */
export function restOnShoulders(layer: Layer, body: BodyFrame, person: PersonAnalysis): Layer {
  const { width, height } = person.matte;
  const { origin, down, unit } = body;
  const { along, across, top } = shoulderAxes(body);
  const depth = DRAPE.depth * body.torsoLength;
  // Distances are needed only over the layer down to the armpits, and only up to the widest margin: the box is
  // grown by that much, so every distance that can decide a pixel is exact.
  const reach = Math.ceil(unit * DRAPE.bottom + DRAPE.feather) + 1;
  // Below this row every pixel of the layer is deeper than the armpits (for a body tilted past 70°, the layer's end).
  const deepest = Math.max(...[layer.x0, layer.x0 + layer.width].map((x) => top + depth - (x - origin.x) * down.x));
  const lowest = down.y > 0.35 ? origin.y + deepest / down.y : layer.y0 + layer.height;
  const box = {
    x0: Math.max(0, layer.x0 - reach),
    y0: Math.max(0, layer.y0 - reach),
    x1: Math.min(width, layer.x0 + layer.width + reach),
    y1: Math.min(height, Math.ceil(Math.min(layer.y0 + layer.height, lowest)) + reach),
  };
  if (box.x1 <= box.x0 || box.y1 <= box.y0) return layer;
  const distance = distanceToBody(person, box);
  const bw = box.x1 - box.x0;
  for (let y = 0; y < layer.height; y++) {
    const py = layer.y0 + y;
    for (let x = 0; x < layer.width; x++) {
      const o = y * layer.width + x;
      if (layer.alpha[o]! <= 0) continue;
      const px = layer.x0 + x;
      // Beside the neck only cloth over the wall is clipped: there it stood in the air below long hair, the wall
      // between them (#1, #109); cloth over the person there is a collar over the old one, which the head's region
      // takes in below the chin. Its margin narrows from the collar's out to the usual, so the cut slopes (a step
      // stood where it began).
      const off = Math.abs(across(px, py));
      if (off < DRAPE.collar * unit || (off < DRAPE.neck * unit && person.matte.data[py * width + px]! >= 128)) continue;
      const t = (along(px, py) - top) / depth;
      if (t > 1) continue;
      const nearNeck = Math.max(0, (DRAPE.neck * unit - off) / ((DRAPE.neck - DRAPE.collar) * unit));
      const margin = unit * (DRAPE.top + Math.max(0, t) * (DRAPE.bottom - DRAPE.top) + nearNeck * DRAPE.rise);
      const inside = px >= box.x0 && py >= box.y0 && px < box.x1 && py < box.y1;
      const d = inside ? distance[(py - box.y0) * bw + px - box.x0]! : Infinity;
      const keep = Math.min(1, Math.max(0, (margin - d) / DRAPE.feather + 0.5));
      layer.alpha[o] = layer.alpha[o]! * keep;
    }
  }
  // What still stands past the person's outline near the shoulders is rounded: a flat garment's square corner,
  // even within the margin, read as a boxy pad where a shoulder is round.
  const radius = Math.round(DRAPE.corner * unit);
  const rows = Math.min(layer.height, Math.ceil(Math.min(layer.y0 + layer.height, lowest)) - layer.y0 + 2 * radius + 1);
  roundCorners(layer, radius, rows, (px, py) => {
    if (Math.abs(across(px, py)) < DRAPE.neck * unit || (along(px, py) - top) / depth > 1) return false;
    const inside = px >= box.x0 && py >= box.y0 && px < box.x1 && py < box.y1;
    return !inside || distance[(py - box.y0) * bw + px - box.x0]! > 1;
  });
  return layer;
}

/**
 * Cloth over the shoulders reaches up to the body's outline where it lies short of it by at most REACH shoulder
 * widths: between the neck (DRAPE.neck) and each shoulder's top, a column whose garment begins below body that is
 * neither head nor hair (old clothing or bare skin up to the outline, and the old top the head's region takes in below
 * the chin, `oldTop`: neckline.ts's oldTopUnderChin) has its top stretched up to the outline, its anti-aliased edge
 * with it. A flat garment's shoulder seam runs straight from the collar to the shoulder's corner
 * while a shoulder rises in a curve to the neck: old clothing stood above the seam as a notch, turned into wall or
 * painted as skin (#72), and a bare shoulder stood above a jacket's (#44). Not for a garment hanging from straps,
 * which leave the shoulders bare beside them. The layer is changed.
 */
export function reachShoulders(layer: Layer, body: BodyFrame, person: PersonAnalysis, oldTop: Uint8Array | null = null): Layer {
  const { width, data } = person.matte;
  const { labels } = person.layout;
  const { unit, shoulderTop } = body;
  const { x0, y0, width: lw, height: lh, rgb, alpha } = layer;
  const { along, across, top } = shoulderAxes(body);
  const deepest = top + DRAPE.depth * body.torsoLength;
  const ends = [
    across(shoulderTop.right.x, shoulderTop.right.y) - PAST * unit,
    across(shoulderTop.left.x, shoulderTop.left.y) + PAST * unit,
  ];
  const reach = REACH * unit;
  // Each column's garment top (its first solid row) and how far the body goes on above it; -1 where it may not reach.
  const first = new Int32Array(lw).fill(-1);
  const rise = new Int32Array(lw).fill(-1);
  for (let x = 0; x < lw; x++) {
    const px = x0 + x;
    let g = 0;
    while (g < lh && alpha[g * lw + x]! < 0.5) g++;
    if (g >= lh) continue;
    const py = y0 + g;
    const a = across(px + 0.5, py + 0.5);
    if (Math.abs(a) < DRAPE.neck * unit || a < ends[0]! || a > ends[1]! || along(px + 0.5, py + 0.5) > deepest) continue;
    // Up from it over the body (not the head, whose hair may lie on the shoulder) to the outline.
    let o = py;
    while (o > 0 && py - o <= reach) {
      const i = (o - 1) * width + px;
      if (data[i]! < 128 || (labels[i] === REGION.head && !oldTop?.[i])) break;
      o--;
    }
    if (py - o > reach) continue;
    first[x] = g;
    // Towards the neck the rise tapers off to none: it stopped there in a step.
    rise[x] = Math.round((py - o) * Math.min(1, (Math.abs(a) - DRAPE.neck * unit) / (TAPER * unit)));
  }
  // The new top is smoothed along the columns (the matte's outline is ragged, and each column stretched on its own
  // left vertical streaks), and reaches no further past the body than cloth resting on it may (DRAPE.top). The
  // stretch is spread over SPREAD times the rise below the old top: a print stretched twice over within the rise
  // itself was streaked.
  const smooth = Math.max(2, Math.round(SMOOTH * unit));
  const column = new Float32Array(lh * 4);
  for (let x = 0; x < lw; x++) {
    if (rise[x]! <= 0) continue;
    let sum = 0;
    let count = 0;
    for (let u = Math.max(0, x - smooth); u <= Math.min(lw - 1, x + smooth); u++) {
      if (rise[u]! < 0) continue;
      sum += first[u]! - rise[u]!;
      count++;
    }
    const g = first[x]!;
    const n = Math.min(rise[x]! + Math.round(DRAPE.top * unit), Math.max(0, Math.round(g - sum / count)));
    if (n === 0) continue;
    // Stretched: rows [g - SOFT, g + SPREAD·n) of the column are drawn over [g - n - SOFT, g + SPREAD·n).
    const end = Math.min(lh, g + SPREAD * n);
    const from = Math.max(0, g - SOFT);
    const to = Math.max(0, g - n - SOFT);
    for (let y = from; y < end; y++) {
      const k = y * lw + x;
      column[y * 4] = alpha[k]!;
      for (let c = 0; c < 3; c++) column[y * 4 + 1 + c] = rgb[k * 3 + c]! * alpha[k]!;
    }
    const squeeze = (end - from) / (end - to);
    for (let y = to; y < end; y++) {
      // A pixel centre's distance above `end` is scaled by `squeeze` to find its source.
      const s = end - 0.5 - (end - y - 0.5) * squeeze;
      const s0 = Math.max(from, Math.min(end - 1, Math.floor(s)));
      const s1 = Math.min(end - 1, s0 + 1);
      const t = Math.max(0, Math.min(1, s - s0));
      const k = y * lw + x;
      const a = column[s0 * 4]! * (1 - t) + column[s1 * 4]! * t;
      alpha[k] = a;
      if (a <= 0) continue;
      for (let c = 0; c < 3; c++) rgb[k * 3 + c] = Math.round((column[s0 * 4 + 1 + c]! * (1 - t) + column[s1 * 4 + 1 + c]! * t) / a);
      const nearest = (t < 0.5 ? s0 : s1) * lw + x;
      layer.sleeve[k] = layer.sleeve[nearest]!;
      if (layer.tube) layer.tube[k] = layer.tube[nearest]!;
      if (layer.insideBack) layer.insideBack[k] = layer.insideBack[nearest]!;
    }
  }
  return layer;
}

/**
 * Rounds the convex corners of the layer's first `rows` rows to `radius` pixels (a morphological opening of its solid
 * pixels, alpha ≥ 0.5: what a disc of that radius rolled inside it cannot reach goes) where `free(x, y)` says a photo
 * pixel may go. The layer is changed.
 */
export function roundCorners(layer: Layer, radius: number, rows: number, free: (x: number, y: number) => boolean): void {
  const { width: w, alpha } = layer;
  const h = Math.max(0, Math.min(layer.height, rows));
  if (radius < 2 || h === 0) return;
  const outside = new Uint8Array(w * h);
  for (let k = 0; k < outside.length; k++) outside[k] = alpha[k]! < 0.5 ? 1 : 0;
  const depthIn = chamfer(outside, w, h);
  const core = new Uint8Array(w * h);
  for (let k = 0; k < core.length; k++) core[k] = depthIn[k]! > radius ? 1 : 0;
  const fromCore = chamfer(core, w, h);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const k = y * w + x;
      if (alpha[k]! <= 0 || fromCore[k]! <= radius) continue;
      if (!free(layer.x0 + x, layer.y0 + y)) continue;
      alpha[k] = alpha[k]! * Math.max(0, Math.min(1, radius + 0.5 - fromCore[k]!));
    }
  }
}

/**
 * A sleeve ends where its hand's skin begins: `across` is how far from the forearm's line (in shoulder widths) its cuff
 * may lie; `seen` how many skin pixels of the hand's region (in squared shoulder widths) show a hand; the hem lies at
 * the `quantile` of their distances along the forearm (the region's edge is stepped: its top few pixels).
 */
const CUFF = { across: 0.4, seen: 0.01, quantile: 0.05 } as const;

/**
 * The layer with each sleeve that reaches over a seen hand cut where the hand's skin begins, square across the
 * forearm and anti-aliased; the layer itself is changed. A long sleeve is drawn a little longer than the arm; the
 * hand, which stays in front, then cut it along the layout's hand region, whose coarse cells stair-stepped the cuff
 * and left the sleeve's corners hanging beside the hand (#40). Not at the wrist's landmark: an old sleeve's cuff may
 * hide the wrist, and the new sleeve, cut there, bared the cuff below it (#20).
 */
export function hemAtWrists(layer: Layer, image: RawImage, person: PersonAnalysis, skin: SkinModel | null, unit: number): Layer {
  const { tube, alpha, x0, y0, width: lw, height: lh } = layer;
  if (!tube || !skin) return layer;
  const hands = handHems(image, person, skin, unit);
  if (hands.length === 0) return layer;
  const reach2 = (CUFF.across * unit) ** 2;
  for (let y = 0; y < lh; y++) {
    for (let x = 0; x < lw; x++) {
      const o = y * lw + x;
      if (tube[o] !== 1 || alpha[o]! <= 0) continue;
      const px = x0 + x + 0.5;
      const py = y0 + y + 0.5;
      // The forearm nearest the pixel, and how far past its hand's hem line the pixel lies.
      let nearest = Infinity;
      let past = -Infinity;
      for (const { elbow, d, hem } of hands) {
        const t = (px - elbow.x) * d.x + (py - elbow.y) * d.y;
        const off = (px - elbow.x) * d.y - (py - elbow.y) * d.x;
        // Off the forearm from its elbow to a little past its hem (the line goes on across the body).
        const beyond = t < 0 ? t : Math.max(0, t - hem - CUFF.across * unit);
        const distance2 = off * off + beyond * beyond;
        if (distance2 >= nearest || distance2 > reach2) continue;
        nearest = distance2;
        past = t - hem;
      }
      if (past > -0.5) alpha[o] = alpha[o]! * Math.max(0, Math.min(1, 0.5 - past));
    }
  }
  return layer;
}

/** Each seen hand's forearm (from its elbow, unit direction `d`) and its hem's distance along it (hemAtWrists). */
interface HandHem {
  elbow: Point;
  d: Point;
  hem: number;
}

const hems = new WeakMap<PersonAnalysis, Map<SkinModel, HandHem[]>>();

/** The hems of a person's seen hands, measured once per person and skin model (every layer and caution level asks). */
function handHems(image: RawImage, person: PersonAnalysis, skin: SkinModel, unit: number): HandHem[] {
  let bySkin = hems.get(person);
  if (!bySkin) hems.set(person, (bySkin = new Map()));
  let found = bySkin.get(skin);
  if (found) return found;
  found = [];
  const lm = person.landmarks;
  const { labels } = person.layout;
  const { width, data, channels } = image;
  for (const [elbow, wrist, region] of [
    [lm[POSE.leftElbow]!, lm[POSE.leftWrist]!, REGION.leftHand],
    [lm[POSE.rightElbow]!, lm[POSE.rightWrist]!, REGION.rightHand],
  ] as const) {
    if (elbow.visibility < 0.5 || wrist.visibility < 0.5) continue;
    const length = Math.hypot(wrist.x - elbow.x, wrist.y - elbow.y) || 1;
    const d = { x: (wrist.x - elbow.x) / length, y: (wrist.y - elbow.y) / length };
    const along: number[] = [];
    for (let i = 0; i < labels.length; i++) {
      if (labels[i] !== region || !isSkin(skin, data[i * channels]!, data[i * channels + 1]!, data[i * channels + 2]!)) continue;
      along.push(((i % width) + 0.5 - elbow.x) * d.x + (Math.floor(i / width) + 0.5 - elbow.y) * d.y);
    }
    if (along.length < CUFF.seen * unit * unit) continue;
    along.sort((a, b) => a - b);
    found.push({ elbow, d, hem: along[Math.floor(CUFF.quantile * (along.length - 1))]! });
  }
  bySkin.set(skin, found);
  return found;
}
