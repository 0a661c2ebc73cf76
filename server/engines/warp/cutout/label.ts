/**
 * The brand label sewn inside the back of the neck. A ghost-mannequin or
 * flat photo shows it through the neck opening, and drawn on a customer it
 * lands on their neck or chest as a white or black patch with writing on
 * it: a try-on that shows it looks pasted on. Where the inside back is
 * found (inside-back.ts) it goes with it; where it is not (a stand
 * collar's tall inside, a blazer's lining between the lapels, a collar too
 * narrow to search), the label is found on its own and covered with the
 * cloth round it.
 *
 * A label is a small patch, white or black, that fills most of its box
 * (a rectangle; the writing on it is closed over), near the garment's
 * centre line between the shoulders, high up: within LABEL.depth shoulder
 * widths of the garment's top. The cloth round it is far from its colour.
 * Its pixels take the colours of the cloth at the two ends of their row
 * inside the box, blended across and smoothed down the box, so it becomes
 * the lining or band it was sewn on.
 */
import type { RawImage } from '../../../vision/types.ts';
import { components, squareFilter } from '../../../kernel/raster.ts';
import type { GarmentLandmarks } from '../types.ts';

/** The garment's RGBA pixels, straight alpha (a cut-out's image). */
type Rgba = Pick<RawImage, 'data' | 'width' | 'height'>;

/**
 * Where a label is looked for and what it may be, in shoulder widths (the garment's): its centre within `centre` of the
 * centre line, its box's top within `depth` of the garment's top; its box between `smallest` and `largest` on each
 * side, `aspect` at most this long one way over the other, and at least `fill` of it white or black.
 */
const LABEL = { centre: 0.12, depth: 0.32, smallest: 0.04, largest: 0.3, aspect: 3, fill: 0.6 } as const;
/** White: luma at least WHITE and chroma (max − min of RGB) at most GREY; black: luma at most BLACK. */
const WHITE = 205;
const BLACK = 55;
const GREY = 40;
/** The cloth round the label (a ring RING pixels wide outside its box) lies at least APART from its colour (RGB). */
const RING = 3;
const APART = 60;
/** A label's edge (its hem, its shadow) reaches this many pixels past its box. */
const EDGE = 2;
/** The writing on a label is closed over within this many pixels. */
const CLOSE = 2;

/** A label found: its box in the cut-out's pixels, [x0, y0, x1, y1) */
export type LabelBox = [number, number, number, number];

/** The label seen through the neck opening (see above), or null when there is none to be sure of. */
export function findLabel(image: Rgba, landmarks: GarmentLandmarks): LabelBox | null {
  const { data, width, height } = image;
  const { leftShoulder, rightShoulder, neckLeft, neckRight } = landmarks;
  // A label is sewn in a neck opening: a strapless or strappy top has none (a highlight on satin was taken for one).
  if (!leftShoulder || !rightShoulder || !neckLeft || !neckRight) return null;
  const unit = Math.abs(leftShoulder.x - rightShoulder.x);
  if (unit < 20) return null;
  const neck = (neckLeft.x + neckRight.x) / 2;
  let top = height;
  for (let y = 0; y < height && top === height; y++) for (let x = 0; x < width; x++) if (data[(y * width + x) * 4 + 3]! >= 128) top = y;
  // The search box: a little wider and deeper than where a label's centre and top may be.
  const x0 = Math.max(0, Math.floor(neck - (LABEL.centre + LABEL.largest / 2) * unit));
  const x1 = Math.min(width, Math.ceil(neck + (LABEL.centre + LABEL.largest / 2) * unit));
  const y0 = top;
  const y1 = Math.min(height, Math.ceil(top + (LABEL.depth + LABEL.largest) * unit));
  const w = x1 - x0;
  const h = y1 - y0;
  if (w <= 0 || h <= 0) return null;
  const kind = new Uint8Array(w * h); // 1 white, 2 black
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const o = ((y0 + y) * width + x0 + x) * 4;
      if (data[o + 3]! < 200) continue;
      const [r, g, b] = [data[o]!, data[o + 1]!, data[o + 2]!];
      const luma = 0.299 * r + 0.587 * g + 0.114 * b;
      if (luma >= WHITE && Math.max(r, g, b) - Math.min(r, g, b) <= GREY) kind[y * w + x] = 1;
      else if (luma <= BLACK) kind[y * w + x] = 2;
    }
  }
  let best: LabelBox | null = null;
  for (const shade of [1, 2]) {
    const mask = new Uint8Array(w * h);
    for (let k = 0; k < mask.length; k++) mask[k] = kind[k] === shade ? 1 : 0;
    const closed = squareFilter(squareFilter(mask, w, h, CLOSE, true), w, h, CLOSE, false);
    const { label, sizes } = components(closed, w, 1);
    const boxes = sizes.map(() => [w, h, -1, -1]);
    for (let k = 0; k < label.length; k++) {
      const id = label[k]!;
      if (id < 0) continue;
      const x = k % w;
      const y = (k - x) / w;
      const b = boxes[id]!;
      b[0] = Math.min(b[0]!, x);
      b[1] = Math.min(b[1]!, y);
      b[2] = Math.max(b[2]!, x + 1);
      b[3] = Math.max(b[3]!, y + 1);
    }
    for (const [id, b] of boxes.entries()) {
      const [bx0, by0, bx1, by1] = [b[0]! + x0, b[1]! + y0, b[2]! + x0, b[3]! + y0];
      const bw = bx1 - bx0;
      const bh = by1 - by0;
      if (bw < LABEL.smallest * unit || bh < LABEL.smallest * unit || bw > LABEL.largest * unit || bh > LABEL.largest * unit) continue;
      if (Math.max(bw / bh, bh / bw) > LABEL.aspect) continue;
      if (sizes[id]! < LABEL.fill * bw * bh) continue;
      if (Math.abs((bx0 + bx1) / 2 - neck) > LABEL.centre * unit || by0 - top > LABEL.depth * unit) continue;
      if (!standsApart(image, [bx0, by0, bx1, by1], shade === 1 ? [255, 255, 255] : [0, 0, 0])) continue;
      if (!best || bw * bh > (best[2] - best[0]) * (best[3] - best[1])) best = [bx0, by0, bx1, by1];
    }
  }
  return best;
}

