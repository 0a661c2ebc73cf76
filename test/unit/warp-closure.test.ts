/**
 * The jacket's front (cutout/closure.ts) on drawn garments: a centre line down the body of a long-sleeved garment
 * makes it outerwear; no line, a line only at the chest (a polo's placket), or short sleeves (a shirt) do not.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { closureFeatures, looksLikeOuterwear } from '../../server/engines/warp/cutout/closure.ts';
import type { GarmentCutout } from '../../server/engines/warp/types.ts';

const W = 200;
const H = 240;

/** A flat garment body 40–160 px wide, neck at y 20, hem at y 220, with a mottled knit-like texture. */
function garment(options: { line?: [number, number]; sleeveEndY?: number | null }): GarmentCutout {
  const data = new Uint8Array(W * H * 4);
  let seed = 7;
  const noise = (): number => ((seed = (seed * 16807) % 2147483647) % 9) - 4;
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++) {
      const o = (y * W + x) * 4;
      const inside = x >= 40 && x < 160 && y >= 20 && y < 220;
      const onLine = options.line && x >= 99 && x <= 100 && y >= options.line[0] && y <= options.line[1];
      const v = onLine ? 60 : 170 + noise();
      data.set([v, v - 10, v - 30, inside ? 255 : 0], o);
    }
  const sleeve = options.sleeveEndY ?? null;
  return {
    image: { data, width: W, height: H, channels: 4 },
    category: 'top',
    categorySource: 'silhouette',
    photo: 'flat',
    origin: { x: 0, y: 0 },
    landmarks: {
      neckFront: { x: 100, y: 20 },
      leftShoulder: { x: 45, y: 25 },
      rightShoulder: { x: 155, y: 25 },
      leftArmpit: { x: 40, y: 70 },
      rightArmpit: { x: 160, y: 70 },
      leftHem: { x: 40, y: 219 },
      rightHem: { x: 160, y: 219 },
      ...(sleeve === null ? {} : { leftSleeveEnd: { x: 20, y: sleeve }, rightSleeveEnd: { x: 180, y: sleeve } }),
    },
  };
}

test('a long-sleeved garment with a line down its front from neck to hem is outerwear', () => {
  const jacket = garment({ line: [20, 220], sleeveEndY: 200 });
  const f = closureFeatures(jacket)!;
  assert.ok(f.centreLine > 2 && f.lineSpan > 0.9, JSON.stringify(f));
  assert.equal(looksLikeOuterwear(jacket), true);
});

test('without the line, with a placket only at the chest, or with short sleeves it stays a top', () => {
  assert.equal(looksLikeOuterwear(garment({ sleeveEndY: 200 })), false, 'a jumper');
  assert.equal(looksLikeOuterwear(garment({ line: [20, 70], sleeveEndY: 200 })), false, 'a polo');
  assert.equal(looksLikeOuterwear(garment({ line: [20, 220], sleeveEndY: 80 })), false, 'a shirt with short sleeves');
});

test('with no sleeve ends found only a very clear line counts, and a top without a hem is never measured', () => {
  assert.equal(looksLikeOuterwear(garment({ line: [20, 220], sleeveEndY: null })), true, 'a clear zip');
  assert.equal(looksLikeOuterwear(garment({ line: [20, 150], sleeveEndY: null })), false, 'a line down only part of it');
  const noHem = garment({ line: [20, 220], sleeveEndY: 200 });
  delete noHem.landmarks.leftHem;
  assert.equal(closureFeatures(noHem), null);
});
