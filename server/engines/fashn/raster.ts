/**
 * OpenCV's 8-connected drawing rules on a one-channel canvas, as cv2.circle
 * (filled), cv2.line (thickness 1 and more), cv2.ellipse2Poly and
 * cv2.fillConvexPoly apply them: the pose maps FASHN VTON was trained on are
 * drawn with these, and the model sees their exact pixels. Written from
 * OpenCV's documented algorithms: a midpoint circle's spans, Bresenham lines
 * clipped to the canvas first, a two-edge scan of a convex polygon in 16.16
 * fixed point after its outline, a thick line as a quad with round caps.
 */

/** A one-channel 8-bit image, row-major. */
export interface Canvas {
  data: Uint8Array;
  width: number;
  height: number;
}

/** OpenCV's fixed point: 16 fractional bits. */
const FRACTION = 65536;
const HALF = FRACTION / 2;

/** OpenCV's sine table: sin of each whole degree 0…450, to 7 decimals, as float32 (ellipse2Poly reads only these). */
const SIN_TABLE: Float32Array = Float32Array.from({ length: 451 }, (_, degree) => Number(Math.sin((degree * Math.PI) / 180).toFixed(7)));

/** cvRound: the nearest integer, halves to even (lrint in the default rounding mode). */
export function roundHalfEven(value: number): number {
  const nearest = Math.round(value);
  return nearest - value === 0.5 && nearest % 2 !== 0 ? nearest - 1 : nearest;
}

/** Integer division truncating toward zero, as C's int64 `/` (exact for the magnitudes drawn here). */
function divTrunc(numerator: number, denominator: number): number {
  return Math.trunc(numerator / denominator);
}

/** Arithmetic right shift by 16 of an integer beyond 32 bits. */
function unfix(value: number): number {
  return Math.floor(value / FRACTION);
}

function setPixel(canvas: Canvas, x: number, y: number, value: number): void {
  if (x >= 0 && x < canvas.width && y >= 0 && y < canvas.height) canvas.data[y * canvas.width + x] = value;
}

/** One row from x1 to x2 inclusive, clipped to the canvas. */
function span(canvas: Canvas, y: number, x1: number, x2: number, value: number): void {
  if (y < 0 || y >= canvas.height) return;
  const from = Math.max(0, x1);
  const to = Math.min(canvas.width - 1, x2);
  if (from <= to) canvas.data.fill(value, y * canvas.width + from, y * canvas.width + to + 1);
}

/** A filled circle of integer radius: the midpoint circle's four spans per step (cv2.circle, thickness −1, LINE_8). */
export function fillCircle(canvas: Canvas, cx: number, cy: number, radius: number, value: number): void {
  let [long, short] = [radius, 0];
  let [err, grow, shrink] = [0, 1, 2 * radius - 1];
  while (long >= short) {
    span(canvas, cy - short, cx - long, cx + long, value);
    span(canvas, cy + short, cx - long, cx + long, value);
    span(canvas, cy - long, cx - short, cx + short, value);
    span(canvas, cy + long, cx - short, cx + short, value);
    short++;
    err += grow;
    grow += 2;
    if (err > 0) {
      err -= shrink;
      shrink -= 2;
      long--;
    }
  }
}

/** A segment, its ends moved onto the edges of a width×height grid as cv::clipLine does; null when it misses the grid. */
function clipSegment(width: number, height: number, segment: readonly number[]): number[] | null {
  let [x1, y1, x2, y2] = segment as [number, number, number, number];
  const [right, bottom] = [width - 1, height - 1];
  const xCode = (x: number): number => (x < 0 ? 1 : 0) + (x > right ? 2 : 0);
  let c1 = xCode(x1) + (y1 < 0 ? 4 : 0) + (y1 > bottom ? 8 : 0);
  let c2 = xCode(x2) + (y2 < 0 ? 4 : 0) + (y2 > bottom ? 8 : 0);
  // The order matters: the second end is moved along the line through the already moved first end.
  if ((c1 & c2) === 0 && (c1 | c2) !== 0) {
    if (c1 & 12) {
      const edge = c1 < 8 ? 0 : bottom;
      x1 += divTrunc((edge - y1) * (x2 - x1), y2 - y1);
      y1 = edge;
      c1 = xCode(x1);
    }
    if (c2 & 12) {
      const edge = c2 < 8 ? 0 : bottom;
      x2 += divTrunc((edge - y2) * (x2 - x1), y2 - y1);
      y2 = edge;
      c2 = xCode(x2);
    }
    if ((c1 & c2) === 0 && (c1 | c2) !== 0) {
      if (c1) {
        const edge = c1 === 1 ? 0 : right;
        y1 += divTrunc((edge - x1) * (y2 - y1), x2 - x1);
        x1 = edge;
        c1 = 0;
      }
      if (c2) {
        const edge = c2 === 1 ? 0 : right;
        y2 += divTrunc((edge - x2) * (y2 - y1), x2 - x1);
        x2 = edge;
        c2 = 0;
      }
    }
  }
  return (c1 | c2) === 0 ? [x1, y1, x2, y2] : null;
}

