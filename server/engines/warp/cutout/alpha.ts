/**
 * A garment's alpha matte from a product photo on a plain background: the
 * background's colour is learned from the photo's border (median and
 * spread), every pixel's difference from it (luminance weighted down, so
 * soft shadows stay background) becomes a soft alpha, and on a coarse grid
 * the mask is cleaned: background is what the border reaches, so holes
 * inside the garment (a white print on a white wall) are filled, and specks
 * apart from the garment are dropped.
 */
import { components, squareFilter } from '../../../kernel/raster.ts';
import type { Mask, RawImage } from '../../../vision/types.ts';

/** Border band sampled for the background, as a share of the shorter side. */
const BORDER = 0.03;
/** Luminance counts this much against chroma in the colour difference (shadows are mostly darker, not another hue). */
const LUMA_WEIGHT = 0.45;
/** Coarse grid for the clean-up, in pixels. */
const CELL = 4;
/** Components smaller than this share of the largest are specks. */
const MIN_COMPONENT = 0.08;
/** How far from an edge pixel the garment's own colour is looked for. */
const EDGE_REACH = 2;
/** Bites of print at the outline: how wide an opening is closed, and how tall a bite may be. */
const BITE_RADIUS = 12;
const BITE_LENGTH = 60;

interface Background {
  y: number;
  cb: number;
  cr: number;
  spread: number;
}

const yOf = (r: number, g: number, b: number): number => 0.299 * r + 0.587 * g + 0.114 * b;
const cbOf = (r: number, g: number, b: number): number => -0.1687 * r - 0.3313 * g + 0.5 * b;
const crOf = (r: number, g: number, b: number): number => 0.5 * r - 0.4187 * g - 0.0813 * b;
const toYcc = (r: number, g: number, b: number): [number, number, number] => [yOf(r, g, b), cbOf(r, g, b), crOf(r, g, b)];

function backgroundOf(image: RawImage): Background {
  const { data, width, height, channels } = image;
  const band = Math.max(2, Math.round(Math.min(width, height) * BORDER));
  const ys: number[] = [];
  const cbs: number[] = [];
  const crs: number[] = [];
  for (let y = 0; y < height; y += 2) {
    for (let x = 0; x < width; x += 2) {
      if (x >= band && x < width - band && y >= band && y < height - band) continue;
      const j = (y * width + x) * channels;
      const [l, cb, cr] = toYcc(data[j]!, data[j + 1]!, data[j + 2]!);
      ys.push(l);
      cbs.push(cb);
      crs.push(cr);
    }
  }
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
  const bg = { y: median(ys), cb: median(cbs), cr: median(crs), spread: 0 };
  const distances = ys.map((l, k) => difference(bg, l, cbs[k]!, crs[k]!));
  // The 90th percentile of the border's own differences: how much the background varies.
  bg.spread = [...distances].sort((a, b) => a - b)[Math.floor(distances.length * 0.9)]!;
  return bg;
}

function difference(bg: Background, l: number, cb: number, cr: number): number {
  // A square root of squares: Math.hypot is several times slower, and this runs on every pixel of the photo.
  const dl = (l - bg.y) * LUMA_WEIGHT;
  const dcb = cb - bg.cb;
  const dcr = cr - bg.cr;
  return Math.sqrt(dl * dl + dcb * dcb + dcr * dcr);
}

export interface GarmentMatte {
  alpha: Mask;
  /** Share of the photo the garment covers. */
  coverage: number;
  /** Bounding box of the garment, [x0, y0, x1, y1). */
  box: [number, number, number, number];
}

/** The garment's alpha, or null when nothing stands out from the background. */
export function garmentMatte(image: RawImage): GarmentMatte | null {
  const { width, height } = image;
  const difference = differenceFromBackground(image);
  const outside = backgroundReached(difference.soft, width, height);
  fillBites(outside, width, height);
  const kept = keptGarment(outside, width, height);
  if (!kept) return null;
  return summarise(edgeMatte(outside, difference, kept, width, height), width, height);
}

/** Each pixel's colour difference from the background, and that difference as a soft 0..255 garment mask. */
interface BackgroundDifference {
  diff: Float32Array;
  soft: Uint8Array;
  /** Below `lo` a pixel is background; above `hi` garment. */
  lo: number;
  hi: number;
}

