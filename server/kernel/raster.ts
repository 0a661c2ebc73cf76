/**
 * Raster primitives on typed arrays, shared by the vision models' post-processing and the warp engine: a box
 * mean, a square dilation or erosion of a 0/1 mask, and connected components. No allocation per pixel; they
 * import nothing.
 */

/** 1 / (the number of window positions inside 0..size−1) for each position: the clipped window's size. */
function inverseCounts(size: number, r: number): Float32Array {
  const out = new Float32Array(size);
  for (let k = 0; k < size; k++) out[k] = 1 / (Math.min(size - 1, k + r) - Math.max(0, k - r) + 1);
  return out;
}

/**
 * Mean over a (2r+1)² window at every pixel (window clipped at the edges), with running sums. `out` and `tmp` may be
 * given (width × height each) by a caller that filters many images of one size.
 */
export function boxMean(
  src: Float32Array,
  width: number,
  height: number,
  r: number,
  out = new Float32Array(width * height),
  tmp = new Float32Array(width * height),
): Float32Array {
  const invX = inverseCounts(width, r);
  const invY = inverseCounts(height, r);
  // Horizontal pass: a running sum along each row.
  for (let y = 0; y < height; y++) {
    const row = y * width;
    let sum = 0;
    for (let x = 0; x < Math.min(r, width); x++) sum += src[row + x]!;
    for (let x = 0; x < width; x++) {
      if (x + r < width) sum += src[row + x + r]!;
      if (x > r) sum -= src[row + x - r - 1]!;
      tmp[row + x] = sum * invX[x]!;
    }
  }
  // Vertical pass over whole rows at once.
  const sums = new Float64Array(width);
  for (let y = 0; y < Math.min(r, height); y++) for (let x = 0; x < width; x++) sums[x]! += tmp[y * width + x]!;
  for (let y = 0; y < height; y++) {
    if (y + r < height) for (let x = 0, o = (y + r) * width; x < width; x++) sums[x]! += tmp[o + x]!;
    if (y > r) for (let x = 0, o = (y - r - 1) * width; x < width; x++) sums[x]! -= tmp[o + x]!;
    const inv = invY[y]!;
    for (let x = 0, o = y * width; x < width; x++) out[o + x] = sums[x]! * inv;
  }
  return out;
}

/** Running max (or min) over a window of 2r+1 along rows, then columns: a square dilation (erosion) of a 0/1 mask. */
export function squareFilter(mask: Uint8Array, width: number, height: number, r: number, max: boolean): Uint8Array {
  const tmp = new Uint8Array(mask.length);
  const out = new Uint8Array(mask.length);
  const hit = max ? 1 : 0;
  for (let y = 0; y < height; y++) {
    let last = -Infinity;
    for (let x = 0; x < width + r; x++) {
      if (x < width && mask[y * width + x] === hit) last = x;
      const at = x - r;
      // `last` is the latest hit up to at + r: one lies in the window when it is not before at − r.
      if (at >= 0) tmp[y * width + at] = last >= at - r ? hit : 1 - hit;
    }
  }
  for (let x = 0; x < width; x++) {
    let last = -Infinity;
    for (let y = 0; y < height + r; y++) {
      if (y < height && tmp[y * width + x] === hit) last = y;
      const at = y - r;
      if (at >= 0) out[at * width + x] = last >= at - r ? hit : 1 - hit;
    }
  }
  return out;
}

/** The 4-connected components of the pixels where `mask` is `value`: a label per pixel (−1 elsewhere) and each one's size. */
export function components(mask: Uint8Array, width: number, value: number): { label: Int32Array; sizes: number[] } {
  const n = mask.length;
  const label = new Int32Array(n).fill(-1);
  const queue = new Int32Array(n);
  const sizes: number[] = [];
  for (let start = 0; start < n; start++) {
    if (mask[start] !== value || label[start]! >= 0) continue;
    const id = sizes.length;
    let head = 0;
    let tail = 0;
    label[start] = id;
    queue[tail++] = start;
    while (head < tail) {
      const i = queue[head++]!;
      const x = i % width;
      if (x > 0 && mask[i - 1] === value && label[i - 1]! < 0) ((label[i - 1] = id), (queue[tail++] = i - 1));
      if (x < width - 1 && mask[i + 1] === value && label[i + 1]! < 0) ((label[i + 1] = id), (queue[tail++] = i + 1));
      if (i >= width && mask[i - width] === value && label[i - width]! < 0) ((label[i - width] = id), (queue[tail++] = i - width));
      if (i < n - width && mask[i + width] === value && label[i + width]! < 0) ((label[i + width] = id), (queue[tail++] = i + width));
    }
    sizes.push(tail);
  }
  return { label, sizes };
}

