/**
 * The inside back of a flat or ghost-mannequin top: through the neck
 * opening the photo shows the back's inner side (a band, a lining, the
 * brand's label) above the front neckline. Drawn on a person it lands on
 * the neck and chest, label and all; what shows there should be the
 * person's neck. A jacket's is cut away from the garment: the customer's
 * own top shows in its opening, as it would. A top's or dress's is marked
 * (insideBackMask) and drawn only where the customer shows no bare skin
 * (compose.ts): where their neck is bare it shows, and where their old
 * top was, the inside back stays rather than the old top.
 *
 * The front neckline is the edge that crosses the opening from one neck
 * point to the other (where the neckline meets the top of the silhouette),
 * below the top edge: the best path by dynamic programming, column by
 * column, through the pixels where the colour changes most from the row
 * above to the row below, rising or falling a pixel or two per column, and
 * of two such edges the lower (a label's edge or the back band's lies
 * above the front's). It is taken only when it is an edge (its mean change
 * is well above the opening's usual), when it dips below the neck points
 * by at least 0.3 of the opening's width somewhere (a front neckline drops
 * about half a neck's width below them; the back one little: measured from
 * the back's own dip at the centre, the paired tee's 0.38 was read as
 * 0.28 and its inside back drawn as a dark hole), and when it is deepest
 * near the middle, as a neckline is. Anything less
 * (a plain opening whose inside and front look alike, a ruffled collar, a
 * label's edge just below the top) is left alone. A wide label much
 * stronger than the neckline may be taken for it: then the label is cut
 * away and the band below it stays.
 *
 * A garment worn over a top (a knit vest) shows that top through its
 * opening. A knit's ribbed band on an inside back of the same colour shows
 * no such edge; its front is then taken to be a round neck's
 * (usualNeckline), and what lies above it is never drawn (compose.ts).
 */
import type { RawImage } from '../../../vision/types.ts';
import type { GarmentLandmarks } from '../types.ts';

/**
 * The search, in neck-opening widths: the neckline lies at most DEEPEST below the neck points and dips at least
 * DIP below them; the path starts and ends within END of the top edge. The opening is at least MIN_WIDTH pixels
 * wide.
 */
const SEARCH = { deepest: 0.8, dip: 0.3, end: 0.15, minWidth: 12 } as const;
/** A path rises or falls at most STEP pixels per column, and each pixel of it costs BEND in edge strength. */
const STEP = 2;
const BEND = 4;
/** Each pixel of depth below the top edge adds this to a path pixel's score: of two edges alike, the lower is the front's. */
const DEPTH = 0.25;
/** The path is an edge when its mean change is at least EDGE times the opening's median and at least MIN_EDGE. */
const EDGE = 2.5;
const MIN_EDGE = 20;
/** Its deepest point lies in the middle MIDDLE of the opening. */
const MIDDLE = 0.6;
/**
 * A front neckline not seen is taken to dip this share of the opening's width below the neck points (a round neck
 * drops about half its width: the Snoopy knit vest's ribbed band, by eye, 0.47).
 */
const USUAL_DROP = 0.45;
/**
 * What the opening shows above that neckline is the inside back when its mean colour lies this near the garment's
 * (RGB distance): the cream knit vest's 13; the white collar in a grey pinafore's opening, 213.
 */
const SAME_COLOUR = 40;

/** The garment's RGBA pixels, straight alpha (a cut-out's image). */
type Rgba = Pick<RawImage, 'data' | 'width' | 'height'>;

/** The front neckline found across the opening: per column from x0, the row of the edge. */
export interface Neckline {
  x0: number;
  rows: number[];
}

/**
 * The front neckline across a top's neck opening (see above), or null when none is found clearly. `landmarks` are
 * the cut-out's, in its pixels.
 */
