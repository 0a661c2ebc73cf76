/**
 * The shading a new garment or painted skin takes from the photo: a fold or shadow within one fabric shows, the
 * edge between two materials (black trousers under a white shirt, a stripe on its ground) does not.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { shadingRatio } from '../../server/engines/warp/composite/shading.ts';

const W = 160;
const H = 120;

function image(at: (x: number, y: number) => number): Float32Array {
  const lum = new Float32Array(W * H);
  for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) lum[y * W + x] = at(x, y);
  return lum;
}

test('beside the edge between black and white cloth the shading is flat on both sides', () => {
  const ratio = shadingRatio(
    image((x) => (x < 80 ? 25 : 235)),
    W,
    H,
    8,
    32,
  );
  for (const x of [70, 76, 84, 90]) {
    const r = ratio[60 * W + x]!;
    assert.ok(Math.abs(r - 1) < 0.03, `ratio ${r.toFixed(3)} at x ${x}`);
  }
});

test('stripes of two colours give no shading', () => {
  const ratio = shadingRatio(
    image((x) => (Math.floor(x / 10) % 2 === 0 ? 70 : 220)),
    W,
    H,
    6,
    24,
  );
  let worst = 0;
  for (let y = 40; y < 80; y++) for (let x = 40; x < 120; x++) worst = Math.max(worst, Math.abs(ratio[y * W + x]! - 1));
  assert.ok(worst < 0.08, `worst ${worst.toFixed(3)}`);
});

test('a soft shadow across one fabric shows: darker in the shadow, lighter beside it', () => {
  // A white shirt with a fold: a valley a quarter darker, 12 pixels wide.
  const ratio = shadingRatio(
    image((x) => 220 * (1 - 0.25 * Math.exp(-(((x - 80) / 6) ** 2)))),
    W,
    H,
    8,
    32,
  );
  const inFold = ratio[60 * W + 80]!;
  const beside = ratio[60 * W + 100]!;
  assert.ok(inFold < 0.92, `in the fold ${inFold.toFixed(3)}`);
  assert.ok(beside > 1, `beside it ${beside.toFixed(3)}`);
});
