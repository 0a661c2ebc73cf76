/**
 * A garment's alpha matte from a product photo on a plain background: the
 * background's colour is learned from the photo's border (median and
 * spread), every pixel's difference from it (luminance weighted down, so
 * soft shadows stay background) becomes a soft alpha, and on a coarse grid
 * the mask is cleaned: background is what the border reaches, so holes
 * inside the garment (a white print on a white wall) are filled, and specks
 * apart from the garment are dropped.
 */
import type { Mask, RawImage } from '../../../vision/types.ts';

/** Border band sampled for the background, as a share of the shorter side. */
const BORDER = 0.03;
/** Luminance counts this much against chroma in the colour difference (shadows are mostly darker, not another hue). */
const LUMA_WEIGHT = 0.45;
/** Coarse grid for the clean-up, in pixels. */
const CELL = 4;
/** Components smaller than this share of the largest are specks. */
const MIN_COMPONENT = 0.08;

interface Background {
  y: number;
  cb: number;
  cr: number;
  spread: number;
}

const toYcc = (r: number, g: number, b: number): [number, number, number] => [
  0.299 * r + 0.587 * g + 0.114 * b,
  -0.1687 * r - 0.3313 * g + 0.5 * b,
  0.5 * r - 0.4187 * g - 0.0813 * b,
];

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
  return Math.hypot((l - bg.y) * LUMA_WEIGHT, cb - bg.cb, cr - bg.cr);
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
  const { data, width, height, channels } = image;
  const bg = backgroundOf(image);
  const lo = bg.spread * 1.6 + 6;
  const hi = lo + 14;
  const soft = new Uint8Array(width * height);
  for (let i = 0, j = 0; i < soft.length; i++, j += channels) {
    const [l, cb, cr] = toYcc(data[j]!, data[j + 1]!, data[j + 2]!);
    const d = difference(bg, l, cb, cr);
    soft[i] = d <= lo ? 0 : d >= hi ? 255 : Math.round(((d - lo) / (hi - lo)) * 255);
  }

  // Coarse grid: a cell is garment when most of its pixels are.
  const cw = Math.ceil(width / CELL);
  const ch = Math.ceil(height / CELL);
  const cells = new Uint8Array(cw * ch);
  for (let cy = 0; cy < ch; cy++) {
    for (let cx = 0; cx < cw; cx++) {
      let sum = 0;
      let n = 0;
      for (let y = cy * CELL; y < Math.min(height, (cy + 1) * CELL); y++) {
        for (let x = cx * CELL; x < Math.min(width, (cx + 1) * CELL); x++) {
          sum += soft[y * width + x]!;
          n++;
        }
      }
      cells[cy * cw + cx] = sum / n > 127 ? 1 : 0;
    }
  }
  // Background: non-garment cells reachable from the border. Everything else is garment (holes filled).
  const outside = new Uint8Array(cw * ch);
  const stack: number[] = [];
  const push = (i: number): void => {
    if (!outside[i] && !cells[i]) {
      outside[i] = 1;
      stack.push(i);
    }
  };
  for (let x = 0; x < cw; x++) {
    push(x);
    push((ch - 1) * cw + x);
  }
  for (let y = 0; y < ch; y++) {
    push(y * cw);
    push(y * cw + cw - 1);
  }
  while (stack.length > 0) {
    const i = stack.pop()!;
    const x = i % cw;
    if (x > 0) push(i - 1);
    if (x < cw - 1) push(i + 1);
    if (i >= cw) push(i - cw);
    if (i < (ch - 1) * cw) push(i + cw);
  }
  // Connected components of the garment; keep the big ones.
  const component = new Int32Array(cw * ch).fill(-1);
  const sizes: number[] = [];
  for (let start = 0; start < cw * ch; start++) {
    if (outside[start] || component[start]! >= 0) continue;
    const id = sizes.length;
    let size = 0;
    component[start] = id;
    stack.push(start);
    while (stack.length > 0) {
      const i = stack.pop()!;
      size++;
      const x = i % cw;
      for (const n of [x > 0 ? i - 1 : -1, x < cw - 1 ? i + 1 : -1, i - cw, i + cw]) {
        if (n < 0 || n >= cw * ch || outside[n] || component[n]! >= 0) continue;
        component[n] = id;
        stack.push(n);
      }
    }
    sizes.push(size);
  }
  const largest = Math.max(0, ...sizes);
  if (largest === 0 || largest < 0.01 * cw * ch) return null;
  const keep = sizes.map((s) => s >= MIN_COMPONENT * largest);

  // Full resolution: the soft alpha at the edges, solid inside kept components, nothing elsewhere.
  const alpha = new Uint8Array(width * height);
  let covered = 0;
  let x0 = width;
  let y0 = height;
  let x1 = 0;
  let y1 = 0;
  const kept = (cx: number, cy: number): boolean => {
    if (cx < 0 || cy < 0 || cx >= cw || cy >= ch) return false;
    const c = component[cy * cw + cx]!;
    return c >= 0 && keep[c]!;
  };
  for (let y = 0; y < height; y++) {
    const cy = Math.floor(y / CELL);
    for (let x = 0; x < width; x++) {
      const cx = Math.floor(x / CELL);
      let a = 0;
      if (kept(cx, cy)) {
        // Deep inside (all neighbours kept): solid; at the edge: the soft alpha.
        const interior = kept(cx - 1, cy) && kept(cx + 1, cy) && kept(cx, cy - 1) && kept(cx, cy + 1);
        a = interior ? 255 : soft[y * width + x]!;
      } else if (kept(cx - 1, cy) || kept(cx + 1, cy) || kept(cx, cy - 1) || kept(cx, cy + 1)) {
        a = soft[y * width + x]!;
      }
      alpha[y * width + x] = a;
      if (a > 127) {
        covered++;
        if (x < x0) x0 = x;
        if (y < y0) y0 = y;
        if (x >= x1) x1 = x + 1;
        if (y >= y1) y1 = y + 1;
      }
    }
  }
  if (covered === 0) return null;
  return { alpha: { data: alpha, width, height }, coverage: covered / (width * height), box: [x0, y0, x1, y1] };
}
