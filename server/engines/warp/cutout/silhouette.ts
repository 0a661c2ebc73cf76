/**
 * What a garment's silhouette says: its category and its landmarks. The
 * silhouette is read row by row (its left and right extent and its runs),
 * which is enough for garments laid flat or on a ghost mannequin, facing
 * the camera. Left and right are the wearer's: the wearer's left is on the
 * image's right.
 */
import type { Mask } from '../../../vision/types.ts';
import type { GarmentLandmarks, Point, WarpCategory } from '../types.ts';
import { flood4 } from '../../../kernel/raster.ts';

/** One row of the silhouette: its runs of garment pixels. */
interface Row {
  runs: [number, number][];
  left: number;
  right: number;
}

export interface Silhouette {
  rows: (Row | null)[];
  top: number;
  bottom: number;
  mask: Mask;
}

const ON = 128;
/** Where a garment without a visible armhole gets its armpits: this share of the way from shoulders to hem. */
const BOXY_ARMPIT = 0.28;
/** Straps: the cup's top edge lies at least this share of the garment's height below the straps' tops. */
const STRAPS = 0.12;
/**
 * A strapless top edge: its neckline dips less than `dip` of the height, the row 2 % down is at least `fill` of the
 * body's width under the arms, and the bodice below it (4–12 % down) widens to at least `bodice` of it (a strapless
 * top is held up by a snug edge; a sleeveless dress whose straps and back neckline make a straight edge is widest
 * there: of the fixture garments with a straight top edge and no sleeves, the strapless dress widens to 1.27, a
 * sleeveless shift dress to 1.10, so `bodice` rests on one garment of each). Its wearer's chest is `chest` of the
 * shoulders' width (median of the 18 wide-set people, 0.78–0.97), and its top edge lies `depth` shoulder widths
 * below the shoulder joints, at the armpits.
 */
const STRAPLESS = { dip: 0.03, fill: 0.8, bodice: 1.18, chest: 0.88, depth: 0.35 } as const;
/**
 * A top with armholes cut in deep hangs from its straps, loose under the arms: its width there is this share of
 * its wearer's shoulders' width (a strapless top must be snug, `STRAPLESS.chest`). A basketball jersey laid flat is
 * about 53 cm wide in a size M, some 1.3 times the 38 or so between its wearer's shoulder joints, and hanging loose
 * it shows nearly that wide; at 1, the wide set's jersey was drawn narrower than the T-shirt under it.
 */
const CUT_IN_CHEST = 1.2;
/** A tank's straps' tops are at least this share of half its width apart (a halter's band: 0.17; a jersey: 0.75). */
const TANK_NECK = 0.5;
/**
 * A top without sleeves whose shoulders span its body's width (a knit vest) is worn over a top: each row `from` to
 * `to` of its height down is at least `fill` of the body's width. On the wide set: the two knit vests 0.96; a
 * basketball jersey 0.58, a halter 0.41, camis under 0.2. Not a dress: a pinafore is worn over a top (1.21), but a
 * sleeveless shift dress spans its body as fully (the shared fixtures' printed one, 0.91) and is worn alone.
 */
const SPANNED = { from: 0.1, to: 0.2, fill: 0.9 } as const;
/** The body between sleeves hanging beside it is at least this share of the width they span together. */
const HANGING_BODY = 0.4;
/** Share of the lowest rows split into legs for trousers or shorts. */
const LEGS = 0.5;
/** A top edge this full (of the width a quarter down) is a waistband. */
const WAISTBAND = 0.7;
/**
 * A skirt laid flat flares from a waistband narrower than a quarter down: its top edge is at least FLARED_WAISTBAND
 * full, its width grows by at least SKIRT_WIDENING at every step down to three quarters (straight sides spreading
 * out; a top's shoulders and sleeves stop it growing), and it is at least SKIRT_LENGTH widths long.
 */
const FLARED_WAISTBAND = 0.5;
const SKIRT_WIDENING = 1.1;
const SKIRT_LENGTH = 1.5;
/** A skirt's hem corners are on its widest row within this share of its height from the bottom. */
const SKIRT_HEM = 0.1;
/** A top's hem ends are its sides within this share of its central length above the hem's lowest wide row. */
const HEM_CURVE = 0.1;
/** …and no more than this many half body widths past the body's sides. */
const HEM_SIDE = 0.2;
/**
 * The hem's row reaches at least HEM_EACH_SIDE of the body's width on each side of the centre: a scalloped hem's
 * lowest rows are broken at the scallops, and a tulle hem's faint edge is cut away in them; the run through the centre
 * there began at the centre (a dress's hem corner put at its middle drew its skirt flaring off to one side, #23, #30,
 * #35, #83).
 */
