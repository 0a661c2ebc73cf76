/**
 * Cloth is continuous. A garment fitted in pieces (a body and two sleeves,
 * two trouser legs) or bent by the spline can leave narrow gaps inside its
 * own outline: between a sleeve and the body, at a seam, under the arm.
 * Where such a gap lies over the customer's old clothing, the old clothing
 * would show through it as a strip (or, removed, as a hole of wall inside
 * the body). Those gaps are closed with the garment's own cloth, mirrored
 * in from both sides of the gap along the row (a print goes on; blended
 * across, it was smeared into streaks). Gaps over skin (an arm between
 * sleeve and body), the head or the hands stay open. Skin is smooth: a
 * skin-coloured pixel amid a pattern (a striped sleeve's light stripes under
 * warm light) is cloth. A strip of old clothing as narrow between the body's
 * edge and a hanging arm's bare skin is the garment's too (a top reaches the
 * arm that hangs against it) where it runs down a quarter of a shoulder
 * width; it is mirrored in from the body's side (the mean colour of a
 * sequinned edge was a grey band). A seam's soft pixels, within 2 of
 * opaque cloth on both sides, are made opaque (closeSeams).
 */
import type { PersonAnalysis, RawImage } from '../../../vision/types.ts';
import type { Layer } from '../fit/render.ts';
import { isSkin, isSkinAt, luma, type SkinModel } from './colour.ts';
import { segmentDistance2, skeleton } from '../../../vision/body-layout.ts';
import { components } from '../../../kernel/raster.ts';
import { ARMS, HEAD_AND_HANDS } from './regions.ts';

/** The widest gap closed, in shoulder widths. */
const GAP = 0.2;
/**
 * A skin-coloured pixel is bare skin only where the person's luminance round it (within RADIUS pixels) deviates by
 * less than this: an old striped sleeve deviates 30–40 (its light stripes matched a pale customer's skin under a pink
 * light, and the gap was left open in stripes, #13), while skin, its shading and its edge against a garment stay
 * well under it.
 */
const TEXTURED = { deviation: 20, radius: 3 } as const;
/** Old clothing between the body's edge and an arm is covered where it runs down at least this many shoulder widths. */
const STRIP_ROWS = 0.25;
/**
 * A shorter strip is covered too where it runs down at least `rows` shoulder widths and `ratio` times its mean width:
 * a thin slit beside a hanging arm (#36), not a block beside a bent one, which filled in steps.
 */
const SHORT_STRIP = { rows: 0.1, ratio: 4 } as const;
/**
 * The wall past an arm is the mean of `sample` pixels; a run to the arm with `run` pixels in a row within `distance`
 * (RGB) of it is a gap between the arm and the body.
 */
const WALL = { sample: 4, distance: 30, run: 3 } as const;
/** A gap's end colour is the mean of this many garment pixels; a blended fill is smoothed over this many rows each way. */
const EDGE = 3;
const SMOOTH = 4;
/** A seam's soft pixels lie at most this many pixels from opaque (OPAQUE) cloth on each side (closeSeams). */
const SEAM = 2;
const OPAQUE = 0.98;
const DIRECTIONS = [
  [1, 0],
  [0, 1],
  [1, 1],
  [1, -1],
] as const;

/**
 * The layer with its narrow gaps over old clothing filled (see above); the layer itself is changed. A gap is a
 * run of a row between two solid garment pixels at most GAP apart; of it, the pixels of the person's old clothing
 * (not skin, head, hands or background) take the garment's pixel mirrored across the nearer end. Where that is not
 * solid garment (a narrow piece), they take the colours at the two ends, blended across and smoothed down.
 */