export function frontNeckline(image: Rgba, landmarks: GarmentLandmarks): Neckline | null {
  const { data, width, height } = image;
  const { neckLeft, neckRight } = landmarks;
  if (!neckLeft || !neckRight) return null;
  const xa = Math.ceil(Math.min(neckLeft.x, neckRight.x)) + 1;
  const xb = Math.floor(Math.max(neckLeft.x, neckRight.x)) - 1;
  const opening = xb - xa + 1;
  if (opening < SEARCH.minWidth || xa < 0 || xb >= width) return null;
  const solid = (x: number, y: number): boolean => data[(y * width + x) * 4 + 3]! >= 128;
  // The top edge per column.
  const top: number[] = [];
  for (let x = xa; x <= xb; x++) {
    let y = 0;
    while (y < height && !solid(x, y)) y++;
    top.push(y);
  }
  const neckY = Math.max(neckLeft.y, neckRight.y);
  const bottom = Math.min(height - 2, Math.round(neckY + SEARCH.deepest * opening));
  const rows = bottom + 1;
  // How much the colour changes from the row above to the row below, on the garment only.
  const change = new Float32Array(opening * rows);
  const samples: number[] = [];
  for (let k = 0; k < opening; k++) {
    const x = xa + k;
    for (let y = top[k]! + 1; y <= bottom; y++) {
      if (!solid(x, y - 1) || !solid(x, y + 1)) continue;
      const above = ((y - 1) * width + x) * 4;
      const below = ((y + 1) * width + x) * 4;
      let d = 0;
      for (let c = 0; c < 3; c++) d += Math.abs(data[below + c]! - data[above + c]!);
      change[k * rows + y] = d / 3;
      samples.push(d / 3);
    }
  }
  if (samples.length === 0) return null;
  samples.sort((a, b) => a - b);
  const usual = samples[samples.length >> 1]!;

  // Dynamic programming over columns: the best path's total (change less bends) ending at each row.
  const none = -Infinity;
  const endReach = Math.max(2, Math.round(SEARCH.end * opening));
  let score = new Float64Array(rows).fill(none);
  const from = new Int16Array(opening * rows).fill(-1);
  for (let y = top[0]!; y <= Math.min(bottom, top[0]! + endReach); y++) score[y] = change[y]!;
  for (let k = 1; k < opening; k++) {
    const next = new Float64Array(rows).fill(none);
    for (let y = top[k]! + 1; y <= bottom; y++) {
      let best = none;
      let arg = -1;
      for (let dy = -STEP; dy <= STEP; dy++) {
        const p = y + dy;
        if (p < 0 || p >= rows || score[p] === none) continue;
        const s = score[p]! - BEND * Math.abs(dy);
        if (s > best) {
          best = s;
          arg = p;
        }
      }
      if (arg < 0) continue;
      next[y] = best + change[k * rows + y]! + DEPTH * (y - top[k]!);
      from[k * rows + y] = arg;
    }
    score = next;
  }
  let end = -1;
  const last = opening - 1;
  for (let y = top[last]!; y <= Math.min(bottom, top[last]! + endReach); y++)
    if (score[y] !== none && (end < 0 || score[y]! > score[end]!)) end = y;
  if (end < 0) return null;
  const path = new Array<number>(opening);
  path[last] = end;
  for (let k = last; k > 0; k--) path[k - 1] = from[k * rows + path[k]!]!;

  // Taken only when it is an edge, dips well below the neck points, and is deepest near the middle.
  let sum = 0;
  let deepest = 0;
  let deepestAt = 0;
  for (let k = 0; k < opening; k++) {
    sum += change[k * rows + path[k]!]!;
    const dip = path[k]! - neckY;
    if (dip > deepest) [deepest, deepestAt] = [dip, k];
  }
  const mean = sum / opening;
  if (mean < MIN_EDGE || mean < EDGE * usual) return null;
  if (deepest < SEARCH.dip * opening) return null;
  if (Math.abs(deepestAt / last - 0.5) > MIDDLE / 2) return null;
  return { x0: xa, rows: path };
}

/**
 * A round neck's front where none is seen (a knit's ribbed band on an inside back of the same colour): half an ellipse
 * from one neck point to the other, dipping USUAL_DROP of the opening's width at the middle. Null when what the
 * opening shows above it is not the garment's own colour (a white collar sewn into a grey pinafore's opening).
 */
export function usualNeckline(image: Rgba, landmarks: GarmentLandmarks): Neckline | null {
  const { neckLeft, neckRight } = landmarks;
  if (!neckLeft || !neckRight) return null;
  const xa = Math.ceil(Math.min(neckLeft.x, neckRight.x)) + 1;
  const xb = Math.floor(Math.max(neckLeft.x, neckRight.x)) - 1;
  if (xb - xa + 1 < SEARCH.minWidth) return null;
  const centre = (neckLeft.x + neckRight.x) / 2;
  const half = Math.abs(neckLeft.x - neckRight.x) / 2;
  const neckY = Math.max(neckLeft.y, neckRight.y);
  const rows: number[] = [];
  for (let x = xa; x <= xb; x++)
    rows.push(Math.round(neckY + USUAL_DROP * 2 * half * Math.sqrt(Math.max(0, 1 - ((x - centre) / half) ** 2))));
  // The opening's garment pixels above the neckline, their mean colour, against the garment's own (per channel, the
  // median of its solid pixels).
  const { data, width, height } = image;
  const inside = [0, 0, 0, 0];
  for (const [k, row] of rows.entries()) {
    for (let y = 0; y < Math.min(height, row); y++) {
      const j = (y * width + xa + k) * 4;
      if (data[j + 3]! < 128) continue;
      for (let c = 0; c < 3; c++) inside[c]! += data[j + c]!;
      inside[3]!++;
    }
  }
  if (inside[3] === 0) return null;
  const own = medianColour(image);
  const distance = Math.hypot(...[0, 1, 2].map((c) => inside[c]! / inside[3]! - own[c]!));
  return distance <= SAME_COLOUR ? { x0: xa, rows } : null;
}

/** Per channel, the median of a garment's solid pixels (alpha ≥ 128). */
function medianColour(image: Rgba): [number, number, number] {
  const { data } = image;
  const counts = [new Uint32Array(256), new Uint32Array(256), new Uint32Array(256)];
  let n = 0;
  for (let j = 0; j < data.length; j += 4) {
    if (data[j + 3]! < 128) continue;
    for (let c = 0; c < 3; c++) counts[c]![data[j + c]!]!++;
    n++;
  }
  return counts.map((histogram) => {
    let seen = 0;
    for (let v = 0; v < 256; v++) if ((seen += histogram[v]!) > n / 2) return v;
    return 255;
  }) as [number, number, number];
}

/** 1 per garment pixel (alpha above 0) above a front neckline, inside the opening: the inside back. */
export function insideBackMask(image: Rgba, neckline: Neckline): Uint8Array {
  const { data, width, height } = image;
  const mask = new Uint8Array(width * height);
  for (const [k, row] of neckline.rows.entries()) {
    const x = neckline.x0 + k;
    for (let y = 0; y < row; y++) if (data[(y * width + x) * 4 + 3]! > 0) mask[y * width + x] = 1;
  }
  return mask;
}

/** The garment's pixels above a front neckline, inside the opening, made transparent; how many were. */
export function cutInsideBack(image: Rgba, neckline: Neckline): number {
  const mask = insideBackMask(image, neckline);
  let cut = 0;
  for (let i = 0; i < mask.length; i++) {
    if (!mask[i]) continue;
    image.data[i * 4 + 3] = 0;
    cut++;
  }
  return cut;
}