const HEM_EACH_SIDE = 0.2;
/** Height over width 40–90 % down from which a garment is a dress whatever its shape. */
const DRESS_LENGTH = 2.8;
/** A shorter garment is a dress from this length when its skirt flares this much below its waist. */
const FLARED_DRESS_LENGTH = 2.0;
const DRESS_FLARE = 1.42;

export function readSilhouette(mask: Mask): Silhouette {
  const { data, width, height } = mask;
  const rows: (Row | null)[] = [];
  let top = -1;
  let bottom = -1;
  for (let y = 0; y < height; y++) {
    const runs: [number, number][] = [];
    let x = 0;
    while (x < width) {
      while (x < width && data[y * width + x]! < ON) x++;
      if (x >= width) break;
      const start = x;
      while (x < width && data[y * width + x]! >= ON) x++;
      // Gaps of a few pixels (a seam, a shadow) do not split a run.
      const last = runs[runs.length - 1];
      if (last && start - last[1] <= 3) last[1] = x;
      else runs.push([start, x]);
    }
    // Slivers are noise.
    const kept = runs.filter(([a, b]) => b - a >= 3);
    if (kept.length === 0) {
      rows.push(null);
      continue;
    }
    if (top < 0) top = y;
    bottom = y;
    rows.push({ runs: kept, left: kept[0]![0], right: kept[kept.length - 1]![1] });
  }
  return { rows, top, bottom, mask };
}

const width = (r: Row | null): number => (r ? r.right - r.left : 0);
/** Garment pixels in a row (its width less the gaps). */
const fill = (r: Row | null): number => (r ? r.runs.reduce((sum, [a, b]) => sum + b - a, 0) : 0);
const median = (xs: number[]): number => (xs.length ? [...xs].sort((a, b) => a - b)[xs.length >> 1]! : 0);

/** The run of a row that contains x (or the nearest one). */
function runAt(r: Row, x: number): [number, number] {
  let best = r.runs[0]!;
  let bestDistance = Infinity;
  for (const run of r.runs) {
    const d = x < run[0] ? run[0] - x : x >= run[1] ? x - run[1] + 1 : 0;
    if (d < bestDistance) {
      bestDistance = d;
      best = run;
    }
  }
  return best;
}

/** The garment's centre line: the median midpoint of its upper rows (below the neck, above any sleeves' ends). */
function centreOf(s: Silhouette): number {
  return median(band(s, 0.1, 0.3).map((r) => (r.left + r.right) / 2));
}

/** How far down the centre line the garment reaches, and how wide its body is under the arms. */
function centralShape(s: Silhouette): { length: number; width: number } {
  const centre = centreOf(s);
  let last = s.top;
  for (let y = s.top; y <= s.bottom; y++) {
    const r = s.rows[y];
    if (r && r.runs.some(([a, b]) => a <= centre && centre < b)) last = y;
  }
  // The body under the arms: the narrower quarter of the centre line's runs between 30 % and 60 % down (sleeves widen the others).
  const bodyWidths = band(s, 0.3, 0.6)
    .map((r) => {
      const [a, b] = runAt(r, centre);
      return b - a;
    })
    .sort((a, b) => a - b);
  return { length: last - s.top + 1, width: bodyWidths[Math.floor(bodyWidths.length / 4)] ?? 0 };
}

/** Rows between fractions a and b of the garment's height. */
function band(s: Silhouette, a: number, b: number): Row[] {
  const h = s.bottom - s.top + 1;
  const out: Row[] = [];
  for (let y = Math.floor(s.top + a * h); y <= Math.min(s.bottom, Math.floor(s.top + b * h)); y++) {
    const r = s.rows[y];
    if (r) out.push(r);
  }
  return out;
}

/**
 * The category a silhouette looks like, from its shape alone (see ShapeFeatures): legs split below, then long or
 * long and flaring (a dress), then a full top edge (a waistband) or a long shape flaring steadily from a fairly full
 * one (a skirt laid flat), then an open front (a jacket), else a top. The
 * thresholds' calibration on the fixture garments is in bench/RESULTS.md ("Calibration of the cut-out's rules").
 */
export function categoryOf(s: Silhouette): WarpCategory {
  const f = shapeFeatures(s);
  if (f.legSplit >= LEGS) return 'bottom';
  if (f.length >= DRESS_LENGTH || (f.length >= FLARED_DRESS_LENGTH && f.skirtFlare >= DRESS_FLARE)) return 'dress';
  if (f.topFill >= WAISTBAND) return 'bottom';
  if (f.topFill >= FLARED_WAISTBAND && f.widening >= SKIRT_WIDENING && f.length >= SKIRT_LENGTH) return 'bottom';
  if (openFront(s)) return 'outerwear';
  return 'top';
}