/**
 * A 4-connected flood over a grid `width` × `height` cells: from the seed cells through every cell where
 * `passes(x, y)`; returns the cells reached (seeds first), in the order they were reached.
 */
export function flood4(width: number, height: number, seeds: readonly number[], passes: (x: number, y: number) => boolean): number[] {
  const seen = new Uint8Array(width * height);
  const reached: number[] = [];
  const stack: number[] = [];
  for (const k of seeds) {
    if (seen[k]) continue;
    seen[k] = 1;
    reached.push(k);
    stack.push(k);
  }
  // The four neighbours without an array per cell: this runs over every pixel of a region.
  const visit = (nx: number, ny: number): void => {
    const n = ny * width + nx;
    if (seen[n] || !passes(nx, ny)) return;
    seen[n] = 1;
    reached.push(n);
    stack.push(n);
  };
  while (stack.length > 0) {
    const k = stack.pop()!;
    const x = k % width;
    const y = (k - x) / width;
    if (x > 0) visit(x - 1, y);
    if (x < width - 1) visit(x + 1, y);
    if (y > 0) visit(x, y - 1);
    if (y < height - 1) visit(x, y + 1);
  }
  return reached;
}

/**
 * For each pixel where `passes` is 1, the nearest pixel where `from` is 1 (reached through passing pixels,
 * 4-connected, at most `reach` steps), or −1.
 */
export function nearestThrough(width: number, height: number, from: Uint8Array, passes: Uint8Array, reach: number): Int32Array {
  const n = width * height;
  const source = new Int32Array(n).fill(-1);
  const distance = new Uint16Array(n);
  const queue = new Int32Array(n);
  let tail = 0;
  for (let i = 0; i < n; i++) {
    if (!from[i]) continue;
    source[i] = i;
    const x = i % width;
    if (
      (x > 0 && passes[i - 1]) ||
      (x < width - 1 && passes[i + 1]) ||
      (i >= width && passes[i - width]) ||
      (i + width < n && passes[i + width])
    )
      queue[tail++] = i;
  }
  // One ring at a time, so the first source to reach a pixel is its nearest.
  for (let head = 0; head < tail; head++) {
    const i = queue[head]!;
    const d = distance[i]! + 1;
    if (d > reach) continue;
    const x = i % width;
    for (let k = 0; k < 4; k++) {
      const m = k === 0 ? (x > 0 ? i - 1 : -1) : k === 1 ? (x < width - 1 ? i + 1 : -1) : k === 2 ? i - width : i + width;
      if (m < 0 || m >= n || source[m]! >= 0 || !passes[m]) continue;
      source[m] = source[i]!;
      distance[m] = d;
      queue[tail++] = m;
    }
  }
  return source;
}

/** The smallest box [x0, x1] × [y0, y1] holding every nonzero pixel of a mask `width` wide; null when none is. */
export function boxOf(mask: Uint8Array, width: number): { x0: number; y0: number; x1: number; y1: number } | null {
  let x0 = width;
  let y0 = Infinity;
  let x1 = -1;
  let y1 = -1;
  for (let i = 0; i < mask.length; i++) {
    if (mask[i] === 0) continue;
    const x = i % width;
    const y = (i - x) / width;
    if (x < x0) x0 = x;
    if (x > x1) x1 = x;
    if (y < y0) y0 = y;
    y1 = y;
  }
  return x1 < 0 ? null : { x0, y0, x1, y1 };
}
