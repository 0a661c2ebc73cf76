/**
 * Draws a cut-out garment onto the person's frame through its placement:
 * for every pixel of the person's photo near a piece, the piece's inverse
 * map (body → garment: a thin-plate spline, or a sleeve's map along the
 * arm's bones, sleeve.ts; evaluated on a 4-pixel grid and interpolated)
 * says which garment pixel lands there; colour and alpha are sampled
 * bilinearly with premultiplied alpha, so edges stay anti-aliased, from
 * the cut-out or, when it is drawn at half its size or less, from a copy
 * reduced to about the size it is drawn at.
 */
import type { GarmentCutout, Point } from '../types.ts';
import { ownedBy, type Piece, type Placement } from './place.ts';
import { NOWHERE, skeletonForward, skeletonInverse, type PointMap } from './sleeve.ts';
import { fitThinPlateSpline, mappingGrid, type MappingGrid } from './tps.ts';

/** A garment drawn in the person's frame, over the box [x0, x0 + width) × [y0, y0 + height). */
export interface Layer {
  x0: number;
  y0: number;
  width: number;
  height: number;
  /** Straight RGB, 3 bytes per pixel. */
  rgb: Uint8Array;
  /** Coverage 0..1. */
  alpha: Float32Array;
  /** 1 where the pixel belongs to a sleeve (may cover arms), 0 for the garment's body (stays behind arms). */
  sleeve: Uint8Array;
  /** 1 where a sleeve drawn along its arm put the pixel (not the body's cloth outside its outline); absent: none. */
  tube?: Uint8Array;
  /** 1 where the pixel is the garment's inside back (GarmentCutout.insideBack), when it has one. */
  insideBack?: Uint8Array;
}

const GRID_STEP = 4;
/** The most one part of a garment may be stretched or squeezed relative to the typical part (by area). */
const STRETCH = 16;
/** Light smoothing keeps the spline from folding when two landmarks nearly coincide. */
const SMOOTHING = 1e-3;

/** Point-in-polygon over the cut-out: 1 inside the garment's body polygon. */
function polygonMask(polygon: readonly Point[], width: number, height: number): Uint8Array {
  const mask = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) {
    const py = y + 0.5;
    const crossings: number[] = [];
    for (let i = 0; i < polygon.length; i++) {
      const a = polygon[i]!;
      const b = polygon[(i + 1) % polygon.length]!;
      if (a.y <= py !== b.y <= py) crossings.push(a.x + ((py - a.y) / (b.y - a.y)) * (b.x - a.x));
    }
    crossings.sort((p, q) => p - q);
    for (let k = 0; k + 1 < crossings.length; k += 2) {
      const from = Math.max(0, Math.ceil(crossings[k]! - 0.5));
      const to = Math.min(width, Math.floor(crossings[k + 1]! - 0.5) + 1);
      mask.fill(1, y * width + from, y * width + Math.max(from, to));
    }
  }
  return mask;
}