/** A jacket laid open: a background gap on the centre line running from the neck down most of the garment. */
function openFront(s: Silhouette): boolean {
  const rows = band(s, 0.2, 0.9);
  const centre = median(band(s, 0.5, 0.9).map((r) => (r.left + r.right) / 2));
  const gapped = rows.filter((r) =>
    r.runs.some(([a, b], k) => k > 0 && r.runs[k - 1]![1] <= centre && a >= centre && a - r.runs[k - 1]![1] > 4),
  ).length;
  return gapped > 0.6 * rows.length;
}

/** The mask's first row from the top at column x (within the garment's rows), or -1. */
function topAt(s: Silhouette, x: number): number {
  const { data, width: w } = s.mask;
  for (let y = s.top; y <= s.bottom; y++) if (data[y * w + x]! >= ON) return y;
  return -1;
}

/**
 * How a top's body lies in its silhouette: its centre line, how far down that line it reaches, the body's sides
 * (x of its left and right edge under the arms) and whether the sleeves hang down beside it.
 */
export interface UpperBody {
  centre: number;
  centralLength: number;
  left: number;
  right: number;
  /** Half the body's width. */
  half: number;
  hanging: boolean;
}

/**
 * The body's sides: the run on the centre line where it is narrowest (sleeves spread flat or hanging may touch the
 * body and widen the run in other rows), between 40 % and 85 % of the way down. Sleeves hanging down against the
 * body (jackets, jumpers) widen every central run down to the hem; near the hem they part from it, and the body is
 * the run between them there. That body is most of the garment's width; a narrow gap (a split hem, a slit between
 * two front panels) is not one.
 */
export function upperBody(s: Silhouette): UpperBody {
  const h = s.bottom - s.top + 1;
  const centre = centreOf(s);
  const { length: centralLength } = centralShape(s);
  const bodyRuns = band(s, (0.4 * centralLength) / h, (0.85 * centralLength) / h)
    .map((r) => runAt(r, centre))
    .sort((a, b) => a[1] - a[0] - (b[1] - b[0]));
  const narrow = bodyRuns.slice(0, Math.max(1, Math.ceil(bodyRuns.length / 3)));
  let left = median(narrow.map((r) => r[0]));
  let right = median(narrow.map((r) => r[1]));
  const apart = hangingSleeveBody(s, centre);
  const apartWidth = apart ? apart[1] - apart[0] : 0;
  // Sleeves hanging against the body down to where they part from it near the hem: at mid-body the central runs
  // are body and sleeves together, wider than the body between the parted sleeves (however many rows the parting
  // takes of the band the narrowest runs are taken from).
  const typical = median(bodyRuns.map((r) => r[1] - r[0]));
  const hanging = apart !== null && apartWidth < 0.85 * typical && apartWidth > HANGING_BODY * typical;
  if (hanging) [left, right] = apart;
  return { centre, centralLength, left, right, half: (right - left) / 2, hanging };
}

/**
 * An armhole's depth below the shoulder seam, in body widths: 0.35–0.43 on the wide set's tops whose armpits show.
 * One seen deeper than ARMHOLE_HIDDEN is a sleeve lying against the body below the real armpit.
 */
const ARMHOLE = 0.41;
const ARMHOLE_HIDDEN = 0.55;

/** How far (in half body widths) a side reaches past the body line where a sleeve is attached. */
const SLEEVE_OUT = 0.18;
/**
 * How far (in half body widths) sleeves cut in one with the body reach out at mid-body, on both sides. Set-in sleeves
 * lying against the body reach 0.3–0.6 there (their own width); kimono sleeves about 1.
 */
const CUT_IN_ONE = 0.85;
/**
 * A sleeve's opening is at least this wide (half-widths over the body's): an arm goes through it. On the wide set's
 * garments real sleeves measure 0.11 (a tee dress's short sleeves) to 0.52; a pinafore's armhole edges 0.06.
 */
const SLEEVE_OPENING = 0.085;