/** A 1 px line between integer points (cv2.line, thickness 1, LINE_8): clipped, then Bresenham from its left end. */
export function line(canvas: Canvas, x1: number, y1: number, x2: number, y2: number, value: number): void {
  let ends = [x1, y1, x2, y2];
  const outside = (x: number, y: number): boolean => x < 0 || x >= canvas.width || y < 0 || y >= canvas.height;
  if (outside(x1, y1) || outside(x2, y2)) {
    const clipped = clipSegment(canvas.width, canvas.height, ends);
    if (!clipped) return;
    ends = clipped;
  }
  let [x, y, xEnd, yEnd] = ends as [number, number, number, number];
  if (xEnd < x) [x, y, xEnd, yEnd] = [xEnd, yEnd, x, y];
  const ySign = yEnd < y ? -1 : 1;
  const [dx, dy] = [xEnd - x, Math.abs(yEnd - y)];
  const steep = dy > dx;
  const [major, minor] = steep ? [dy, dx] : [dx, dy];
  // The sign of the error *before* each step decides whether it also moves along the minor axis.
  let err = major - 2 * minor;
  for (let i = 0; i <= major; i++) {
    setPixel(canvas, x, y, value);
    const diagonal = err < 0;
    err += diagonal ? 2 * major - 2 * minor : -2 * minor;
    if (steep) {
      y += ySign;
      if (diagonal) x++;
    } else {
      x++;
      if (diagonal) y += ySign;
    }
  }
}

/** OpenCV's Line2: a 1 px line between 16.16 fixed-point ends, stepped along its longer axis. */
function lineFixed(canvas: Canvas, x1: number, y1: number, x2: number, y2: number, value: number): void {
  const clipped = clipSegment(canvas.width * FRACTION, canvas.height * FRACTION, [x1, y1, x2, y2]);
  if (!clipped) return;
  let [ax, ay, bx, by] = clipped as [number, number, number, number];
  const odd = (v: number): number => (v % 2 === 0 ? v + 1 : v);
  const horizontal = Math.abs(bx - ax) > Math.abs(by - ay);
  if (horizontal ? bx < ax : by < ay) [ax, ay, bx, by] = [bx, by, ax, ay];
  // The far end is set on its own, rounded; the steps start from the near end.
  setPixel(canvas, unfix(bx + HALF), unfix(by + HALF), value);
  if (horizontal) {
    const yStep = divTrunc((by - ay) * FRACTION, odd(bx - ax));
    let [x, y] = [unfix(ax + HALF), ay + HALF];
    for (let count = unfix(bx - ax); count >= 0; count--, x++, y += yStep) setPixel(canvas, x, unfix(y), value);
  } else {
    const xStep = divTrunc((bx - ax) * FRACTION, odd(by - ay));
    let [x, y] = [ax + HALF, unfix(ay + HALF)];
    for (let count = unfix(by - ay); count >= 0; count--, y++, x += xStep) setPixel(canvas, unfix(x), y, value);
  }
}

/** One side of a convex polygon as the scan walks it: the vertex it reached, its x (16.16) on the current row, and its slope. */
interface Walker {
  vertex: number;
  readonly step: number;
  x: number;
  dx: number;
  untilRow: number;
}

/**
 * cv2.fillConvexPoly (LINE_8) of vertices with `shift` fractional bits (0
 * for pixel points, 16 for fixed point): the outline as 1 px lines, then
 * rows from the top vertex between two walkers going either way round. Each
 * walker's slope is set once per polygon edge and its x is rounded per row;
 * the scan ends when the walkers have used up the polygon's edges, so the
 * lowest row is the outline's alone.
 */