function differenceFromBackground(image: RawImage): BackgroundDifference {
  const { data, width, height, channels } = image;
  const bg = backgroundOf(image);
  const lo = bg.spread * 1.6 + 10;
  const hi = lo + 14;
  const soft = new Uint8Array(width * height);
  const diff = new Float32Array(width * height);
  for (let i = 0, j = 0; i < soft.length; i++, j += channels) {
    const r = data[j]!;
    const g = data[j + 1]!;
    const b = data[j + 2]!;
    const d = difference(bg, yOf(r, g, b), cbOf(r, g, b), crOf(r, g, b));
    diff[i] = d;
    soft[i] = d <= lo ? 0 : d >= hi ? 255 : Math.round(((d - lo) / (hi - lo)) * 255);
  }
  return { diff, soft, lo, hi };
}

/**
 * Background: the pixels below half alpha that the border reaches (full resolution, so a narrow gap between
 * trouser legs stays open), 1 in the result. Everything else is garment: holes such as a white print on a white
 * wall are filled.
 */
export function backgroundReached(soft: Uint8Array, width: number, height: number): Uint8Array {
  const outside = new Uint8Array(width * height);
  const stack = new Int32Array(width * height);
  let top = 0;
  const push = (i: number): void => {
    if (!outside[i] && soft[i]! < 128) {
      outside[i] = 1;
      stack[top++] = i;
    }
  };
  for (let x = 0; x < width; x++) {
    push(x);
    push((height - 1) * width + x);
  }
  for (let y = 0; y < height; y++) {
    push(y * width);
    push(y * width + width - 1);
  }
  while (top > 0) {
    const i = stack[--top]!;
    const x = i % width;
    if (x > 0) push(i - 1);
    if (x < width - 1) push(i + 1);
    if (i >= width) push(i - width);
    if (i < (height - 1) * width) push(i + width);
  }
  return outside;
}

/**
 * Whether a pixel lies in, or one cell beside, garment worth keeping: connected components of garment on a coarse
 * grid (a cell is garment when most of it is), the small ones (specks) dropped. Null when no garment is left.
 */
export function keptGarment(outside: Uint8Array, width: number, height: number): ((x: number, y: number) => boolean) | null {
  const cw = Math.ceil(width / CELL);
  const ch = Math.ceil(height / CELL);
  const cells = new Uint8Array(cw * ch);
  for (let cy = 0; cy < ch; cy++) {
    for (let cx = 0; cx < cw; cx++) {
      let inside = 0;
      let n = 0;
      for (let y = cy * CELL; y < Math.min(height, (cy + 1) * CELL); y++) {
        for (let x = cx * CELL; x < Math.min(width, (cx + 1) * CELL); x++) {
          if (!outside[y * width + x]) inside++;
          n++;
        }
      }
      cells[cy * cw + cx] = inside * 2 > n ? 1 : 0;
    }
  }
  const { label: component, sizes } = components(cells, cw, 1);
  const largest = Math.max(0, ...sizes);
  if (largest === 0 || largest < 0.01 * cw * ch) return null;
  const keep = sizes.map((size) => size >= MIN_COMPONENT * largest);
  return (x, y) => {
    const cx = Math.floor(x / CELL);
    const cy = Math.floor(y / CELL);
    for (let dy = -1; dy <= 1; dy++) {
      for (let dx = -1; dx <= 1; dx++) {
        const nx = cx + dx;
        const ny = cy + dy;
        if (nx < 0 || ny < 0 || nx >= cw || ny >= ch) continue;
        const c = component[ny * cw + nx]!;
        if (c >= 0 && keep[c]) return true;
      }
    }
    return false;
  };
}

/**
 * The matte at full resolution: solid inside, mixed along the edge (on both sides of it), nothing elsewhere or in
 * specks. At the garment's edge a pixel mixes garment and background: its alpha is its difference from the
 * background over that of the garment beside it (the largest difference within EDGE_REACH pixels).
 */