/** An armpit, image side: going up from mid-body, where the side leaves the body line outwards (a sleeve starts). */
export function armpitOf(s: Silhouette, body: UpperBody, side: 'left' | 'right'): (Point & { cutInOne?: true }) | null {
  const { centre, centralLength } = body;
  const line = side === 'left' ? body.left : body.right;
  // A sleeve hanging apart from the body at mid-body: going up, the armpit is where the gap between them closes.
  const apartAt = (y: number): boolean => {
    const r = s.rows[y];
    if (!r) return false;
    const central = runAt(r, centre);
    return r.runs.some((run) => (side === 'left' ? run[1] <= central[0] : run[0] >= central[1]));
  };
  const middle = Math.floor(s.top + 0.5 * centralLength);
  if (apartAt(middle)) {
    let y = middle;
    while (y > s.top && apartAt(y - 1)) y--;
    const central = runAt(s.rows[y]!, centre);
    return { x: side === 'left' ? central[0] : central[1], y };
  }
  const outwardsAt = (y: number): { edge: number; outwards: number } | null => {
    const r = s.rows[y];
    if (!r) return null;
    const [runLeft, runRight] = runAt(r, centre);
    const edge = side === 'left' ? runLeft : runRight;
    return { edge, outwards: side === 'left' ? line - edge : edge - line };
  };
  // Sleeves cut in one with the body (kimono, batwing) reach below mid-body, on both sides, about as far out as the
  // body is wide: going down, the armpit is where the side comes back to the body line. (A set-in sleeve lying against
  // the body reaches out only its own width there, and its armpit is above.)
  const middleRun = s.rows[middle] ? runAt(s.rows[middle]!, centre) : null;
  if (middleRun && Math.min(body.left - middleRun[0], middleRun[1] - body.right) >= CUT_IN_ONE * body.half) {
    // No lower than the band upperBody measures the body's sides in.
    for (let y = middle + 1; y < s.top + 0.85 * centralLength; y++) {
      const at = outwardsAt(y);
      if (!at) break;
      if (at.outwards <= SLEEVE_OUT * body.half) return { x: at.edge, y, cutInOne: true };
    }
  }
  let last: Point | null = null;
  for (let y = middle; y >= s.top; y--) {
    const at = outwardsAt(y);
    if (!at) break;
    if (at.outwards > SLEEVE_OUT * body.half) return last ?? { x: line, y };
    last = { x: at.edge, y };
  }
  return null;
}

/** A run of a row this narrow (in half body widths) at the top of a sleeveless garment is a strap, not its body. */
const STRAP_RUN = 0.2;

/** The neckline: lowest at the centre between the shoulders; its image-left and image-right ends where it rises to the top. */
export function necklineOf(s: Silhouette, body: UpperBody): { front: Point; imageLeft: Point; imageRight: Point } {
  const { centre } = body;
  const front = { x: centre, y: Math.max(s.top, topAt(s, Math.round(centre))) };
  const side = (dir: -1 | 1): Point => {
    let best = { x: centre, y: front.y };
    for (let x = centre; Math.abs(x - centre) < 0.7 * body.half; x += dir) {
      const y = topAt(s, Math.round(x));
      if (y >= 0 && y <= best.y) best = { x, y };
    }
    return best;
  };
  return { front, imageLeft: side(-1), imageRight: side(1) };
}

/**
 * A sleeve's end, image side: the garment outside the body's side line, connected (on a 2-pixel grid) to the
 * part of it above the armpit (a sleeve hanging beside the body is reached that way; a flared hem or a side slit
 * below is not); the end is the part farthest from the shoulder, with half the width of its opening.
 */
export function sleeveEndOf(
  s: Silhouette,
  body: UpperBody,
  side: 'left' | 'right',
  from: Point,
  pit: Point,
): { end: Point; half: number } | null {
  const { data, width: w } = s.mask;
  const step = 2;
  const gw = Math.ceil(w / step);
  const outsideAt = (gx: number, gy: number): boolean => {
    const x = gx * step;
    const y = gy * step;
    if (x < 0 || x >= w || y < s.top || y > s.bottom || data[y * w + x]! < ON) return false;
    if (side === 'left' ? x >= body.left - 2 : x <= body.right + 2) return false;
    // Below the armpit, the body's own run (a flared hem) is not sleeve; a run apart from it (a hanging sleeve) is.
    // Sleeves hanging against the body share its run: there the body's side line alone divides them.
    if (y > pit.y && !body.hanging) {
      const r = s.rows[y];
      if (r) {
        const [a, b] = runAt(r, body.centre);
        if (x >= a && x < b) return false;
      }
    }
    return true;
  };
  const seeds: number[] = [];
  for (let gy = Math.ceil(s.top / step); gy * step <= pit.y; gy++)
    for (let gx = 0; gx < gw; gx++) if (outsideAt(gx, gy)) seeds.push(gy * gw + gx);
  const reached = flood4(gw, Math.ceil(s.mask.height / step) + 1, seeds, outsideAt);
  let far = 0;
  const pts: Point[] = [];
  for (const k of reached) {
    const x = (k % gw) * step;
    const y = Math.floor(k / gw) * step;
    const d = Math.hypot(x - from.x, y - from.y);
    pts.push({ x, y });
    if (d > far) far = d;
  }
  if (pts.length < 20) return null;
  const tip = pts.filter((p) => Math.hypot(p.x - from.x, p.y - from.y) > 0.85 * far);
  const cx = tip.reduce((a, p) => a + p.x, 0) / tip.length;
  const cy = tip.reduce((a, p) => a + p.y, 0) / tip.length;
  const dir = { x: (cx - from.x) / far, y: (cy - from.y) / far };
  const across = tip.map((p) => (p.x - cx) * -dir.y + (p.y - cy) * dir.x);
  const half = (Math.max(...across) - Math.min(...across)) / 2;
  return { end: { x: cx, y: cy }, half: Math.max(half, 0.05 * body.half) };
}

