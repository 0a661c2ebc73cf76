/**
 * One garment matte from two: the learned map (U²-Netp, learned.ts) decides
 * which pixels are garment; the classical matte (alpha.ts) adds what the
 * learned map leaves out inside the garment, and keeps the edge where both
 * agree.
 *
 * - Garment: the learned map at half, plus classical garment pixels inside
 *   a closing of it (notches, a lace trim), plus holes in it that the
 *   background cannot reach: small ones always (a print the model doubted),
 *   large ones when the classical matte sees garment there (a star
 *   intarsia), never a large hole that looks like the backdrop (the gap
 *   between a sleeve and the body).
 * - Specks under MIN_COMPONENT of the largest piece are dropped.
 * - Edge pixels take the classical alpha where the two mattes agree on
 *   their side of the edge, the learned probability where they do not.
 */
import type { Mask, RawImage } from '../../../vision/types.ts';
import { boxMean, components, squareFilter } from '../../../kernel/raster.ts';
import { summarise, type GarmentMatte } from './alpha.ts';

/** Closing radius, as a share of the garment photo's longer side. */
const CLOSING = 0.012;
/** Enclosed holes up to this share of the garment's area are garment whatever they look like. */
const SMALL_HOLE = 0.02;
/** Pieces smaller than this share of the largest are specks. */
const MIN_COMPONENT = 0.08;
/**
 * A slit of backdrop between a sleeve and the body is opened again (openSlits) when it is at most `width` of the
 * garment's width wide (the floral top's: up to 0.03) and reaches down `length` of its height, and its colour lies
 * `contrast` (RGB distance) from the mean of the `side` pixels of garment on either side.
 */
const SLIT = { width: 0.05, length: 0.1, side: 4, contrast: 60 } as const;
/** Below the crotch, a run of backdrop inside a trouser leg up to this share of the garment's width is a lost stripe. */
const STRIPE = 0.1;
/** Stripes are looked for from this share of the garment's height below its top (its waistband's top edge). */
const WAISTBAND_EDGE = 0.04;
/** A closed stripe's soft edge, this many pixels either side, is made opaque with it. */
const EDGE = 2;
/** Trimming the learned outline to the classical one (trimToClassical): pixels deep, stretch's radius, agreement. */
const TRIM = { depth: 2, stretch: 6, agree: 0.3 } as const;

export function combineMattes(learned: Mask, classical: GarmentMatte | null): GarmentMatte | null {
  const { width, height } = learned;
  const n = width * height;
  const garment = new Uint8Array(n);
  let area = 0;
  for (let i = 0; i < n; i++) if (learned.data[i]! >= 128) ((garment[i] = 1), area++);
  if (area === 0) return null;
  const classicalAt = classical ? classical.alpha.data : null;

  if (classicalAt) {
    const radius = Math.max(2, Math.round(CLOSING * Math.max(width, height)));
    const closed = squareFilter(squareFilter(garment, width, height, radius, true), width, height, radius, false);
    for (let i = 0; i < n; i++) if (!garment[i] && closed[i] && classicalAt[i]! >= 128) ((garment[i] = 1), area++);
  }
  fillHoles(garment, width, height, area, classicalAt);
  const kept = dropSpecks(garment, width);
  if (!kept) return null;

  const alpha = new Uint8Array(n);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = y * width + x;
      const inside = kept[i]!;
      const edge =
        (x > 0 && kept[i - 1] !== inside) ||
        (x < width - 1 && kept[i + 1] !== inside) ||
        (y > 0 && kept[i - width] !== inside) ||
        (y < height - 1 && kept[i + width] !== inside);
      if (!edge) {
        alpha[i] = inside ? 255 : 0;
        continue;
      }
      const soft = classicalAt && classicalAt[i]! >= 128 === (inside === 1) ? classicalAt[i]! : learned.data[i]!;
      // Keep each edge pixel on its own side of half, so the matte's outline is the decided one.
      alpha[i] = inside ? Math.max(128, soft) : Math.min(127, soft);
    }
  }
  if (classicalAt) trimToClassical(alpha, kept, classicalAt, width, height);
  return summarise(alpha, width, height);
}

/**
 * The learned map comes at 320 × 320 and is enlarged to the photo, so its outline may run a pixel or two outside the
 * garment's: that band is the backdrop, or the garment's edge mixed with it, and drawn solid it outlines the garment
 * with a light line. Where the classical matte stops short of the learned outline all along a stretch of it (at
 * most TRIM.agree of the outline's pixels within TRIM.stretch reach the classical garment), a pixel within
 * TRIM.depth of the outline is no more opaque than the classical matte says. Where the two meet along the stretch,
 * the band's pixels that the classical matte calls backdrop are the garment's own white (a white stripe at a
 * striped strap's edge) and stay; so does the learned outline where the classical matte sees no garment near (a
 * white garment on a white backdrop).
 */
