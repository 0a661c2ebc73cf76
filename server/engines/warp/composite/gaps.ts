/**
 * Cloth is continuous. A garment fitted in pieces (a body and two sleeves,
 * two trouser legs) or bent by the spline can leave narrow gaps inside its
 * own outline: between a sleeve and the body, at a seam, under the arm.
 * Where such a gap lies over the customer's old clothing, the old clothing
 * would show through it as a strip (or, removed, as a hole of wall inside
 * the body). Those gaps are closed with the garment's own colours, carried
 * in from both sides of the gap along the row. Gaps over skin (an arm
 * between sleeve and body), the head or the hands stay open.
 */
import { REGION, type PersonAnalysis, type RawImage } from '../../../vision/types.ts';
import type { Layer } from '../fit/render.ts';
import { isSkin, type SkinModel } from './colour.ts';

/** The widest gap closed, in shoulder widths. */
const GAP = 0.2;
const NEVER = new Set<number>([REGION.head, REGION.leftHand, REGION.rightHand]);

/**
 * The layer with its narrow gaps over old clothing filled (see above); the layer itself is changed. A gap is a
 * run of a row between two solid garment pixels at most GAP apart; of it, the pixels of the person's old clothing
 * (not skin, head, hands or background) take the colours of the garment at its two ends, blended across.
 */
export function closeGaps(layer: Layer, image: RawImage, person: PersonAnalysis, skin: SkinModel | null, unit: number): Layer {
  const { x0, y0, width: lw, height: lh } = layer;
  const widest = Math.max(2, Math.round(GAP * unit));
  const { width, data, channels } = image;
  for (let y = 0; y < lh; y++) {
    const row = y * lw;
    let last = -1;
    for (let x = 0; x < lw; x++) {
      if (layer.alpha[row + x]! < 0.5) continue;
      if (last >= 0 && x - last > 1 && x - last <= widest) fill(row, last, x, y);
      last = x;
    }
  }
  return layer;

  function fill(row: number, left: number, right: number, y: number): void {
    const a = row + left;
    const b = row + right;
    for (let x = left + 1; x < right; x++) {
      const o = row + x;
      const i = (y0 + y) * width + x0 + x;
      if (person.matte.data[i]! < 128 || NEVER.has(person.layout.labels[i]!)) continue;
      const j = i * channels;
      if (skin && isSkin(skin, data[j]!, data[j + 1]!, data[j + 2]!)) continue;
      const t = (x - left) / (right - left);
      for (let c = 0; c < 3; c++) layer.rgb[o * 3 + c] = Math.round(layer.rgb[a * 3 + c]! * (1 - t) + layer.rgb[b * 3 + c]! * t);
      layer.alpha[o] = 1;
      layer.sleeve[o] = layer.sleeve[a]! | layer.sleeve[b]!;
    }
  }
}