/**
 * The hem: the lowest row that still spans most of the body, and that row's ends; a top's or jacket's (`rounded`)
 * at its sides just above a rounded hem.
 */
export function hemOf(s: Silhouette, body: UpperBody, rounded = true): { y: number; left: number; right: number } {
  let y = s.top + body.centralLength - 1;
  const centralRun = (row: number): [number, number] | null => {
    const r = s.rows[row];
    return r ? runAt(r, body.centre) : null;
  };
  const wide = body.right - body.left;
  while (y > s.top) {
    const run = centralRun(y);
    if (run && run[1] - run[0] >= 0.6 * wide && Math.min(body.centre - run[0], run[1] - body.centre) >= HEM_EACH_SIDE * wide) break;
    y--;
  }
  let [left, right] = centralRun(y) ?? [body.left, body.right];
  // A rounded hem (a tee's, a shirt's tails) curves up at the sides: its lowest wide row is narrower than the
  // garment, whose sides end a little higher. The hem's ends are those sides, so the hem is placed as wide as the
  // garment is there (not stretched from its middle out to the body's width). A sleeve hanging against the body near
  // the hem is not a side: no end lies more than HEM_SIDE past the body's sides. Not a dress's: placed that much
  // narrower, an asymmetric draped dress passed the checks with its flap hanging off the arm (measured, not kept).
  const reach = HEM_SIDE * body.half;
  if (rounded) [left, right] = [Math.max(left, body.left - reach), Math.min(right, body.right + reach)];
  for (let row = y - 1; rounded && row >= y - HEM_CURVE * body.centralLength && row > s.top; row--) {
    const run = centralRun(row);
    if (!run) continue;
    left = Math.min(left, Math.max(run[0], body.left - reach));
    right = Math.max(right, Math.min(run[1], body.right + reach));
  }
  return { y, left, right };
}

/** The highest point of the top edge on one side of the centre (a strap's top), image direction `dir`. */
function strapTopOf(s: Silhouette, body: UpperBody, dir: -1 | 1): Point {
  const { centre } = body;
  let best = { x: centre, y: Infinity };
  for (let x = centre + dir * 0.15 * body.half; Math.abs(x - centre) < 1.2 * body.half; x += dir) {
    const y = topAt(s, Math.round(x));
    if (y >= 0 && y < best.y) best = { x, y };
  }
  return best;
}

