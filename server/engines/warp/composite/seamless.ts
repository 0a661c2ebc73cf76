/**
 * Painted skin takes the light of the real skin round it. Skin painted over
 * an old collar is one colour from a model (with the photo's broad shading),
 * and where it meets the customer's own neck or chin it showed as a patch:
 * lighter or darker than the skin it joins, with a hard edge along the
 * layout's regions (#19, #28, #30), or two flat tones where two models met
 * (#97, #100).
 *
 * The painted pixels keep their own variation but are shifted by an offset
 * that is smooth inside them (harmonic: each pixel the mean of its
 * neighbours) and equals, on their border, the difference between the real
 * skin beside them and the paint. This is Pérez, Gangnet and Blake's
 * seamless cloning (2003) with the paint as the source. A border pixel that
 * is not skin (cloth, the wall, hair) sets nothing: the offset runs along it
 * unchanged. Painted pixels that touch no real skin stay as painted.
 */
import { boxOf } from '../../../kernel/raster.ts';
import type { RawImage } from '../../../vision/types.ts';

/** Gauss–Seidel sweeps at most, over-relaxed by OMEGA, and the largest change (levels) at which they stop. */
const SWEEPS = 400;
const OMEGA = 1.9;
const SETTLED = 0.05;

/**
 * Shifts the painted pixels of `out` (RGB, the photo's size) where `painted` is 1 so that they meet, without a
 * seam, the pixels beside them that `anchor` accepts as real skin (by index), whose colours are the photo's: the
 * first such pixel going straight out from the paint, within `reach` pixels.
 */