export function closeGaps(layer: Layer, image: RawImage, person: PersonAnalysis, skin: SkinModel | null, unit: number): Layer {
  const { x0, y0, width: lw, height: lh } = layer;
  const widest = Math.max(2, Math.round(GAP * unit));
  const { width, data, channels } = image;
  const blended = new Uint8Array(lw * lh);
  const armBones = skeleton(person.landmarks).bones.filter((bone) => ARMS.has(bone.region));
  for (let y = 0; y < lh; y++) {
    const row = y * lw;
    let last = -1;
    for (let x = 0; x < lw; x++) {
      if (layer.alpha[row + x]! < 0.5) continue;
      if (last >= 0 && x - last > 1 && x - last <= widest) fill(row, last, x, y);
      last = x;
    }
  }
  // The strips to the arms are found first, then filled where they run down some rows: found in a row or two
  // alone (an arm's edge, a hand's), they were ticks.
  const source = new Int32Array(lw * lh).fill(-1);
  const strip = new Uint8Array(lw * lh);
  for (let y = 0; y < lh; y++) {
    const row = y * lw;
    for (let x = 0; x < lw; x++) {
      if (layer.alpha[row + x]! < 0.5 || layer.sleeve[row + x]) continue;
      if (x + 1 < lw && layer.alpha[row + x + 1]! < 0.5) reachArm(row, x, y, 1);
      if (x > 0 && layer.alpha[row + x - 1]! < 0.5) reachArm(row, x, y, -1);
    }
  }
  fillStrips(Math.max(2, Math.round(STRIP_ROWS * unit)));
  smoothDown(layer, blended);
  closeSeams(layer);
  return layer;

  /** Fills the strips found by reachArm that span at least `rows` rows, each pixel from its mirrored source. */
  function fillStrips(rows: number): void {
    const { label, sizes } = components(strip, lw, 1);
    const top = new Int32Array(sizes.length).fill(lh);
    const bottom = new Int32Array(sizes.length).fill(-1);
    for (let o = 0; o < lw * lh; o++) {
      const id = label[o]!;
      if (id < 0) continue;
      const y = Math.floor(o / lw);
      top[id] = Math.min(top[id]!, y);
      bottom[id] = Math.max(bottom[id]!, y);
    }
    for (let o = 0; o < lw * lh; o++) {
      const id = label[o]!;
      const tall = id < 0 ? 0 : bottom[id]! - top[id]! + 1;
      if (id < 0 || (tall < rows && !(tall >= SHORT_STRIP.rows * unit && tall >= SHORT_STRIP.ratio * (sizes[id]! / tall)))) continue;
      layer.rgb.copyWithin(o * 3, source[o]! * 3, source[o]! * 3 + 3);
      layer.alpha[o] = 1;
    }
  }

  /**
   * From the body's edge at `edge` outwards (`dir`): a run of old clothing at most GAP long that ends at an arm's
   * bare skin takes the garment mirrored in across the edge. The old top between a narrower new top and a hanging
   * arm showed there as a strip below the sleeve (#52, #53).
   */
  function reachArm(row: number, edge: number, y: number, dir: -1 | 1): void {
    let end = edge + dir;
    for (; end >= 0 && end < lw && Math.abs(end - edge) <= widest; end += dir) {
      if (layer.alpha[row + end]! >= 0.5) return;
      const kind = bareOrOld(x0 + end, y0 + y);
      if (kind === 'other') return;
      if (kind === 'arm') break;
    }
    if (end < 0 || end >= lw || Math.abs(end - edge) > widest || Math.abs(end - edge) < 2) return;
    // The wall seen between the arm and the body (the person's matte may take it in) is a gap, not old clothing; a
    // pixel or two of its colour at the run's soft ends is not.
    const wall = wallBeyond(x0 + end, y0 + y, dir);
    for (let x = edge + dir, seen = 0; wall && x !== end; x += dir) {
      seen = nearColour(x0 + x, y0 + y, wall) ? seen + 1 : 0;
      if (seen >= WALL.run) return;
    }
    // Old clothing nearer an arm's bone than the arm's own edge is an old sleeve round the arm, not the body's side.
    const edgeOfArm = nearestArmBone2(x0 + end, y0 + y);
    for (let x = edge + dir; x !== end; x += dir) if (nearestArmBone2(x0 + x, y0 + y) < edgeOfArm) return;
    const mirror = (x: number): number => 2 * edge - x;
    for (let x = edge + dir; x !== end; x += dir) {
      if (mirror(x) < 0 || mirror(x) >= lw || layer.alpha[row + mirror(x)]! < 0.5) return;
    }
    // The edge itself is inside the garment now: its soft alpha let the old clothing show as a dotted line.
    for (let x = edge; x !== end; x += dir) {
      strip[row + x] = 1;
      source[row + x] = row + mirror(x);
    }
  }

  /**
   * The wall's colour in row `y` past the arm that starts at `x` (walking `dir`): the mean of WALL.sample pixels from
   * the first one outside the person, within 3·GAP of `x`; null when none is found there.
   */
  function wallBeyond(x: number, y: number, dir: -1 | 1): [number, number, number] | null {
    let u = x;
    while (Math.abs(u - x) <= 3 * widest && u >= 0 && u < width && person.matte.data[y * width + u]! >= 128) u += dir;
    if (Math.abs(u - x) > 3 * widest) return null;
    const sum: [number, number, number] = [0, 0, 0];
    let n = 0;
    for (; n < WALL.sample && u >= 0 && u < width; n++, u += dir) {
      const j = (y * width + u) * channels;
      for (let c = 0; c < 3; c++) sum[c]! += data[j + c]!;
    }
    return n > 0 ? [sum[0] / n, sum[1] / n, sum[2] / n] : null;
  }

  /** Whether the photo's pixel at (x, y) lies within WALL.distance of `colour` (RGB). */
  function nearColour(x: number, y: number, colour: readonly number[]): boolean {
    const j = (y * width + x) * channels;
    return Math.hypot(data[j]! - colour[0]!, data[j + 1]! - colour[1]!, data[j + 2]! - colour[2]!) < WALL.distance;
  }

  /** The squared distance from (x, y) to the nearest of the arms' bones (upper and lower arms). */
  function nearestArmBone2(x: number, y: number): number {
    let nearest = Infinity;
    for (const bone of armBones) nearest = Math.min(nearest, segmentDistance2(x, y, bone));
    return nearest;
  }

  /** Whether the person's pixel at (x, y) is an arm's bare skin, old clothing, or something else (wall, head, hands). */
  function bareOrOld(x: number, y: number): 'arm' | 'old' | 'other' {
    const i = y * width + x;
    const label = person.layout.labels[i]!;
    if (!skin || person.matte.data[i]! < 128 || HEAD_AND_HANDS.has(label)) return 'other';
    // Skin-coloured is skin here, textured or not: an arm's edge against a white top was covered with a bar.
    if (!isSkinAt(image, skin, i)) return 'old';
    return ARMS.has(label) ? 'arm' : 'other';
  }

  function fill(row: number, left: number, right: number, y: number): void {
    const a = row + left;
    const b = row + right;
    const from = edgeColour(row, left, -1);
    const to = edgeColour(row, right, 1);
    for (let x = left + 1; x < right; x++) {
      const o = row + x;
      const i = (y0 + y) * width + x0 + x;
      if (person.matte.data[i]! < 128 || HEAD_AND_HANDS.has(person.layout.labels[i]!)) continue;
      const j = i * channels;
      if (skin && isSkin(skin, data[j]!, data[j + 1]!, data[j + 2]!) && !textured(image, person, x0 + x, y0 + y)) continue;
      // Mirrored across the boundary between the nearer end and the gap.
      const mirror = x - left <= right - x ? 2 * left + 1 - x : 2 * right - 1 - x;
      if (mirror >= 0 && mirror < lw && layer.alpha[row + mirror]! >= 0.5) {
        layer.rgb.copyWithin(o * 3, (row + mirror) * 3, (row + mirror) * 3 + 3);
      } else {
        const t = (x - left) / (right - left);
        for (let c = 0; c < 3; c++) layer.rgb[o * 3 + c] = Math.round(from[c]! * (1 - t) + to[c]! * t);
        blended[o] = 1;
      }
      layer.alpha[o] = 1;
      layer.sleeve[o] = layer.sleeve[a]! | layer.sleeve[b]!;
    }
  }

  /** The garment's colour at one end of a gap: the mean of up to EDGE solid pixels from `x` away from the gap. */
  function edgeColour(row: number, x: number, dir: -1 | 1): [number, number, number] {
    const sum: [number, number, number] = [0, 0, 0];
    let n = 0;
    for (let k = x; k >= 0 && k < lw && Math.abs(k - x) < EDGE && layer.alpha[row + k]! >= 0.5; k += dir) {
      for (let c = 0; c < 3; c++) sum[c]! += layer.rgb[(row + k) * 3 + c]!;
      n++;
    }
    return [sum[0] / n, sum[1] / n, sum[2] / n];
  }
}

