/**
 * Painted skin meets the real skin beside it without a seam: next to it, it takes that skin's colour; away from it,
 * it keeps its own variation; pixels not painted never change, and paint that touches no real skin stays as painted.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { blendIntoSkin } from '../../server/engines/warp/composite/seamless.ts';
import type { RawImage } from '../../server/vision/types.ts';

const W = 60;
const H = 40;
const REAL = [150, 100, 80] as const;
const PAINT = [210, 170, 150] as const;
const CLOTH = [30, 60, 200] as const;

/**
 * Real skin in rows 0–9, paint in rows 10–29 (a step of `stripe` levels at column 30 in it, as two painted tones
 * would meet), cloth below; the photo holds cloth where the paint is (an old collar).
 */
function drawn(stripe = 0): { image: RawImage; out: Uint8Array; painted: Uint8Array } {
  const data = new Uint8Array(W * H * 3);
  const out = new Uint8Array(W * H * 3);
  const painted = new Uint8Array(W * H);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const i = y * W + x;
      const photo = y < 10 ? REAL : CLOTH;
      data.set(photo, i * 3);
      if (y >= 10 && y < 30) {
        painted[i] = 1;
        out.set(
          PAINT.map((v) => v + (x >= 30 ? stripe : 0)),
          i * 3,
        );
      } else out.set(photo, i * 3);
    }
  }
  return { image: { data, width: W, height: H, channels: 3 }, out, painted };
}

const isReal = (image: RawImage) => (i: number) => image.data[i * 3] === REAL[0];
const at = (out: Uint8Array, x: number, y: number) => [...out.subarray((y * W + x) * 3, (y * W + x) * 3 + 3)];

test('paint beside real skin takes its colour there, and only painted pixels change', () => {
  const { image, out, painted } = drawn();
  const before = Uint8Array.from(out);
  blendIntoSkin(out, image, painted, isReal(image));
  // Next to the real skin the paint is the real skin's colour (within a level or two).
  for (const x of [5, 30, 55]) {
    const edge = at(out, x, 10);
    edge.forEach((v, c) => assert.ok(Math.abs(v - REAL[c]!) <= 3, `(${x}, 10) is ${edge}, beside ${REAL}`));
  }
  // Cloth bounds the paint below and sets nothing: the paint's offset runs down unchanged to it.
  const low = at(out, 30, 29);
  low.forEach((v, c) => assert.ok(Math.abs(v - REAL[c]!) <= 3, `(30, 29) is ${low}`));
  for (let i = 0; i < W * H; i++) {
    if (painted[i]) continue;
    assert.deepEqual(at(out, i % W, Math.floor(i / W)), at(before, i % W, Math.floor(i / W)), `pixel ${i} changed`);
  }
});

test('paint keeps its own variation away from the real skin', () => {
  const { image, out, painted } = drawn(20);
  blendIntoSkin(out, image, painted, isReal(image));
  // The step between the two tones is kept in the middle of the paint, far below the real skin, less than at first.
  const left = at(out, 25, 28);
  const right = at(out, 34, 28);
  assert.ok(right[0]! > left[0]!, `the step is gone: ${left} | ${right}`);
});

test('paint that touches no real skin stays as painted', () => {
  const { image, out, painted } = drawn();
  const before = Uint8Array.from(out);
  blendIntoSkin(out, image, painted, () => false);
  assert.deepEqual(out, before);
});

test('paint is matched to real skin a few pixels beyond a soft edge, within reach only', () => {
  // Rows 8–9 are the skin's soft edge: neither painted nor accepted as real skin.
  const real = (image: RawImage) => (i: number) => i < 8 * W && image.data[i * 3] === REAL[0];
  const near = drawn();
  blendIntoSkin(near.out, near.image, near.painted, real(near.image), 4);
  const edge = at(near.out, 30, 10);
  edge.forEach((v, c) => assert.ok(Math.abs(v - REAL[c]!) <= 3, `(30, 10) is ${edge}, two pixels from ${REAL}`));
  const far = drawn();
  const before = Uint8Array.from(far.out);
  blendIntoSkin(far.out, far.image, far.painted, real(far.image), 1);
  assert.deepEqual(far.out, before);
});