export function blendIntoSkin(out: Uint8Array, image: RawImage, painted: Uint8Array, anchor: (i: number) => boolean, reach = 1): void {
  const { width, height, data, channels } = image;
  const box = boxOf(painted, width);
  if (!box) return;
  const { x0, y0, x1, y1 } = box;
  const bw = x1 - x0 + 1;
  const bh = y1 - y0 + 1;
  // Per painted pixel of the box: its neighbours that are painted (offset unknown) or real skin (offset known).
  const inside = new Uint8Array(bw * bh);
  for (let y = 0; y < bh; y++) for (let x = 0; x < bw; x++) inside[y * bw + x] = painted[(y0 + y) * width + x0 + x] === 1 ? 1 : 0;
  // Real skin beside the paint: its colour in the photo.
  const skinAt = (i: number): readonly [number, number, number] | null =>
    anchor(i) ? [data[i * channels]!, data[i * channels + 1]!, data[i * channels + 2]!] : null;
  const neighbours: Int32Array[] = [];
  const anchors: Float32Array[] = [];
  const touches = new Uint8Array(bw * bh);
  const steps = [
    [-1, 0],
    [1, 0],
    [0, -1],
    [0, 1],
  ] as const;
  for (let y = 0; y < bh; y++) {
    for (let x = 0; x < bw; x++) {
      const o = y * bw + x;
      if (!inside[o]) continue;
      const own: number[] = [];
      const fixed: number[] = [];
      const i = (y0 + y) * width + x0 + x;
      for (const [dx, dy] of steps) {
        const nx = x + dx;
        const ny = y + dy;
        const gx = x0 + nx;
        const gy = y0 + ny;
        if (gx < 0 || gy < 0 || gx >= width || gy >= height) continue;
        if (nx >= 0 && ny >= 0 && nx < bw && ny < bh && inside[ny * bw + nx]) {
          own.push(ny * bw + nx);
          continue;
        }
        // The real skin met going on that way, within `reach` (the skin's soft edge lies between).
        let skin: readonly [number, number, number] | null = null;
        for (let k = 0; k < reach && !skin; k++) {
          const sx = gx + dx * k;
          const sy = gy + dy * k;
          if (sx < 0 || sy < 0 || sx >= width || sy >= height || painted[sy * width + sx] === 1) break;
          skin = skinAt(sy * width + sx);
        }
        if (!skin) continue;
        // The difference between the real skin beside and this pixel's paint is the offset there.
        fixed.push(skin[0] - out[i * 3]!, skin[1] - out[i * 3 + 1]!, skin[2] - out[i * 3 + 2]!);
      }
      neighbours[o] = Int32Array.from(own);
      anchors[o] = Float32Array.from(fixed);
      if (fixed.length > 0) touches[o] = 1;
    }
  }
  // Only pieces of paint that touch real skin somewhere move: the rest keep offset 0.
  const reached = new Uint8Array(bw * bh);
  const queue: number[] = [];
  for (let o = 0; o < touches.length; o++) if (touches[o]) ((reached[o] = 1), queue.push(o));
  for (let q = 0; q < queue.length; q++) {
    for (const n of neighbours[queue[q]!]!) {
      if (reached[n]) continue;
      reached[n] = 1;
      queue.push(n);
    }
  }
  if (queue.length === 0) return;
  // Solved over the reached pixels only, numbered in row order: each one's painted neighbours (as numbers), and the
  // sum and count of its known border offsets, which do not change.
  const order = Int32Array.from(queue).sort();
  const n = order.length;
  const number = new Int32Array(bw * bh).fill(-1);
  order.forEach((o, k) => (number[o] = k));
  const first = new Int32Array(n + 1);
  for (let k = 0; k < n; k++) first[k + 1] = first[k]! + neighbours[order[k]!]!.length;
  const next = new Int32Array(first[n]!);
  const fixedSum = new Float32Array(3 * n);
  const count = new Float32Array(n);
  let mean = [0, 0, 0];
  let anchored = 0;
  for (let k = 0; k < n; k++) {
    const o = order[k]!;
    neighbours[o]!.forEach((m, j) => (next[first[k]! + j] = number[m]!));
    const fixed = anchors[o]!;
    for (let j = 0; j < fixed.length; j++) fixedSum[3 * k + (j % 3)]! += fixed[j]!;
    count[k] = neighbours[o]!.length + fixed.length / 3;
    mean = mean.map((v, c) => v + fixedSum[3 * k + c]!);
    anchored += fixed.length / 3;
  }
  // Started from the mean border offset, the sweeps have less to carry across the paint.
  const offset = new Float32Array(3 * n);
  for (let k = 0; k < n; k++) for (let c = 0; c < 3; c++) offset[3 * k + c] = mean[c]! / anchored;
  for (let sweep = 0; sweep < SWEEPS; sweep++) {
    let largest = 0;
    for (let k = 0; k < n; k++) {
      const total = count[k]!;
      if (total === 0) continue;
      let r = fixedSum[3 * k]!;
      let g = fixedSum[3 * k + 1]!;
      let b = fixedSum[3 * k + 2]!;
      for (let j = first[k]!; j < first[k + 1]!; j++) {
        const m = 3 * next[j]!;
        r += offset[m]!;
        g += offset[m + 1]!;
        b += offset[m + 2]!;
      }
      const dr = OMEGA * (r / total - offset[3 * k]!);
      const dg = OMEGA * (g / total - offset[3 * k + 1]!);
      const db = OMEGA * (b / total - offset[3 * k + 2]!);
      offset[3 * k]! += dr;
      offset[3 * k + 1]! += dg;
      offset[3 * k + 2]! += db;
      largest = Math.max(largest, Math.abs(dr), Math.abs(dg), Math.abs(db));
    }
    if (largest < SETTLED) break;
  }
  for (let k = 0; k < n; k++) {
    const o = order[k]!;
    const i = (y0 + Math.floor(o / bw)) * width + x0 + (o % bw);
    for (let c = 0; c < 3; c++) out[i * 3 + c] = Math.max(0, Math.min(255, Math.round(out[i * 3 + c]! + offset[3 * k + c]!)));
  }
}
