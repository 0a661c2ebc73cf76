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
import { components, squareFilter } from '../../../kernel/raster.ts';
import { summarise, type GarmentMatte } from './alpha.ts';

/** Closing radius, as a share of the garment photo's longer side. */
const CLOSING = 0.012;
/** Enclosed holes up to this share of the garment's area are garment whatever they look like. */
const SMALL_HOLE = 0.02;
/** Pieces smaller than this share of the largest are specks. */
const MIN_COMPONENT = 0.08;

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
  return summarise(alpha, width, height);
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
