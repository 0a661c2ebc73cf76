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
import { squareFilter, summarise, type GarmentMatte } from './alpha.ts';

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
  const kept = dropSpecks(garment, width, height);
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
  const n = width * height;
  const label = new Int32Array(n).fill(-1);
  const queue = new Int32Array(n);
  let next = 0;
  for (let start = 0; start < n; start++) {
    if (garment[start] || label[start]! >= 0) continue;
    const id = next++;
    let head = 0;
    let tail = 0;
    let open = false;
    let looksGarment = 0;
    label[start] = id;
    queue[tail++] = start;
    while (head < tail) {
      const i = queue[head++]!;
      const x = i % width;
      const y = (i - x) / width;
      if (x === 0 || y === 0 || x === width - 1 || y === height - 1) open = true;
      if (classical && classical[i]! >= 128) looksGarment++;
      if (x > 0 && !garment[i - 1] && label[i - 1]! < 0) ((label[i - 1] = id), (queue[tail++] = i - 1));
      if (x < width - 1 && !garment[i + 1] && label[i + 1]! < 0) ((label[i + 1] = id), (queue[tail++] = i + 1));
      if (y > 0 && !garment[i - width] && label[i - width]! < 0) ((label[i - width] = id), (queue[tail++] = i - width));
      if (y < height - 1 && !garment[i + width] && label[i + width]! < 0) ((label[i + width] = id), (queue[tail++] = i + width));
    }
    if (open) continue;
    if (tail <= SMALL_HOLE * area || looksGarment * 2 > tail) for (let k = 0; k < tail; k++) garment[queue[k]!] = 1;
  }
}

/** The mask without pieces smaller than MIN_COMPONENT of the largest (4-connected); null when empty. */
function dropSpecks(garment: Uint8Array, width: number, height: number): Uint8Array | null {
  const n = width * height;
  const label = new Int32Array(n).fill(-1);
  const queue = new Int32Array(n);
  const sizes: number[] = [];
  for (let start = 0; start < n; start++) {
    if (!garment[start] || label[start]! >= 0) continue;
    const id = sizes.length;
    let head = 0;
    let tail = 0;
    label[start] = id;
    queue[tail++] = start;
    while (head < tail) {
      const i = queue[head++]!;
      const x = i % width;
      if (x > 0 && garment[i - 1] && label[i - 1]! < 0) ((label[i - 1] = id), (queue[tail++] = i - 1));
      if (x < width - 1 && garment[i + 1] && label[i + 1]! < 0) ((label[i + 1] = id), (queue[tail++] = i + 1));
      if (i >= width && garment[i - width] && label[i - width]! < 0) ((label[i - width] = id), (queue[tail++] = i - width));
      if (i < n - width && garment[i + width] && label[i + width]! < 0) ((label[i + width] = id), (queue[tail++] = i + width));
    }
    sizes.push(tail);
  }
  const largest = Math.max(0, ...sizes);
  if (largest === 0) return null;
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const id = label[i]!;
    if (id >= 0 && sizes[id]! >= MIN_COMPONENT * largest) out[i] = 1;
  }
  return out;
}