export function renderGarment(cutout: GarmentCutout, placement: Placement, photoWidth: number, photoHeight: number): Layer {
  const g = cutout.image;
  const gw = g.width;
  const gh = g.height;
  const inBody = placement.bodyPolygon ? polygonMask(placement.bodyPolygon, gw, gh) : null;

  // Where each piece lands: its opaque pixels (sampled every 8) mapped forward, plus a margin; the layer spans them.
  // How many garment pixels fall on a photo pixel there, across: from the area each 8-pixel cell maps to.
  const scales: number[] = [];
  const boxes = placement.pieces.map((piece) => {
    const forward = piece.skeleton
      ? skeletonForward(piece.skeleton)
      : fitThinPlateSpline(
          piece.pairs.map((p) => p.from),
          piece.pairs.map((p) => p.to),
          SMOOTHING,
        );
    const box = { minX: Infinity, minY: Infinity, maxX: -Infinity, maxY: -Infinity };
    for (let y = 0; y < gh; y += 8) {
      for (let x = 0; x < gw; x += 8) {
        if (g.data[(y * gw + x) * 4 + 3]! < 8 || !ownedBy(piece, x, y)) continue;
        const p = forward.map(x, y);
        const right = forward.map(x + 8, y);
        const down = forward.map(x, y + 8);
        const area = Math.abs((right.x - p.x) * (down.y - p.y) - (right.y - p.y) * (down.x - p.x));
        if (area > 0) scales.push(8 / Math.sqrt(area));
        box.minX = Math.min(box.minX, p.x);
        box.minY = Math.min(box.minY, p.y);
        box.maxX = Math.max(box.maxX, p.x);
        box.maxY = Math.max(box.maxY, p.y);
      }
    }
    const margin = 24;
    return {
      x0: Math.max(0, Math.floor(box.minX - margin)),
      y0: Math.max(0, Math.floor(box.minY - margin)),
      x1: Math.min(photoWidth, Math.ceil(box.maxX + margin)),
      y1: Math.min(photoHeight, Math.ceil(box.maxY + margin)),
    };
  });
  const x0 = Math.min(...boxes.map((b) => b.x0));
  const y0 = Math.min(...boxes.map((b) => b.y0));
  const width = Math.max(0, Math.max(...boxes.map((b) => b.x1)) - x0);
  const height = Math.max(0, Math.max(...boxes.map((b) => b.y1)) - y0);
  const layer: Layer = {
    x0,
    y0,
    width,
    height,
    rgb: new Uint8Array(width * height * 3),
    alpha: new Float32Array(width * height),
    sleeve: new Uint8Array(width * height),
    tube: new Uint8Array(width * height),
    ...(cutout.insideBack ? { insideBack: new Uint8Array(width * height) } : {}),
  };
  if (width === 0 || height === 0) return layer;
  // Drawn at a half or less of its photo's size, the garment is sampled from a copy reduced by that whole factor:
  // sampled bilinearly at full size, a fine knit's ribs or a print's lines beat against the photo's pixels (rings
  // on a ribbed cami drawn at a quarter of its size, #108).
  const scale = scales.length > 0 ? [...scales].sort((a, b) => a - b)[scales.length >> 1]! : 1;
  const source = reduced(g, Math.max(1, Math.floor(scale)));

  placement.pieces.forEach((piece, k) => {
    const box = boxes[k]!;
    if (box.x1 <= box.x0 || box.y1 <= box.y0) return;
    const inverse = piece.skeleton
      ? skeletonInverse(piece.skeleton)
      : fitThinPlateSpline(
          piece.pairs.map((p) => p.to),
          piece.pairs.map((p) => p.from),
          SMOOTHING,
        );
    const grid = mappingGrid(inverse, box.x0, box.y0, box.x1 - box.x0, box.y1 - box.y0, GRID_STEP);
    drawPiece(layer, cutout, source, grid, box, inBody, piece, piece.skeleton ? inverse : null);
  });
  return layer;
}

/** A garment's RGBA pixels reduced by a whole `factor`: each the mean of a factor × factor block, premultiplied. */
interface Reduced {
  data: Uint8Array;
  width: number;
  height: number;
  factor: number;
}

/**
 * The reduced copies made of each cut-out's pixels, by factor: a try-on draws its garment again at each level of
 * caution, and a cached catalogue garment in every try-on, at much the same size.
 */
const reductions = new WeakMap<Uint8Array, Map<number, Reduced>>();

function reduced(image: GarmentCutout['image'], factor: number): Reduced {
  const { data, width, height } = image;
  if (factor === 1) return { data, width, height, factor };
  let copies = reductions.get(data);
  if (!copies) reductions.set(data, (copies = new Map()));
  let copy = copies.get(factor);
  if (!copy) copies.set(factor, (copy = reduce(image, factor)));
  return copy;
}