function trimToClassical(alpha: Uint8Array, kept: Uint8Array, classical: Uint8Array, width: number, height: number): void {
  const n = alpha.length;
  const seen = new Uint8Array(n);
  for (let i = 0; i < n; i++) seen[i] = classical[i]! >= 128 ? 1 : 0;
  const near = squareFilter(seen, width, height, TRIM.depth, true);
  const inner = squareFilter(kept, width, height, TRIM.depth, false);
  // The learned outline (its garment pixels beside the backdrop), and those of them the classical matte reaches.
  const rim = squareFilter(kept, width, height, 1, false);
  const outline = new Float32Array(n);
  const agreed = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    if (!kept[i] || rim[i]) continue;
    outline[i] = 1;
    agreed[i] = seen[i]!;
  }
  const outlineNear = boxMean(outline, width, height, TRIM.stretch);
  const agreedNear = boxMean(agreed, width, height, TRIM.stretch);
  for (let i = 0; i < n; i++) {
    if (inner[i] || !near[i] || alpha[i] === 0) continue;
    if (agreedNear[i]! > TRIM.agree * outlineNear[i]!) continue;
    alpha[i] = Math.min(alpha[i]!, classical[i]!);
  }
}

/**
 * Opens the slits of backdrop that the learned map, at 320 × 320, blurs shut: a hanging sleeve's inner edge and the
 * body's side a few pixels apart (#13, #64), drawn as a white wedge along the arm. A slit is made of runs of rows
 * that the combined matte calls garment and the classical one backdrop (flooded from the photo's border, so open to
 * the outside), at most SLIT.width of the garment's width wide, with garment by both mattes on either side, in a
 * colour far from that garment's on both sides (a cream knit's own light stitches, which the classical matte also
 * takes for a light backdrop, are near its colour), and reaching down SLIT.length of the garment's height. Its
 * pixels take the classical alpha. Only `within` one side's window (cutout/index.ts: beside the body's side, from the
 * armpit down to the sleeve's end, where sleeves hang against the body): a trouser's white panels, a cream knit's
 * openwork or a print's white lie so between darker cloth too. Returns how many pixels were opened; `alpha` is
 * changed in place.
 */
export function openSlits(
  alpha: Mask,
  classical: Mask,
  box: readonly [number, number, number, number],
  image: RawImage,
  within: SlitWindow,
): number {
  const { data, width } = alpha;
  const [bx0, by0, bx1, by1] = box;
  const [x0, x1] = [Math.max(bx0, Math.floor(within.left)), Math.min(bx1, Math.ceil(within.right))];
  const [y0, y1] = [Math.max(by0, Math.floor(within.top)), Math.min(by1, Math.ceil(within.bottom))];
  const widest = Math.max(2, Math.round(SLIT.width * (bx1 - bx0)));
  const solid = (i: number): boolean => data[i]! >= 128 && classical.data[i]! >= 128;
  const candidate = new Uint8Array(data.length);
  for (let y = y0; y < y1; y++) {
    const row = y * width;
    let x = x0;
    while (x < x1) {
      if (data[row + x]! < 128 || classical.data[row + x]! >= 128) {
        x++;
        continue;
      }
      const from = x;
      while (x < x1 && data[row + x]! >= 128 && classical.data[row + x]! < 128) x++;
      if (from === x0 || x === x1 || x - from > widest || !solid(row + from - 1) || !solid(row + x)) continue;
      const run = meanColour(image, row + from, row + x);
      const left = meanColour(image, row + Math.max(x0, from - SLIT.side), row + from);
      const right = meanColour(image, row + x, row + Math.min(x1, x + SLIT.side));
      if (colourDistance(run, left) < SLIT.contrast || colourDistance(run, right) < SLIT.contrast) continue;
      candidate.fill(1, row + from, row + x);
    }
  }
  const { label, sizes } = components(candidate, width, 1);
  const top = new Int32Array(sizes.length).fill(0x7fffffff);
  const bottom = new Int32Array(sizes.length).fill(-1);
  for (let i = 0; i < label.length; i++) {
    const id = label[i]!;
    if (id < 0) continue;
    const y = Math.floor(i / width);
    top[id] = Math.min(top[id]!, y);
    bottom[id] = Math.max(bottom[id]!, y);
  }
  const shortest = SLIT.length * (by1 - by0);
  let opened = 0;
  for (let i = 0; i < label.length; i++) {
    const id = label[i]!;
    if (id < 0 || bottom[id]! - top[id]! < shortest) continue;
    data[i] = classical.data[i]!;
    opened++;
  }
  return opened;
}