/** Landmarks of a top, dress or jacket laid flat: the steps above, put together. */
export function upperLandmarks(s: Silhouette, category: WarpCategory): GarmentLandmarks {
  const h = s.bottom - s.top + 1;
  const body = upperBody(s);
  const pitL = armpitOf(s, body, 'left');
  const pitR = armpitOf(s, body, 'right');
  const sleeved = pitL !== null && pitR !== null && pitL.y > s.top + 0.08 * h && pitR.y > s.top + 0.08 * h;

  // Shoulders: the top of the silhouette straight above the body's sides (sleeved) or its top corners (straps).
  // A fitted body is narrower at the waist than at the chest: the shoulder seams are at least as wide as the armpits.
  // A strap standing straight above the body's side (a cami's, sewn at the cup's outer corners) is no shoulder: the
  // top there is where the strap widens into the body.
  const shoulder = (x: number): Point => {
    const column = Math.round(x);
    let y = Math.max(s.top, topAt(s, column));
    for (let row = y; !sleeved && row < s.top + 0.5 * h; row++) {
      const r = s.rows[row];
      if (!r) continue;
      const [a, b] = runAt(r, column);
      if (b - a >= STRAP_RUN * body.half) {
        y = row;
        break;
      }
    }
    return { x, y };
  };
  const imageLeftShoulder = shoulder(Math.min(body.left, sleeved ? pitL.x : body.left) + 0.04 * body.half);
  const imageRightShoulder = shoulder(Math.max(body.right, sleeved ? pitR.x : body.right) - 0.04 * body.half);
  const neck = necklineOf(s, body);
  const sleeveImageLeft = sleeved ? sleeveEndOf(s, body, 'left', imageLeftShoulder, pitL) : null;
  const sleeveImageRight = sleeved ? sleeveEndOf(s, body, 'right', imageRightShoulder, pitR) : null;
  const hem = hemOf(s, body, category !== 'dress');

  // Strapless (a bandeau, a strapless dress): without sleeves or straps, a straight top edge across the chest. Its
  // corners are the armpits; the shoulders it does not reach are put where they would be on a body that wide.
  const edge = s.rows[Math.min(s.bottom, s.top + Math.round(0.02 * h))];
  const straightEdge = edge && neck.front.y - s.top < STRAPLESS.dip * h && fill(edge) >= STRAPLESS.fill * (body.right - body.left);
  const bodice = edge ? Math.max(...band(s, 0.04, 0.12).map(width)) / Math.max(1, width(edge)) : 0;
  if (!sleeved && straightEdge && bodice >= STRAPLESS.bodice) {
    const unitG = (edge.right - edge.left) / STRAPLESS.chest;
    const shoulderY = s.top - STRAPLESS.depth * unitG;
    const centre = (edge.left + edge.right) / 2;
    const out: GarmentLandmarks = {
      leftShoulder: { x: centre + unitG / 2, y: shoulderY },
      rightShoulder: { x: centre - unitG / 2, y: shoulderY },
      leftArmpit: { x: edge.right, y: s.top },
      rightArmpit: { x: edge.left, y: s.top },
      leftHem: { x: hem.right, y: hem.y },
      rightHem: { x: hem.left, y: hem.y },
    };
    return category === 'dress' ? { ...out, ...waistOf(s, h) } : out;
  }

  // Straps (a cami, a slip dress): without sleeves, the top edge above the body's sides is the cup's, well below
  // the straps' tops. The straps lie on the shoulders, the cup's corners near the armpits, and there is no neckline
  // to put at the neck.
  const strapL = strapTopOf(s, body, -1);
  const strapR = strapTopOf(s, body, 1);
  const cupTop = Math.min(imageLeftShoulder.y, imageRightShoulder.y);
  if (!sleeved && cupTop - Math.max(strapL.y, strapR.y) > STRAPS * h && strapR.x - strapL.x > body.half) {
    const out: GarmentLandmarks = {
      straps: true,
      leftShoulder: strapR,
      rightShoulder: strapL,
      leftArmpit: imageRightShoulder,
      rightArmpit: imageLeftShoulder,
      leftHem: { x: hem.right, y: hem.y },
      rightHem: { x: hem.left, y: hem.y },
    };
    return category === 'dress' ? { ...out, ...waistOf(s, h) } : out;
  }

  // Armholes cut in deep between a neck opening and the sides (a tank top, a basketball jersey): the top edge above
  // the body's sides is the armhole's bottom, the armpit, far below the straps. Such a top does not reach the
  // shoulder joints; they are put where a body that wide under the arms has them (as for a strapless top), and the
  // straps fall between them and the neck. A halter's single band round the neck (its tops close together) is not
  // one: drawn this way its band stood beside the head.
  if (!sleeved && cupTop - Math.max(strapL.y, strapR.y) > STRAPS * h && strapR.x - strapL.x > TANK_NECK * body.half) {
    const unitG = (body.right - body.left) / CUT_IN_CHEST;
    const shoulderY = cupTop - STRAPLESS.depth * unitG;
    const out: GarmentLandmarks = {
      hangsLoose: true,
      neckLeft: neck.imageRight,
      neckRight: neck.imageLeft,
      neckFront: neck.front,
      leftShoulder: { x: body.centre + unitG / 2, y: shoulderY },
      rightShoulder: { x: body.centre - unitG / 2, y: shoulderY },
      leftArmpit: imageRightShoulder,
      rightArmpit: imageLeftShoulder,
      leftHem: { x: hem.right, y: hem.y },
      rightHem: { x: hem.left, y: hem.y },
    };
    return category === 'dress' ? { ...out, ...waistOf(s, h) } : out;
  }

  const out: GarmentLandmarks = {
    neckLeft: neck.imageRight,
    neckRight: neck.imageLeft,
    neckFront: neck.front,
    leftShoulder: imageRightShoulder,
    rightShoulder: imageLeftShoulder,
    leftHem: { x: hem.right, y: hem.y },
    rightHem: { x: hem.left, y: hem.y },
  };
  if (pitL && pitR) {
    out.leftArmpit = sleeved ? pitR : { x: body.right, y: imageRightShoulder.y + 0.2 * h };
    out.rightArmpit = sleeved ? pitL : { x: body.left, y: imageLeftShoulder.y + 0.2 * h };
  } else {
    // No armhole to be seen (a boxy knit vest): the sides are pinned where an armhole would end, a quarter of the
    // way from the shoulders to the hem, or the spline would let them flap out.
    const y = Math.round(
      Math.max(imageLeftShoulder.y, imageRightShoulder.y) + BOXY_ARMPIT * (hem.y - Math.max(imageLeftShoulder.y, imageRightShoulder.y)),
    );
    const run = s.rows[y] ? runAt(s.rows[y]!, body.centre) : null;
    if (run) {
      out.leftArmpit = { x: run[1], y };
      out.rightArmpit = { x: run[0], y };
    }
  }
  // An opening too narrow for an arm is no sleeve: it is the edge of an armhole cut wide at the shoulder (a
  // pinafore's), and laid along the arm it stood off the shoulder like a pad.
  const admitsArm = (sleeve: { half: number }): boolean => sleeve.half >= SLEEVE_OPENING * body.half;
  if (sleeveImageLeft && sleeveImageRight && admitsArm(sleeveImageLeft) && admitsArm(sleeveImageRight)) {
    out.rightSleeveEnd = sleeveImageLeft.end;
    out.leftSleeveEnd = sleeveImageRight.end;
    out.sleeveHalfWidth = (sleeveImageLeft.half + sleeveImageRight.half) / 2;
    if (body.hanging) out.sleevesHang = true;
    // Sleeves lying against the body hide the armpits: the side leaves the body line only below them (a short
    // sleeve's hem, a long sleeve parting from the body near the hem). Both are put where an armhole usually ends.
    // A sleeve cut in one with the body has its armpit deep, and it shows.
    const shoulderY = Math.min(imageLeftShoulder.y, imageRightShoulder.y);
    const deepest = shoulderY + ARMHOLE_HIDDEN * (body.right - body.left);
    if (sleeved && !pitL.cutInOne && !pitR.cutInOne && Math.max(pitL.y, pitR.y) > deepest) {
      const y = shoulderY + ARMHOLE * (body.right - body.left);
      out.leftArmpit = { x: pitR.x, y };
      out.rightArmpit = { x: pitL.x, y };
    }
  }
  // A top with no sleeves (none found, or openings too narrow for an arm) and shoulders spanning the body.
  const shoulders = band(s, SPANNED.from, SPANNED.to);
  const spanned = shoulders.length > 0 && Math.min(...shoulders.map(fill)) >= SPANNED.fill * (body.right - body.left);
  if (category === 'top' && !out.leftSleeveEnd && spanned) out.layered = true;
  return category === 'dress' ? { ...out, ...waistOf(s, h) } : out;
}