export function fillConvexPoly(canvas: Canvas, xs: readonly number[], ys: readonly number[], shift: 0 | 16, value: number): void {
  const n = xs.length;
  const toFixed = shift === 0 ? FRACTION : 1;
  const round = (v: number): number => (shift === 0 ? v : unfix(v + HALF));
  for (let i = 0; i < n; i++) {
    const j = (i + n - 1) % n;
    if (shift === 0) line(canvas, xs[j]!, ys[j]!, xs[i]!, ys[i]!, value);
    else lineFixed(canvas, xs[j]!, ys[j]!, xs[i]!, ys[i]!, value);
  }
  const top = ys.indexOf(Math.min(...ys));
  const [xMin, xMax, yMin] = [round(Math.min(...xs)), round(Math.max(...xs)), round(ys[top]!)];
  const yMax = round(Math.max(...ys));
  if (n < 3 || xMax < 0 || yMax < 0 || xMin >= canvas.width || yMin >= canvas.height) return;
  const walkers: Walker[] = [
    { vertex: top, step: 1, x: -FRACTION, dx: 0, untilRow: yMin },
    { vertex: top, step: n - 1, x: -FRACTION, dx: 0, untilRow: yMin },
  ];
  let edgesLeft = n;
  for (let y = yMin; y <= Math.min(yMax, canvas.height - 1); y++) {
    for (const w of walkers) {
      if (y < w.untilRow) continue;
      let [from, to] = [w.vertex, (w.vertex + w.step) % n];
      while (edgesLeft-- > 0) {
        const row = round(ys[to]!);
        if (row > y) {
          const [xFrom, xTo] = [xs[from]! * toFixed, xs[to]! * toFixed];
          w.vertex = to;
          w.untilRow = row;
          w.x = xFrom;
          // The slope per row, rounded half up (C's truncating division of a doubled numerator).
          w.dx = divTrunc((xTo - xFrom) * 2 + (row - y), 2 * (row - y));
          break;
        }
        [from, to] = [to, (to + w.step) % n];
      }
    }
    if (edgesLeft < 0) break;
    const [a, b] = walkers as [Walker, Walker];
    const [left, right] = a.x > b.x ? [b, a] : [a, b];
    if (y >= 0) span(canvas, y, unfix(left.x + HALF), unfix(right.x + HALF), value);
    a.x += a.dx;
    b.x += b.dx;
  }
}

/**
 * cv2.line of `thickness` ≥ 2 between integer points: the segment first cut
 * to the canvas grown by `thickness` on every side (recent OpenCV does this
 * so far-off ends cost nothing; it moves the ends to whole pixels, which the
 * reference's maps show), then a quad `thickness`/2 either side of it (its
 * offset rounded in 16.16), filled, and a filled circle of radius
 * round(thickness/2) at each end.
 */
export function thickLine(canvas: Canvas, x1: number, y1: number, x2: number, y2: number, thickness: number, value: number): void {
  if (thickness <= 1) {
    line(canvas, x1, y1, x2, y2, value);
    return;
  }
  const grown = [x1, y1, x2, y2].map((v) => v + thickness);
  const cut = clipSegment(canvas.width + 2 * thickness, canvas.height + 2 * thickness, grown);
  if (!cut) return;
  const [ax, ay, bx, by] = cut.map((v) => v - thickness) as [number, number, number, number];
  const [dx, dy] = [ax - bx, by - ay];
  const length2 = dx * dx + dy * dy;
  const halfWidth = thickness * (FRACTION / 2);
  if (length2 > Number.EPSILON) {
    const r = (halfWidth + (thickness & 1) * HALF) / Math.sqrt(length2);
    const [ox, oy] = [roundHalfEven(dy * r), roundHalfEven(dx * r)];
    const [fx1, fy1, fx2, fy2] = [ax * FRACTION, ay * FRACTION, bx * FRACTION, by * FRACTION];
    fillConvexPoly(canvas, [fx1 + ox, fx1 - ox, fx2 - ox, fx2 + ox], [fy1 + oy, fy1 - oy, fy2 - oy, fy2 + oy], 16, value);
  }
  const capRadius = unfix(halfWidth + HALF);
  fillCircle(canvas, ax, ay, capRadius, value);
  fillCircle(canvas, bx, by, capRadius, value);
}

/**
 * cv2.ellipse2Poly(centre, (a, b), degrees, 0, 360, 1): a point per whole
 * degree from OpenCV's sine table, rotated, rounded half to even, repeats in
 * a row dropped (the closing point stays).
 */
export function ellipsePoly(cx: number, cy: number, a: number, b: number, degrees: number): { xs: number[]; ys: number[] } {
  let angle = degrees;
  while (angle < 0) angle += 360;
  while (angle > 360) angle -= 360;
  const [cos, sin] = [SIN_TABLE[450 - angle]!, SIN_TABLE[angle]!];
  const xs: number[] = [];
  const ys: number[] = [];
  for (let t = 0; t <= 360; t++) {
    const u = a * SIN_TABLE[450 - t]!;
    const v = b * SIN_TABLE[t]!;
    const x = roundHalfEven(cx + u * cos - v * sin);
    const y = roundHalfEven(cy + u * sin + v * cos);
    if (xs.length === 0 || x !== xs[xs.length - 1] || y !== ys[ys.length - 1]) {
      xs.push(x);
      ys.push(y);
    }
  }
  return xs.length === 1 ? { xs: [cx, cx], ys: [cy, cy] } : { xs, ys };
}