/**
 * Whether the cloth in a ring round a box (its opaque pixels) lies at least APART from a colour, on average, and
 * covers most of the ring: a label is sewn on cloth, not cut out against the backdrop.
 */
function standsApart(image: Rgba, box: LabelBox, colour: readonly number[]): boolean {
  const { data, width, height } = image;
  let sum = 0;
  let n = 0;
  let all = 0;
  for (let y = box[1] - RING; y < box[3] + RING; y++) {
    for (let x = box[0] - RING; x < box[2] + RING; x++) {
      if (x >= box[0] && x < box[2] && y >= box[1] && y < box[3]) continue;
      all++;
      if (x < 0 || y < 0 || x >= width || y >= height) continue;
      const o = (y * width + x) * 4;
      if (data[o + 3]! < 200) continue;
      sum += Math.hypot(data[o]! - colour[0]!, data[o + 1]! - colour[1]!, data[o + 2]! - colour[2]!);
      n++;
    }
  }
  return n >= 0.7 * all && sum / n >= APART;
}

/**
 * Covers a label's box and its edge with the cloth round it (in place): each row blended from the colours just outside at
 * its two ends, then each column smoothed over a few rows. Alpha is left as it is.
 */
export function coverLabel(image: Rgba, box: LabelBox): void {
  const { data, width, height } = image;
  // The label's own edge (its hem, its shadow on the cloth) goes with it.
  const [x0, y0, x1, y1] = [
    Math.max(0, box[0] - EDGE),
    Math.max(0, box[1] - EDGE),
    Math.min(width, box[2] + EDGE),
    Math.min(height, box[3] + EDGE),
  ];
  const side = (y: number, x: number, dir: -1 | 1): [number, number, number] | null => {
    const sum: [number, number, number] = [0, 0, 0];
    let n = 0;
    for (let d = 1; d <= RING; d++) {
      const x2 = x + dir * d;
      if (x2 < 0 || x2 >= width) continue;
      const o = (y * width + x2) * 4;
      if (data[o + 3]! < 200) continue;
      for (let c = 0; c < 3; c++) sum[c]! += data[o + c]!;
      n++;
    }
    return n > 0 ? [sum[0] / n, sum[1] / n, sum[2] / n] : null;
  };
  const w = x1 - x0;
  const rows: Float32Array[] = [];
  for (let y = y0; y < y1; y++) {
    const left = side(y, x0, -1);
    const right = side(y, x1 - 1, 1);
    const a = left ?? right;
    const b = right ?? left;
    const row = new Float32Array(w * 3);
    for (let x = 0; x < w; x++) {
      const t = w > 1 ? x / (w - 1) : 0.5;
      for (let c = 0; c < 3; c++) row[x * 3 + c] = a && b ? a[c]! * (1 - t) + b[c]! * t : data[(y * width + x0 + x) * 4 + c]!;
    }
    rows.push(row);
  }
  const smooth = Math.max(1, Math.round((y1 - y0) / 6));
  for (let y = y0; y < y1; y++) {
    for (let x = 0; x < w; x++) {
      const o = (y * width + x0 + x) * 4;
      for (let c = 0; c < 3; c++) {
        let s = 0;
        let n = 0;
        for (let k = Math.max(0, y - y0 - smooth); k <= Math.min(rows.length - 1, y - y0 + smooth); k++) {
          s += rows[k]![x * 3 + c]!;
          n++;
        }
        data[o + c] = Math.round(s / n);
      }
    }
  }
}