/** A dress's waist: the narrowest row between 30 % and 50 % down. */
function waistOf(s: Silhouette, h: number): GarmentLandmarks {
  let waistY = Math.floor(s.top + 0.3 * h);
  for (let y = waistY; y < s.top + 0.5 * h; y++) if (width(s.rows[y] ?? null) < width(s.rows[waistY] ?? null)) waistY = y;
  const r = s.rows[waistY];
  return r ? { leftWaist: { x: r.right, y: waistY }, rightWaist: { x: r.left, y: waistY } } : {};
}

/**
 * The body's sides where sleeves hang apart from it near the hem: rows in the lowest 35 % with garment on both
 * sides of the centre run, the run between them wider than either sleeve. Null when there are too few.
 */
function hangingSleeveBody(s: Silhouette, centre: number): [number, number] | null {
  const parted = band(s, 0.65, 1).flatMap((r) => {
    const k = r.runs.findIndex(([a, b]) => a <= centre && centre < b);
    if (k <= 0 || k >= r.runs.length - 1) return [];
    const body = r.runs[k]!;
    const left = r.runs[k - 1]!;
    const right = r.runs[k + 1]!;
    const wide = body[1] - body[0];
    return wide > left[1] - left[0] && wide > right[1] - right[0] ? [body] : [];
  });
  if (parted.length >= 0.03 * (s.bottom - s.top + 1)) return [median(parted.map((r) => r[0])), median(parted.map((r) => r[1]))];
  // Sleeves hanging below a short body (a cropped puffer): below the hem, only the two cuffs; their inner edges
  // are about where the body's sides are.
  const cuffs = band(s, 0.75, 1).flatMap((r) => {
    if (r.runs.some(([a, b]) => a <= centre && centre < b)) return [];
    const left = r.runs.filter(([, b]) => b <= centre).at(-1);
    const right = r.runs.find(([a]) => a > centre);
    return left && right ? [[left[1], right[0]] as [number, number]] : [];
  });
  if (cuffs.length < 0.03 * (s.bottom - s.top + 1)) return null;
  return [median(cuffs.map((r) => r[0])), median(cuffs.map((r) => r[1]))];
}

