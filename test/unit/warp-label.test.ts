/**
 * The brand label inside a garment's back neck (label.ts): found where it is sewn, a small white or black patch on the
 * centre line near the top, and covered with the cloth round it; a print on the chest, a white patch off the centre
 * line and a garment with no neck opening keep theirs.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { coverLabel, findLabel } from '../../server/engines/warp/cutout/label.ts';
import type { GarmentLandmarks } from '../../server/engines/warp/types.ts';

const W = 300;
const H = 300;
const CLOTH = [120, 110, 100];
/** A flat grey-brown garment from (30, 20) to (270, 280), its shoulders 220 apart and its neck opening at the top centre. */
function garment(): { data: Uint8Array; width: number; height: number } {
  const data = new Uint8Array(W * H * 4);
  for (let y = 20; y < 280; y++) for (let x = 30; x < 270; x++) data.set([...CLOTH, 255], (y * W + x) * 4);
  return { data, width: W, height: H };
}
const landmarks: GarmentLandmarks = {
  leftShoulder: { x: 260, y: 30 },
  rightShoulder: { x: 40, y: 30 },
  neckLeft: { x: 180, y: 20 },
  neckRight: { x: 120, y: 20 },
};
/** A white patch with three lines of black writing across it, [x0, y0, x1, y1). */
function paintLabel(image: { data: Uint8Array }, box: [number, number, number, number], colour = [250, 250, 250]): void {
  for (let y = box[1]; y < box[3]; y++) {
    for (let x = box[0]; x < box[2]; x++) {
      const writing = (y - box[1]) % 6 === 3 && x > box[0] + 4 && x < box[2] - 4;
      image.data.set([...(writing ? [20, 20, 20] : colour), 255], (y * W + x) * 4);
    }
  }
}
const distance = (data: Uint8Array, x: number, y: number, c: readonly number[]): number => {
  const o = (y * W + x) * 4;
  return Math.hypot(data[o]! - c[0]!, data[o + 1]! - c[1]!, data[o + 2]! - c[2]!);
};

test('a white label at the back of the neck is found and covered with the cloth round it', () => {
  const image = garment();
  paintLabel(image, [135, 40, 165, 60]);
  const box = findLabel(image, landmarks);
  assert.ok(box, 'found');
  assert.ok(box[0] <= 136 && box[1] <= 41 && box[2] >= 164 && box[3] >= 59, `box ${box}`);
  coverLabel(image, box);
  for (let y = 40; y < 60; y++)
    for (let x = 135; x < 165; x++)
      assert.ok(distance(image.data, x, y, CLOTH) < 12, `(${x}, ${y}) still ${distance(image.data, x, y, CLOTH).toFixed(0)} off the cloth`);
});

test('a black label is found as a white one is', () => {
  const image = garment();
  paintLabel(image, [138, 36, 162, 54], [15, 15, 15]);
  assert.ok(findLabel(image, landmarks));
});

test('a print on the chest, a white patch off the centre line and a garment with no neck opening are left alone', () => {
  const chest = garment();
  paintLabel(chest, [135, 150, 165, 170]);
  assert.equal(findLabel(chest, landmarks), null, 'on the chest');
  // Labels lie within a third of the shoulders' width of the garment's top (0.09 to 0.29 on the wide set's four).
  const high = garment();
  paintLabel(high, [135, 95, 165, 115]);
  assert.equal(findLabel(high, landmarks), null, 'high on the chest');
  const aside = garment();
  paintLabel(aside, [200, 40, 230, 60]);
  assert.equal(findLabel(aside, landmarks), null, 'off the centre line');
  const strapless = garment();
  paintLabel(strapless, [135, 40, 165, 60]);
  const { neckLeft: _l, neckRight: _r, ...noNeck } = landmarks;
  assert.equal(findLabel(strapless, noNeck), null, 'no neck opening');
  // A white garment is no label on itself.
  const white = garment();
  for (let y = 20; y < 280; y++) for (let x = 30; x < 270; x++) white.data.set([245, 245, 245, 255], (y * W + x) * 4);
  assert.equal(findLabel(white, landmarks), null, 'a white garment');
});