/**
 * Stripes of a pair of trousers in the backdrop's colour (white fabric on a white backdrop) that both mattes left out:
 * runs of backdrop between garment pixels in a row. Above the crotch the trousers are one piece, and every such run is
 * garment; below it, every run but the gap between the legs (the run nearest the crotch's x) up to `STRIPE` of the
 * garment's width (#39, #87: the legs drawn on the customer had slivers of what was under them). Returns how many
 * pixels it made garment.
 */
export function closeLegStripes(alpha: Mask, box: readonly [number, number, number, number], crotch: { x: number; y: number }): number {
  const { data, width } = alpha;
  const [bx0, by0, bx1, by1] = box;
  const widest = STRIPE * (bx1 - bx0);
  let closed = 0;
  // Below the waistband's top edge, whose belt loops and scallops leave backdrop between them.
  for (let y = by0 + Math.round(WAISTBAND_EDGE * (by1 - by0)); y < by1; y++) {
    const row = y * width;
    const runs: [number, number][] = [];
    let x = bx0;
    while (x < bx1 && data[row + x]! < 128) x++;
    while (x < bx1) {
      while (x < bx1 && data[row + x]! >= 128) x++;
      const from = x;
      while (x < bx1 && data[row + x]! < 128) x++;
      if (x < bx1) runs.push([from, x]);
    }
    let gap = -1;
    if (y >= crotch.y) {
      let nearest = Infinity;
      runs.forEach(([from, to], k) => {
        const d = crotch.x < from ? from - crotch.x : crotch.x >= to ? crotch.x - to + 1 : 0;
        if (d < nearest) [nearest, gap] = [d, k];
      });
    }
    runs.forEach(([from, to], k) => {
      if (k === gap || (y >= crotch.y && to - from > widest)) return;
      // The soft edge either side goes with it, or it stays as a faint line.
      const [a, b] = [Math.max(bx0, from - EDGE), Math.min(bx1, to + EDGE)];
      for (let i = row + a; i < row + b; i++) if (data[i]! < 255) ((data[i] = 255), closed++);
    });
  }
  return closed;
}

/** Where slits are looked for (photo pixels): between a sleeve's inner edge and the body's side. */
export interface SlitWindow {
  left: number;
  right: number;
  top: number;
  bottom: number;
}

/** Mean RGB of the photo's pixels [from, to) (indices of one row). */
function meanColour(image: RawImage, from: number, to: number): [number, number, number] {
  const { data, channels } = image;
  const sum: [number, number, number] = [0, 0, 0];
  for (let i = from; i < to; i++) for (let c = 0; c < 3; c++) sum[c]! += data[i * channels + c]!;
  const n = Math.max(1, to - from);
  return [sum[0] / n, sum[1] / n, sum[2] / n];
}

const colourDistance = (a: readonly number[], b: readonly number[]): number => Math.hypot(a[0]! - b[0]!, a[1]! - b[1]!, a[2]! - b[2]!);

/** Fills enclosed holes of a 0/1 mask: small ones, and large ones the classical matte calls garment. */
function fillHoles(garment: Uint8Array, width: number, height: number, area: number, classical: Uint8Array | null): void {
  const { label, sizes } = components(garment, width, 0);
  const open = new Uint8Array(sizes.length);
  const looksGarment = new Int32Array(sizes.length);
  for (let i = 0; i < garment.length; i++) {
    const id = label[i]!;
    if (id < 0) continue;
    const x = i % width;
    const y = (i - x) / width;
    if (x === 0 || y === 0 || x === width - 1 || y === height - 1) open[id] = 1;
    if (classical && classical[i]! >= 128) looksGarment[id]!++;
  }
  const fill = sizes.map((size, id) => !open[id] && (size <= SMALL_HOLE * area || looksGarment[id]! * 2 > size));
  for (let i = 0; i < garment.length; i++) if (label[i]! >= 0 && fill[label[i]!]) garment[i] = 1;
}

/** The mask without pieces smaller than MIN_COMPONENT of the largest (4-connected); null when empty. */
function dropSpecks(garment: Uint8Array, width: number): Uint8Array | null {
  const { label, sizes } = components(garment, width, 1);
  const largest = Math.max(0, ...sizes);
  if (largest === 0) return null;
  const out = new Uint8Array(garment.length);
  for (let i = 0; i < out.length; i++) {
    const id = label[i]!;
    if (id >= 0 && sizes[id]! >= MIN_COMPONENT * largest) out[i] = 1;
  }
  return out;
}
