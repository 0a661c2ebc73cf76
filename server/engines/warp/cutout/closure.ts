/**
 * A front closure: the buttons, zip or edge of a jacket, coat or cardigan, a line down the centre of the
 * garment's body from the neck to the hem. A jumper or tee has none; a polo's placket stops at the chest.
 */
import type { GarmentCutout } from '../types.ts';

/** Measures of a flat garment's centre line and sleeves. */
export interface ClosureFeatures {
  /** The strongest vertical edge near the centre line over the strongest elsewhere on the body (p90): > 1 stands out. */
  centreLine: number;
  /** Share of the body's rows (neck to hem) where that edge is there, at least twice the row's typical edge. */
  lineSpan: number;
  /** How far the sleeves reach down, from the shoulders, as a share of the shoulders-to-hem length (-1: none). */
  sleeveLength: number;
}

const OPAQUE = 200;

/**
 * Long sleeves with a centre line that stands out over most of the body's length: a jacket, coat or cardigan.
 * Short sleeves never (a shirt's placket looks the same); with no sleeve ends found (sleeveless, or sleeves lying
 * where they are not found) only a very clear line counts. Calibration: bench/RESULTS.md.
 */
const LONG_SLEEVES = 0.7;
const LINE = { sleeved: { centre: 1.4, span: 0.6 }, unknown: { centre: 2.5, span: 0.8 } } as const;

/** Whether a garment read as a top has a jacket's front: its category is then outerwear. */
export function looksLikeOuterwear(cutout: GarmentCutout): boolean {
  const f = closureFeatures(cutout);
  if (!f) return false;
  const line = f.sleeveLength >= LONG_SLEEVES ? LINE.sleeved : f.sleeveLength < 0 ? LINE.unknown : null;
  return line !== null && f.centreLine >= line.centre && f.lineSpan >= line.span;
}

export function closureFeatures(cutout: GarmentCutout): ClosureFeatures | null {
  const { image, landmarks: l } = cutout;
  const { width: w, height: h, data } = image;
  const hemY = l.leftHem && l.rightHem ? (l.leftHem.y + l.rightHem.y) / 2 : null;
  const neck =
    l.neckFront ?? (l.neckLeft && l.neckRight ? { x: (l.neckLeft.x + l.neckRight.x) / 2, y: (l.neckLeft.y + l.neckRight.y) / 2 } : null);
  if (hemY === null || !neck || hemY - neck.y < 20) return null;
  const sides = l.leftArmpit && l.rightArmpit ? [l.leftArmpit.x, l.rightArmpit.x] : [l.leftHem!.x, l.rightHem!.x];
  const x0 = Math.max(1, Math.round(Math.min(...sides)));
  const x1 = Math.min(w - 2, Math.round(Math.max(...sides)));
  const bodyW = x1 - x0;
  if (bodyW < 20) return null;
  const cx = neck.x;
  const half = Math.max(3, Math.round(0.1 * bodyW));
  const length = hemY - neck.y;
  const y0 = Math.round(neck.y + 0.05 * length);
  const y1 = Math.round(hemY - 0.08 * length);
  const lum = (i: number): number => 0.299 * data[i]! + 0.587 * data[i + 1]! + 0.114 * data[i + 2]!;
  const rows = y1 - y0 + 1;
  const grad = new Float32Array(rows * (x1 - x0 + 1));
  const colScore = new Float64Array(x1 - x0 + 1);
  for (let y = y0; y <= y1; y++) {
    for (let x = x0; x <= x1; x++) {
      const i = (y * w + x) * 4;
      if (data[i + 3]! < OPAQUE || data[i - 4 + 3]! < OPAQUE || data[i + 4 + 3]! < OPAQUE) continue;
      const g = Math.abs(lum(i + 4) - lum(i - 4));
      grad[(y - y0) * (x1 - x0 + 1) + (x - x0)] = g;
      colScore[x - x0]! += g / rows;
    }
  }
  // A line one or two pixels wide, or slightly slanted: each column counts its best neighbour.
  const spread = Float64Array.from(colScore, (_, k) => Math.max(colScore[k - 1] ?? 0, colScore[k]!, colScore[k + 1] ?? 0));
  let peak = 0;
  let peakX = -1;
  const others: number[] = [];
  for (let k = 0; k < spread.length; k++) {
    const x = x0 + k;
    if (Math.abs(x - cx) <= half) {
      if (spread[k]! > peak) [peak, peakX] = [spread[k]!, x];
    } else if (Math.abs(x - cx) > 2 * half && x > x0 + 0.05 * bodyW && x < x1 - 0.05 * bodyW) others.push(spread[k]!);
  }
  others.sort((a, b) => a - b);
  const p90 = others[Math.floor(0.9 * (others.length - 1))] ?? 0;
  let present = 0;
  for (let r = 0; r < rows; r++) {
    const row = grad.subarray(r * (x1 - x0 + 1), (r + 1) * (x1 - x0 + 1));
    const sorted = Float32Array.from(row).sort();
    const typical = Math.max(4, sorted[Math.floor(sorted.length / 2)]!);
    let best = 0;
    for (let x = peakX - 2; x <= peakX + 2; x++) best = Math.max(best, row[x - x0] ?? 0);
    if (best >= 2 * typical) present++;
  }
  const shoulderY = l.leftShoulder && l.rightShoulder ? (l.leftShoulder.y + l.rightShoulder.y) / 2 : neck.y;
  const sleeveY = l.leftSleeveEnd && l.rightSleeveEnd ? (l.leftSleeveEnd.y + l.rightSleeveEnd.y) / 2 : null;
  return {
    centreLine: peak / Math.max(1, p90),
    lineSpan: present / rows,
    sleeveLength: l.sleevesHang ? 1 : sleeveY === null ? -1 : (sleeveY - shoulderY) / Math.max(1, hemY - shoulderY),
  };
}
