/**
 * A large photo is worked on small and the try-on blended back into it: where the try-on changed a pixel the
 * result is whole, so an edge of the photo's own under it (the old waistband's line under a replaced band) does
 * not show through the feather; where nothing changed the photo keeps its bytes.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { blendBack } from '../../server/engines/warp/engine.ts';
import type { RawImage } from '../../server/vision/types.ts';

const w = 40;
const h = 40;

/** A white photo, `scale` times the working size, with a black band from working row 20 down. */
function photoAt(scale: number): RawImage {
  const width = w * scale;
  const height = h * scale;
  const data = new Uint8Array(width * height * 3).fill(230);
  for (let y = 20 * scale; y < height; y++) data.fill(20, y * width * 3, (y + 1) * width * 3);
  return { data, width, height, channels: 3 };
}

test('a changed region is the result whole up to its edge: the photo’s line under its first row does not show', async () => {
  const small = photoAt(1);
  // The try-on turned the band's first rows (20–25) white: the old line at row 20 is gone.
  const result = Uint8Array.from(small.data);
  result.fill(230, 20 * w * 3, 26 * w * 3);
  const out = await blendBack(photoAt(3), small, result);
  // Full-resolution rows 60–62 are working row 20: the photo's black there must not mix in.
  for (const Y of [60, 61, 62]) {
    const v = out[(Y * w * 3 + 60) * 3]!;
    assert.ok(v > 215, `row ${Y} is ${v}`);
  }
  // Far above, nothing changed: the photo's own bytes.
  assert.equal(out[(5 * w * 3 + 60) * 3], 230);
});