/**
 * Where a sleeve meets the body, the soft edges of the two (the slit between a hanging sleeve and the body in the
 * photo, anti-aliased, whether drawn as one piece or two) leave a line of pixels nothing covers fully, and the old
 * clothing under it showed through as a dotted light line down a black polo's sides (#111). A pixel less than
 * opaque with opaque cloth on both sides within SEAM pixels, along a row, a column or a diagonal, is cloth: it
 * becomes opaque, keeping its colour. A hole wider than that (lace, a sheer sleeve's mesh) or a translucent stretch
 * of cloth (tulle) stays as it is.
 */
function closeSeams(layer: Layer): void {
  const { width: lw, height: lh, alpha } = layer;
  const opaque = (x: number, y: number): boolean => x >= 0 && y >= 0 && x < lw && y < lh && alpha[y * lw + x]! >= OPAQUE;
  /** Whether opaque cloth lies within SEAM pixels of (x, y) going (dx, dy). */
  const clothFrom = (x: number, y: number, dx: number, dy: number): boolean => {
    for (let k = 1; k <= SEAM; k++) if (opaque(x + k * dx, y + k * dy)) return true;
    return false;
  };
  const seams: number[] = [];
  for (let y = 0; y < lh; y++) {
    for (let x = 0; x < lw; x++) {
      const a = alpha[y * lw + x]!;
      if (a >= OPAQUE || a === 0) continue;
      if (DIRECTIONS.some(([dx, dy]) => clothFrom(x, y, dx, dy) && clothFrom(x, y, -dx, -dy))) seams.push(y * lw + x);
    }
  }
  for (const o of seams) alpha[o] = 1;
}

