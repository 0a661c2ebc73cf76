/**
 * A 2-D thin-plate spline: the smoothest mapping (least bending energy) that
 * takes each source point to its target, plus an affine part. With
 * `smoothing` > 0 it may miss the points slightly in exchange for less
 * bending (useful when landmarks are noisy or nearly coincide).
 */
import type { Point } from '../types.ts';

export interface ThinPlateSpline {
  /** Maps a point; exact at the control points when smoothing is 0. */
  map(x: number, y: number): Point;
  readonly sources: readonly Point[];
}

const kernel = (r2: number): number => (r2 === 0 ? 0 : r2 * Math.log(r2));

/** Solves A·x = b in place by Gaussian elimination with partial pivoting. */
function solve(a: Float64Array[], b: Float64Array): Float64Array {
  const n = b.length;
  for (let col = 0; col < n; col++) {
    let pivot = col;
    for (let row = col + 1; row < n; row++) if (Math.abs(a[row]![col]!) > Math.abs(a[pivot]![col]!)) pivot = row;
    if (Math.abs(a[pivot]![col]!) < 1e-12) throw new Error('thin-plate spline: control points are degenerate (collinear or repeated)');
    [a[col], a[pivot]] = [a[pivot]!, a[col]!];
    [b[col], b[pivot]] = [b[pivot]!, b[col]!];
    const p = a[col]!;
    for (let row = col + 1; row < n; row++) {
      const r = a[row]!;
      const f = r[col]! / p[col]!;
      if (f === 0) continue;
      for (let k = col; k < n; k++) r[k]! -= f * p[k]!;
      b[row]! -= f * b[col]!;
    }
  }
  const x = new Float64Array(n);
  for (let row = n - 1; row >= 0; row--) {
    let sum = b[row]!;
    for (let k = row + 1; k < n; k++) sum -= a[row]![k]! * x[k]!;
    x[row] = sum / a[row]![row]!;
  }
  return x;
}

/**
 * Fits the spline taking `sources[i]` to `targets[i]`. Coordinates are
 * normalised internally (centred, scaled to unit size) so the system stays
 * well conditioned for pixel coordinates.
 */
export function fitThinPlateSpline(sources: readonly Point[], targets: readonly Point[], smoothing = 0): ThinPlateSpline {
  const n = sources.length;
  if (n !== targets.length) throw new Error('thin-plate spline: sources and targets differ in length');
  if (n < 3) throw new Error('thin-plate spline: needs at least 3 control points');
  let cx = 0;
  let cy = 0;
  for (const p of sources) {
    cx += p.x / n;
    cy += p.y / n;
  }
  let scale = 0;
  for (const p of sources) scale = Math.max(scale, Math.abs(p.x - cx), Math.abs(p.y - cy));
  scale = scale || 1;
  const xs = sources.map((p) => (p.x - cx) / scale);
  const ys = sources.map((p) => (p.y - cy) / scale);

  const size = n + 3;
  const matrix = (): Float64Array[] => {
    const a = Array.from({ length: size }, () => new Float64Array(size));
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        const dx = xs[i]! - xs[j]!;
        const dy = ys[i]! - ys[j]!;
        a[i]![j] = kernel(dx * dx + dy * dy) + (i === j ? smoothing : 0);
      }
      a[i]![n] = 1;
      a[i]![n + 1] = xs[i]!;
      a[i]![n + 2] = ys[i]!;
      a[n]![i] = 1;
      a[n + 1]![i] = xs[i]!;
      a[n + 2]![i] = ys[i]!;
    }
    return a;
  };
  const bx = new Float64Array(size);
  const by = new Float64Array(size);
  for (let i = 0; i < n; i++) {
    bx[i] = targets[i]!.x;
    by[i] = targets[i]!.y;
  }
  const wx = solve(matrix(), bx);
  const wy = solve(matrix(), by);

  return {
    sources,
    map(x: number, y: number): Point {
      const u = (x - cx) / scale;
      const v = (y - cy) / scale;
      let rx = wx[n]! + wx[n + 1]! * u + wx[n + 2]! * v;
      let ry = wy[n]! + wy[n + 1]! * u + wy[n + 2]! * v;
      for (let i = 0; i < n; i++) {
        const dx = u - xs[i]!;
        const dy = v - ys[i]!;
        const k = kernel(dx * dx + dy * dy);
        rx += wx[i]! * k;
        ry += wy[i]! * k;
      }
      return { x: rx, y: ry };
    },
  };
}

/**
 * The spline evaluated on a grid every `step` pixels over a width×height
 * area (plus one row and column past the edge), for bilinear lookup: far
 * cheaper than evaluating every pixel, and smooth enough at step 4–8.
 */
export interface MappingGrid {
  step: number;
  columns: number;
  rows: number;
  x: Float32Array;
  y: Float32Array;
}

export function mappingGrid(
  spline: Pick<ThinPlateSpline, 'map'>,
  originX: number,
  originY: number,
  width: number,
  height: number,
  step: number,
): MappingGrid {
  const columns = Math.ceil(width / step) + 1;
  const rows = Math.ceil(height / step) + 1;
  const x = new Float32Array(columns * rows);
  const y = new Float32Array(columns * rows);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < columns; c++) {
      const p = spline.map(originX + c * step, originY + r * step);
      x[r * columns + c] = p.x;
      y[r * columns + c] = p.y;
    }
  }
  return { step, columns, rows, x, y };
}
