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
import type { Mask } from '../../../vision/types.ts';
import { boxMean, components, squareFilter } from '../../../kernel/raster.ts';
import { summarise, type GarmentMatte } from './alpha.ts';

/** Closing radius, as a share of the garment photo's longer side. */
const CLOSING = 0.012;
/** Enclosed holes up to this share of the garment's area are garment whatever they look like. */
const SMALL_HOLE = 0.02;
/** Pieces smaller than this share of the largest are specks. */
const MIN_COMPONENT = 0.08;
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