/**
 * Blended gap pixels averaged with the blended pixels above and below them (within SMOOTH rows): each row is
 * blended from its own two ends, and ends that differ from row to row (a stripe, a fold, an anti-aliased edge)
 * would leave the fill in horizontal streaks.
 */
function smoothDown(layer: Layer, filled: Uint8Array): void {
  const { width: lw, height: lh } = layer;
  const smoothed = new Float32Array(lw * lh * 3);
  for (let x = 0; x < lw; x++) {
    for (let y = 0; y < lh; y++) {
      const o = y * lw + x;
      if (!filled[o]) continue;
      const sum = [0, 0, 0];
      let n = 0;
      for (let v = Math.max(0, y - SMOOTH); v <= Math.min(lh - 1, y + SMOOTH); v++) {
        const k = v * lw + x;
        if (!filled[k]) continue;
        for (let c = 0; c < 3; c++) sum[c]! += layer.rgb[k * 3 + c]!;
        n++;
      }
      for (let c = 0; c < 3; c++) smoothed[o * 3 + c] = sum[c]! / n;
    }
  }
  for (let o = 0; o < lw * lh; o++) {
    if (!filled[o]) continue;
    for (let c = 0; c < 3; c++) layer.rgb[o * 3 + c] = Math.round(smoothed[o * 3 + c]!);
  }
}

/** Whether the person's luminance deviates by TEXTURED.deviation or more within TEXTURED.radius of (x, y). */
function textured(image: RawImage, person: PersonAnalysis, x: number, y: number): boolean {
  const { width, height, data, channels } = image;
  let sum = 0;
  let squares = 0;
  let n = 0;
  for (let v = Math.max(0, y - TEXTURED.radius); v <= Math.min(height - 1, y + TEXTURED.radius); v++) {
    for (let u = Math.max(0, x - TEXTURED.radius); u <= Math.min(width - 1, x + TEXTURED.radius); u++) {
      const i = v * width + u;
      if (person.matte.data[i]! < 128) continue;
      const l = luma(data[i * channels]!, data[i * channels + 1]!, data[i * channels + 2]!);
      sum += l;
      squares += l * l;
      n++;
    }
  }
  const mean = sum / Math.max(1, n);
  return n > 0 && squares / n - mean * mean >= TEXTURED.deviation ** 2;
}