/** Landmarks of trousers or a skirt laid flat. */
export function lowerLandmarks(s: Silhouette): GarmentLandmarks {
  const h = s.bottom - s.top + 1;
  const waistRow = s.rows[Math.min(s.bottom, s.top + Math.round(0.02 * h))]!;
  const out: GarmentLandmarks = {
    waistbandLeft: { x: waistRow.right, y: s.top },
    waistbandRight: { x: waistRow.left, y: s.top },
  };
  // The crotch: the top of the gap between the legs, followed up the centre column (and its neighbours) from the hem.
  const centreX = Math.round((waistRow.left + waistRow.right) / 2);
  let crotchY = -1;
  const { data, width: w } = s.mask;
  for (let x = centreX - 6; x <= centreX + 6; x++) {
    if (x < 0 || x >= w || data[s.bottom * w + x]! >= ON) continue;
    let y = s.bottom;
    while (y > s.top && data[(y - 1) * w + x]! < ON) y--;
    if (crotchY < 0 || y < crotchY) crotchY = y;
  }
  const centre = (waistRow.left + waistRow.right) / 2;
  // Legs part below a crotch: some row under it is split into two. A hem that is only higher on the centre line
  // (an asymmetric skirt) has no crotch.
  let parted = false;
  for (let y = crotchY + 1; y <= s.bottom && crotchY >= 0 && !parted; y++) parted = (s.rows[y]?.runs.length ?? 0) >= 2;
  if (parted && crotchY > s.top + 0.1 * h && crotchY < s.bottom - 0.1 * h) {
    out.crotch = { x: centre, y: crotchY };
    // The legs at the hem: the widest two-run row among the lowest 3 % (the very last rows are anti-aliased scraps).
    let y = -1;
    let widest = 0;
    for (let yy = s.bottom; yy > Math.max(crotchY, s.bottom - 0.03 * h); yy--) {
      const r = s.rows[yy];
      if (!r || r.runs.length < 2) continue;
      const spread = r.runs[0]![1] - r.runs[0]![0] + (r.runs[r.runs.length - 1]![1] - r.runs[r.runs.length - 1]![0]);
      if (spread > widest) {
        widest = spread;
        y = yy;
      }
    }
    if (y < 0) {
      y = s.bottom;
      while (y > crotchY && (s.rows[y]?.runs.length ?? 0) < 2) y--;
    }
    const runs = s.rows[y]!.runs;
    const imageLeftLeg = runs[0]!;
    const imageRightLeg = runs[runs.length - 1]!;
    out.rightLegHemOuter = { x: imageLeftLeg[0], y };
    out.rightLegHemInner = { x: imageLeftLeg[1], y };
    out.leftLegHemOuter = { x: imageRightLeg[1], y };
    out.leftLegHemInner = { x: imageRightLeg[0], y };
  } else {
    // A skirt: each half of the hem stands for a leg. A flared skirt's hem curves down in the middle, so its last row
    // is a sliver: the hem's corners are on the widest row of its lowest rows.
    let y = s.bottom;
    for (let yy = s.bottom; yy >= s.bottom - SKIRT_HEM * h; yy--) if (width(s.rows[yy] ?? null) > width(s.rows[y] ?? null)) y = yy;
    const hem = s.rows[y]!;
    const mid = (hem.left + hem.right) / 2;
    out.rightLegHemOuter = { x: hem.left, y };
    out.rightLegHemInner = { x: mid - 1, y };
    out.leftLegHemOuter = { x: hem.right, y };
    out.leftLegHemInner = { x: mid + 1, y };
  }
  return out;
}

/** Measures of a silhouette's shape that tell garments apart (all relative, so any photo size gives the same). */
export interface ShapeFeatures {
  /** Garment pixels in the row 3 % down over the width 25 % down: near 1 for a waistband, low for a neckline, straps or shoulders. */
  topFill: number;
  /** Share of rows 80–97 % down split on the centre line into two pieces wider than the gap between them: legs. */
  legSplit: number;
  /** Height over the median width 40–90 % down: long for dresses and trousers, short for tops (sleeves widen it). */
  length: number;
  /** Width 90 % down over the narrowest width 30–60 % down: a skirt flaring below a waist. */
  skirtFlare: number;
  /** The least growth in width from each of the rows 3, 10, 25 and 50 % down to the next (10, 25, 50, 75 %). */
  widening: number;
}

/** The rows (share of the way down) whose widths `widening` compares. */
const STEPS = [0.03, 0.1, 0.25, 0.5, 0.75];

export function shapeFeatures(s: Silhouette): ShapeFeatures {
  const h = s.bottom - s.top + 1;
  const rowAt = (t: number): Row | null => s.rows[Math.min(s.bottom, Math.floor(s.top + t * h))] ?? null;
  const centre = centreOf(s);
  const legs = band(s, 0.8, 0.97);
  const split = legs.filter((r) =>
    r.runs.some(([a, b], k) => {
      if (k === 0) return false;
      const [pa, pb] = r.runs[k - 1]!;
      return pb <= centre && a > centre && a - pb < Math.min(pb - pa, b - a);
    }),
  ).length;
  return {
    topFill: fill(rowAt(0.03)) / Math.max(1, width(rowAt(0.25))),
    legSplit: split / Math.max(1, legs.length),
    length: h / Math.max(1, median(band(s, 0.4, 0.9).map(width))),
    skirtFlare: width(rowAt(0.9)) / Math.max(1, Math.min(...band(s, 0.3, 0.6).map(width))),
    widening: Math.min(...STEPS.slice(1).map((t, k) => width(rowAt(t)) / Math.max(1, width(rowAt(STEPS[k]!))))),
  };
}