function edgeMatte(
  outside: Uint8Array,
  { diff, lo, hi }: BackgroundDifference,
  kept: (x: number, y: number) => boolean,
  width: number,
  height: number,
): Uint8Array {
  const edgeAlpha = (x: number, y: number): number => {
    const d = diff[y * width + x]!;
    if (d <= lo) return 0;
    let full = d;
    for (let yy = Math.max(0, y - EDGE_REACH); yy <= Math.min(height - 1, y + EDGE_REACH); yy++) {
      for (let xx = Math.max(0, x - EDGE_REACH); xx <= Math.min(width - 1, x + EDGE_REACH); xx++)
        full = Math.max(full, diff[yy * width + xx]!);
    }
    return Math.min(255, Math.round(((d - lo) / Math.max(full - lo, hi - lo)) * 255));
  };
  const touchesOther = (i: number, x: number, y: number): boolean => {
    const o = outside[i];
    return (
      (x > 0 && outside[i - 1] !== o) ||
      (x < width - 1 && outside[i + 1] !== o) ||
      (y > 0 && outside[i - width] !== o) ||
      (y < height - 1 && outside[i + width] !== o)
    );
  };
  const alpha = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = y * width + x;
      const edge = touchesOther(i, x, y);
      if (outside[i] && !edge) continue;
      if (!kept(x, y)) continue;
      alpha[i] = edge ? edgeAlpha(x, y) : 255;
    }
  }
  return alpha;
}

/** An alpha map with its coverage and the box of its pixels above half; null when none are. */
export function summarise(alpha: Uint8Array, width: number, height: number): GarmentMatte | null {
  let covered = 0;
  let x0 = width;
  let y0 = height;
  let x1 = 0;
  let y1 = 0;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if (alpha[y * width + x]! <= 127) continue;
      covered++;
      if (x < x0) x0 = x;
      if (y < y0) y0 = y;
      if (x >= x1) x1 = x + 1;
      if (y >= y1) y1 = y + 1;
    }
  }
  if (covered === 0) return null;
  return { alpha: { data: alpha, width, height }, coverage: covered / (width * height), box: [x0, y0, x1, y1] };
}

/**
 * Light parts of a print that touch the garment's outline (white flowers at a
 * dress's edge) are reached by the background's flood and bite into the
 * garment. A bite is background that a closing of the garment (radius
 * BITE_RADIUS) covers and whose column of background is short; long columns
 * (the gap between trouser legs, the space under a sleeve, the neckline) stay.
 */
function fillBites(outside: Uint8Array, width: number, height: number): void {
  // Work inside the garment's box (plus the radius): the rest of the photo is background either way.
  let bx0 = width;
  let by0 = height;
  let bx1 = 0;
  let by1 = 0;
  for (let i = 0; i < outside.length; i++) {
    if (outside[i]) continue;
    const x = i % width;
    const y = (i - x) / width;
    if (x < bx0) bx0 = x;
    if (x >= bx1) bx1 = x + 1;
    if (y < by0) by0 = y;
    if (y >= by1) by1 = y + 1;
  }
  if (bx1 <= bx0) return;
  bx0 = Math.max(0, bx0 - BITE_RADIUS - 1);
  by0 = Math.max(0, by0 - BITE_RADIUS - 1);
  bx1 = Math.min(width, bx1 + BITE_RADIUS + 1);
  by1 = Math.min(height, by1 + BITE_RADIUS + 1);
  const bw = bx1 - bx0;
  const bh = by1 - by0;
  const garment = new Uint8Array(bw * bh);
  for (let y = 0; y < bh; y++) for (let x = 0; x < bw; x++) garment[y * bw + x] = 1 - outside[(by0 + y) * width + bx0 + x]!;
  const boxClosed = squareFilter(squareFilter(garment, bw, bh, BITE_RADIUS, true), bw, bh, BITE_RADIUS, false);
  const closed = (x: number, y: number): boolean => x >= bx0 && x < bx1 && y >= by0 && y < by1 && boxClosed[(y - by0) * bw + x - bx0] === 1;
  for (let x = bx0; x < bx1; x++) {
    let y = 0;
    while (y < height) {
      if (!outside[y * width + x]) {
        y++;
        continue;
      }
      let end = y;
      while (end < height && outside[end * width + x]) end++;
      if (end - y < BITE_LENGTH && y > 0 && end < height) {
        for (let k = y; k < end; k++) if (closed(x, k)) outside[k * width + x] = 0;
      }
      y = end;
    }
  }
}

/** Background that a faint garment's outline must stop: the steepest luminance step (per pixel) a backdrop shows. */
const FAINT_EDGE = 1.5;
/** The faint matte's threshold over the border's own variation (garmentMatte's is 10). */
const FAINT_DIFFERENCE = 3.5;
/** How many pixels the faint matte's background grows back over the outline's own ramp. */
const FAINT_GROW = 2;