function reduce(image: GarmentCutout['image'], factor: number): Reduced {
  const { data, width, height } = image;
  const w = Math.ceil(width / factor);
  const h = Math.ceil(height / factor);
  const out = new Uint8Array(w * h * 4);
  const n = factor * factor;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      let a = 0;
      let r = 0;
      let g = 0;
      let b = 0;
      // Past the photo's right or bottom edge counts as transparent.
      for (let v = y * factor; v < Math.min(height, (y + 1) * factor); v++) {
        for (let u = x * factor; u < Math.min(width, (x + 1) * factor); u++) {
          const j = (v * width + u) * 4;
          const wa = data[j + 3]!;
          a += wa;
          r += wa * data[j]!;
          g += wa * data[j + 1]!;
          b += wa * data[j + 2]!;
        }
      }
      const o = (y * w + x) * 4;
      if (a > 0) {
        out[o] = Math.round(r / a);
        out[o + 1] = Math.round(g / a);
        out[o + 2] = Math.round(b / a);
      }
      out[o + 3] = Math.round(a / n);
    }
  }
  return { data: out, width: w, height: h, factor };
}

/**
 * Draws a piece over its box (photo pixels) of the layer, through its grid over that box; colour and alpha from
 * `source` (the cut-out, or a reduced copy of it), which piece, sleeve and inside back the pixel is from the cut-out.
 */
function drawPiece(
  layer: Layer,
  cutout: GarmentCutout,
  source: Reduced,
  grid: MappingGrid,
  box: { x0: number; y0: number; x1: number; y1: number },
  inBody: Uint8Array | null,
  piece: Piece,
  exact: PointMap | null,
): void {
  const { below } = piece;
  // The outline a piece stays below, its y at each column of the box (photo pixels).
  const line = below?.line;
  const lineY = line ? polylineColumns(line, box.x0, box.x1) : null;
  const [freeFrom, freeTo] = below?.except ?? [Infinity, -Infinity];
  const { width: gw, height: gh } = cutout.image;
  const { data, width: sw, height: sh, factor } = source;
  const { width, rgb, alpha, sleeve } = layer;
  const { step, columns } = grid;
  for (let py = box.y0; py < box.y1; py++) {
    const gy = (py - box.y0) / step;
    const r = Math.floor(gy);
    const ty = gy - r;
    for (let px = box.x0; px < box.x1; px++) {
      const gx = (px - box.x0) / step;
      const c = Math.floor(gx);
      const tx = gx - c;
      const i00 = r * columns + c;
      const i10 = i00 + 1;
      const i01 = i00 + columns;
      const i11 = i01 + 1;
      // The share of the pixel's row below the outline: the cut along it is anti-aliased.
      const under = lineY && (px < freeFrom || px > freeTo) ? Math.min(1, py + 1 - lineY[px - box.x0]!) : 1;
      if (under <= 0) continue;
      let sx = (grid.x[i00]! * (1 - tx) + grid.x[i10]! * tx) * (1 - ty) + (grid.x[i01]! * (1 - tx) + grid.x[i11]! * tx) * ty;
      let sy = (grid.y[i00]! * (1 - tx) + grid.y[i10]! * tx) * (1 - ty) + (grid.y[i01]! * (1 - tx) + grid.y[i11]! * tx) * ty;
      // A sleeve's map ends round a bent elbow (its fan): a grid cell with a corner past that end is mapped pixel by
      // pixel, or the whole cell was left out and the fan's edge came out in 4-pixel steps (#98).
      if (exact && Math.min(grid.x[i00]!, grid.x[i10]!, grid.x[i01]!, grid.x[i11]!) <= NOWHERE.x) {
        const p = exact.map(px, py);
        sx = p.x;
        sy = p.y;
      }
      if (!ownedBy(piece, sx, sy)) continue;
      // Bilinear sample at the garment position in the source (pixel centres at +0.5), premultiplied.
      const fx = sx / factor - 0.5;
      const fy = sy / factor - 0.5;
      const ix = Math.floor(fx);
      const iy = Math.floor(fy);
      if (ix < -1 || iy < -1 || ix >= sw || iy >= sh) continue;
      const ax = fx - ix;
      const ay = fy - iy;
      let a = 0;
      let cr = 0;
      let cg = 0;
      let cb = 0;
      for (let k = 0; k < 4; k++) {
        const qx = ix + (k & 1);
        const qy = iy + (k >> 1);
        if (qx < 0 || qy < 0 || qx >= sw || qy >= sh) continue;
        const w = (k & 1 ? ax : 1 - ax) * (k >> 1 ? ay : 1 - ay);
        const j = (qy * sw + qx) * 4;
        const wa = (w * data[j + 3]!) / 255;
        a += wa;
        cr += wa * data[j]!;
        cg += wa * data[j + 1]!;
        cb += wa * data[j + 2]!;
      }
      if (a * under <= 1e-4) continue;
      const o = (py - layer.y0) * width + (px - layer.x0);
      // Pieces do not overlap; where they touch, the more opaque one wins.
      if (a * under <= alpha[o]!) continue;
      alpha[o] = a * under;
      rgb[o * 3] = cr / a;
      rgb[o * 3 + 1] = cg / a;
      rgb[o * 3 + 2] = cb / a;
      const nx = Math.min(gw - 1, Math.max(0, Math.round(sx - 0.5)));
      const ny = Math.min(gh - 1, Math.max(0, Math.round(sy - 0.5)));
      // A sleeve drawn along its arm is sleeve throughout, the part of it that lay over the body in the photo too.
      sleeve[o] = piece.skeleton || (inBody && inBody[ny * gw + nx] === 0) ? 1 : 0;
      if (layer.tube) layer.tube[o] = piece.skeleton ? 1 : 0;
      if (layer.insideBack) layer.insideBack[o] = cutout.insideBack![ny * gw + nx]!;
    }
  }
}