/**
 * A second look for a garment that hardly differs from its backdrop (a white
 * shirt on white, light grey on a lighter grey gradient), for when
 * `garmentMatte` finds only fragments (its print). The backdrop is modelled
 * per pixel by blending its four borders inwards (a Coons patch, so an uneven
 * studio light is no difference), the threshold is tight, and the
 * background's flood may only cross pixels where the luminance changes
 * gently, so a garment's outline (a sharp step) stops it. A soft shadow
 * beside the garment may come out as garment here. A
 * print on a plain wall has no outline around it, so the flood still reaches
 * around the print and the result stays fragments. Null when nothing closes.
 */
export function faintGarmentMatte(image: RawImage): GarmentMatte | null {
  const { data, width, height, channels } = image;
  const n = width * height;
  const luma = new Float32Array(n);
  const cbs = new Float32Array(n);
  const crs = new Float32Array(n);
  for (let i = 0, j = 0; i < n; i++, j += channels) {
    const [l, cb, cr] = toYcc(data[j]!, data[j + 1]!, data[j + 2]!);
    luma[i] = l;
    cbs[i] = cb;
    crs[i] = cr;
  }
  const planeY = borderPatch(luma, width, height);
  const planeCb = borderPatch(cbs, width, height);
  const planeCr = borderPatch(crs, width, height);
  const diff = new Float32Array(n);
  for (let i = 0; i < n; i++) diff[i] = Math.hypot((luma[i]! - planeY[i]!) * LUMA_WEIGHT, cbs[i]! - planeCb[i]!, crs[i]! - planeCr[i]!);
  const gradient = luminanceSteps(luma, width, height);

  const band = Math.max(2, Math.round(Math.min(width, height) * BORDER));
  const borderDiffs: number[] = [];
  const borderSteps: number[] = [];
  for (let y = 0; y < height; y += 2) {
    for (let x = 0; x < width; x += 2) {
      if (x >= band && x < width - band && y >= band && y < height - band) continue;
      borderDiffs.push(diff[y * width + x]!);
      borderSteps.push(gradient[y * width + x]!);
    }
  }
  const p90 = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.9)] ?? 0;
  // Tighter than garmentMatte's threshold: what differs from the modelled backdrop by a few units is garment.
  const lo = p90(borderDiffs) * 1.6 + FAINT_DIFFERENCE;
  const edge = Math.max(FAINT_EDGE, p90(borderSteps) * 3);

  const outside = new Uint8Array(n);
  const queue = new Int32Array(n);
  let head = 0;
  let tail = 0;
  const passable = (i: number): boolean => diff[i]! < lo && gradient[i]! < edge;
  for (let i = 0; i < n; i++) {
    const x = i % width;
    const y = (i - x) / width;
    if ((x === 0 || y === 0 || x === width - 1 || y === height - 1) && passable(i)) ((outside[i] = 1), (queue[tail++] = i));
  }
  while (head < tail) {
    const i = queue[head++]!;
    const x = i % width;
    if (x > 0 && !outside[i - 1] && passable(i - 1)) ((outside[i - 1] = 1), (queue[tail++] = i - 1));
    if (x < width - 1 && !outside[i + 1] && passable(i + 1)) ((outside[i + 1] = 1), (queue[tail++] = i + 1));
    if (i >= width && !outside[i - width] && passable(i - width)) ((outside[i - width] = 1), (queue[tail++] = i - width));
    if (i < n - width && !outside[i + width] && passable(i + width)) ((outside[i + width] = 1), (queue[tail++] = i + width));
  }
  // The outline's ramp stopped the flood a pixel or two early: background-coloured rim pixels go back to the background.
  for (let step = 0; step < FAINT_GROW; step++) {
    const grown = outside.slice();
    for (let i = 0; i < n; i++) {
      if (outside[i] || diff[i]! >= lo * 0.5) continue;
      const x = i % width;
      if (
        (x > 0 && outside[i - 1]) ||
        (x < width - 1 && outside[i + 1]) ||
        (i >= width && outside[i - width]) ||
        (i < n - width && outside[i + width])
      )
        grown[i] = 1;
    }
    outside.set(grown);
  }

  const garment = largestComponent(outside, width);
  if (!garment) return null;
  const alpha = new Uint8Array(n);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      // A 3×3 mean of the hard mask: a one-pixel soft edge (the outline's colour is the garment's, not a blend).
      let sum = 0;
      for (let dy = -1; dy <= 1; dy++) {
        const yy = Math.min(height - 1, Math.max(0, y + dy));
        for (let dx = -1; dx <= 1; dx++) sum += garment[yy * width + Math.min(width - 1, Math.max(0, x + dx))]!;
      }
      alpha[y * width + x] = Math.round((sum / 9) * 255);
    }
  }
  return summarise(alpha, width, height);
}