/**
 * Whether a placement folds the garment over itself or stretches part of it
 * absurdly: the spline is evaluated on a 16-pixel grid over the garment's
 * opaque part, and every grid cell's mapped area must be positive (the
 * garment's front still faces the camera) and within a factor of STRETCH of
 * the typical cell's.
 */
export function folds(cutout: GarmentCutout, placement: Placement): boolean {
  const g = cutout.image;
  const step = 16;
  for (const piece of placement.pieces) {
    // A sleeve on the arm's bones cannot fold: each photo point has one place along and across it.
    if (piece.skeleton) continue;
    const spline = fitThinPlateSpline(
      piece.pairs.map((p) => p.from),
      piece.pairs.map((p) => p.to),
      SMOOTHING,
    );
    const areas: number[] = [];
    for (let y = 0; y + step < g.height; y += step) {
      for (let x = 0; x + step < g.width; x += step) {
        const centre = ((y + step / 2) * g.width + x + step / 2) * 4 + 3;
        if (g.data[centre]! < 128) continue;
        if ((piece.split || piece.owns) && !ownedBy(piece, x + step / 2, y + step / 2)) continue;
        const p00 = spline.map(x, y);
        const p10 = spline.map(x + step, y);
        const p01 = spline.map(x, y + step);
        areas.push((p10.x - p00.x) * (p01.y - p00.y) - (p10.y - p00.y) * (p01.x - p00.x));
      }
    }
    if (areas.length === 0) continue;
    const typical = [...areas].sort((a, b) => a - b)[areas.length >> 1]!;
    // The typical cell itself must be positive: a piece turned over as a whole agrees with itself everywhere and is
    // still drawn mirrored (a piece pinned at three points is an affine map, which may be a mirror).
    if (typical <= 0 || areas.some((a) => a / typical <= 0 || a / typical > STRETCH || a / typical < 1 / STRETCH)) return true;
  }
  return false;
}

/** A polyline's y at each column x0 ≤ x < x1 (its points left to right), carried on straight past its ends. */
function polylineColumns(line: readonly Point[], x0: number, x1: number): Float32Array {
  const out = new Float32Array(Math.max(0, x1 - x0));
  let k = 0;
  for (let x = x0; x < x1; x++) {
    while (k < line.length - 2 && x > line[k + 1]!.x) k++;
    const a = line[k]!;
    const b = line[Math.min(k + 1, line.length - 1)]!;
    out[x - x0] = a.y + ((b.y - a.y) * (x - a.x)) / (b.x - a.x || 1);
  }
  return out;
}