/** Per-pixel luminance step: half the central difference of a 3×3-smoothed luminance. */
function luminanceSteps(luma: Float32Array, width: number, height: number): Float32Array {
  const smooth = new Float32Array(luma.length);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      let sum = 0;
      for (let dy = -1; dy <= 1; dy++) {
        const yy = Math.min(height - 1, Math.max(0, y + dy));
        for (let dx = -1; dx <= 1; dx++) sum += luma[yy * width + Math.min(width - 1, Math.max(0, x + dx))]!;
      }
      smooth[y * width + x] = sum / 9;
    }
  }
  const out = new Float32Array(luma.length);
  for (let y = 1; y < height - 1; y++) {
    for (let x = 1; x < width - 1; x++) {
      const i = y * width + x;
      out[i] = Math.hypot(smooth[i + 1]! - smooth[i - 1]!, smooth[i + width]! - smooth[i - width]!) * 0.5;
    }
  }
  return out;
}

/** A backdrop plane from the photo's four borders: each border line cleaned of garment and smoothed, then blended inwards. */
function borderPatch(plane: Float32Array, width: number, height: number): Float32Array {
  const top = cleanLine(plane.slice(0, width));
  const bottom = cleanLine(plane.slice((height - 1) * width, height * width));
  const left = cleanLine(Float32Array.from({ length: height }, (_, y) => plane[y * width]!));
  const right = cleanLine(Float32Array.from({ length: height }, (_, y) => plane[y * width + width - 1]!));
  const c00 = (top[0]! + left[0]!) / 2;
  const c10 = (top[width - 1]! + right[0]!) / 2;
  const c01 = (bottom[0]! + left[height - 1]!) / 2;
  const c11 = (bottom[width - 1]! + right[height - 1]!) / 2;
  const out = new Float32Array(width * height);
  for (let y = 0; y < height; y++) {
    const v = height > 1 ? y / (height - 1) : 0;
    for (let x = 0; x < width; x++) {
      const u = width > 1 ? x / (width - 1) : 0;
      const corners = (1 - u) * (1 - v) * c00 + u * (1 - v) * c10 + (1 - u) * v * c01 + u * v * c11;
      out[y * width + x] = (1 - v) * top[x]! + v * bottom[x]! + (1 - u) * left[y]! + u * right[y]! - corners;
    }
  }
  return out;
}

/** Values far from the line's median (a garment touching the border) are replaced by it; the rest is box-smoothed. */
function cleanLine(line: Float32Array): Float32Array {
  const sorted = [...line].sort((a, b) => a - b);
  const mid = sorted[sorted.length >> 1]!;
  const deviations = [...line].map((v) => Math.abs(v - mid)).sort((a, b) => a - b);
  const spread = deviations[deviations.length >> 1]! * 3 + 2;
  const clean = line.map((v) => (Math.abs(v - mid) > spread ? mid : v));
  const r = Math.max(2, Math.round(line.length * 0.05));
  const out = new Float32Array(line.length);
  for (let i = 0; i < line.length; i++) {
    let sum = 0;
    let count = 0;
    for (let k = Math.max(0, i - r); k <= Math.min(line.length - 1, i + r); k++) ((sum += clean[k]!), count++);
    out[i] = sum / count;
  }
  return out;
}

/** The largest 4-connected component of the pixels not `outside` (1 = garment), or null if there are none. */
function largestComponent(outside: Uint8Array, width: number): Uint8Array | null {
  const { label, sizes } = components(outside, width, 0);
  if (sizes.length === 0) return null;
  const best = sizes.indexOf(Math.max(...sizes));
  const out = new Uint8Array(outside.length);
  for (let i = 0; i < out.length; i++) out[i] = label[i] === best ? 1 : 0;
  return out;
}
