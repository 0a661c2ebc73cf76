import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cutOutGarment } from '../../server/engines/warp/garment/cutout.ts';
import { detectCategory } from '../../server/engines/warp/garment/category.ts';
import { lowerLandmarks, scaleLandmarks, silhouetteOf, upperLandmarks, type Point } from '../../server/engines/warp/garment/landmarks.ts';
import { EngineError } from '../../server/engines/types.ts';
import { shrinkRgb } from '../../server/engines/warp/raster.ts';
import { TROUSERS, TSHIRT, drawDress, drawShape, drawTrousers, drawTshirt } from '../helpers/warp-shapes.ts';

function near(actual: Point, expected: Point, tolerance: number, name: string): void {
  const d = Math.hypot(actual.x - expected.x, actual.y - expected.y);
  assert.ok(
    d <= tolerance,
    `${name}: (${actual.x.toFixed(1)}, ${actual.y.toFixed(1)}) is ${d.toFixed(1)} px from (${expected.x}, ${expected.y})`,
  );
}

test('cut-out: a T-shirt on a plain background has opaque inside, clear outside and a soft edge a few pixels wide', async () => {
  const cutout = await cutOutGarment(await drawTshirt());
  const alpha = (x: number, y: number) => cutout.alpha.data[y * cutout.alpha.width + x]!;
  assert.equal(alpha(300, 400), 1);
  assert.equal(alpha(300, 660), 0);
  assert.equal(alpha(20, 20), 0);
  // Across the torso's left edge (x = 170) alpha rises through intermediate values.
  const ramp = [162, 164, 166, 167, 168, 169, 170, 171, 172, 173, 174, 176, 178].map((x) => alpha(x, 450));
  assert.ok(ramp[0]! < 0.05 && ramp[12]! > 0.95, `ramp ${ramp.map((v) => v.toFixed(2))}`);
  assert.ok(ramp.filter((v) => v > 0.05 && v < 0.95).length >= 2, `soft edge: ${ramp.map((v) => v.toFixed(2))}`);
  for (let i = 1; i < ramp.length; i++) assert.ok(ramp[i]! >= ramp[i - 1]!, 'alpha rises monotonically across the edge');
});

test('cut-out: a white garment on a white backdrop is still found (tight threshold on a clean border)', async () => {
  const cutout = await cutOutGarment(await drawTshirt('#f0f0f0', '#ffffff'));
  const alpha = (x: number, y: number) => cutout.alpha.data[y * cutout.alpha.width + x]!;
  assert.equal(alpha(300, 400), 1);
  assert.equal(alpha(20, 600), 0);
});

test('cut-out: a backdrop with a lighting gradient is still background', async () => {
  const gradient = await drawShape(600, 700, 'M200,200 L400,200 L400,500 L200,500 Z', '#3050a0', '#ffffff');
  for (let y = 0; y < gradient.height; y++) {
    const shade = Math.round((y / gradient.height) * 40);
    for (let x = 0; x < gradient.width; x++) {
      const p = (y * gradient.width + x) * 3;
      if (gradient.data[p] === 255) for (let c = 0; c < 3; c++) gradient.data[p + c] = 255 - shade - Math.round((x / gradient.width) * 15);
    }
  }
  const cutout = await cutOutGarment(gradient);
  let opaque = 0;
  for (const v of cutout.alpha.data) if (v > 0.5) opaque++;
  const expected = 200 * 300;
  assert.ok(Math.abs(opaque - expected) / expected < 0.05, `garment area ${opaque} vs ${expected}`);
});

test('cut-out: an empty photo or one with no plain background is garment_not_detected', async () => {
  const blank = await drawShape(400, 500, 'M0,0 Z', '#000000', '#eeeeee');
  await assert.rejects(cutOutGarment(blank), (error: unknown) => error instanceof EngineError && error.code === 'garment_not_detected');
  const noise = await drawShape(400, 500, 'M0,0 Z', '#000000', '#eeeeee');
  let seed = 7;
  for (let i = 0; i < noise.data.length; i++) {
    seed = (seed * 1103515245 + 12345) >>> 0;
    noise.data[i] = seed >>> 24;
  }
  await assert.rejects(cutOutGarment(noise), (error: unknown) => error instanceof EngineError && error.code === 'garment_not_detected');
});

test('landmarks: the drawn T-shirt’s neck, shoulders, armpits, hem and sleeve ends are found within 4 % of its height', async () => {
  const cutout = await cutOutGarment(await drawTshirt());
  const s = silhouetteOf(cutout);
  const found = scaleLandmarks(upperLandmarks(s), cutout.maskScale);
  const tolerance = 0.04 * (TSHIRT.hemLeft.y - TSHIRT.neckLeft.y);
  near(found.neckLeft, TSHIRT.neckLeft, tolerance, 'neck left');
  near(found.neckRight, TSHIRT.neckRight, tolerance, 'neck right');
  near(found.shoulderLeft, TSHIRT.shoulderLeft, tolerance, 'shoulder left');
  near(found.shoulderRight, TSHIRT.shoulderRight, tolerance, 'shoulder right');
  near(found.armpitLeft, TSHIRT.armpitLeft, tolerance, 'armpit left');
  near(found.armpitRight, TSHIRT.armpitRight, tolerance, 'armpit right');
  near(found.hemLeft, TSHIRT.hemLeft, tolerance, 'hem left');
  near(found.hemRight, TSHIRT.hemRight, tolerance, 'hem right');
  assert.ok(found.sleeveLeft && found.sleeveRight, 'both sleeves found');
  near(found.sleeveLeft.end, TSHIRT.sleeveEndLeft, tolerance * 1.5, 'sleeve end left');
  near(found.sleeveRight.end, TSHIRT.sleeveEndRight, tolerance * 1.5, 'sleeve end right');
  assert.equal(detectCategory(s, (await shrinkRgb(cutout.image, cutout.maskWidth)).image), 'top');
});

test('landmarks: the drawn trousers’ waistband, crotch and hems; category bottom', async () => {
  const cutout = await cutOutGarment(await drawTrousers());
  const s = silhouetteOf(cutout);
  const found = scaleLandmarks(lowerLandmarks(s), cutout.maskScale);
  const tolerance = 0.03 * TROUSERS.height;
  near(found.waistLeft, TROUSERS.waistLeft, tolerance, 'waist left');
  near(found.waistRight, TROUSERS.waistRight, tolerance, 'waist right');
  assert.ok(found.crotch, 'crotch found');
  near(found.crotch, TROUSERS.crotch, tolerance, 'crotch');
  near(found.hemLeftOuter, TROUSERS.hemLeftOuter, tolerance, 'hem left outer');
  near(found.hemRightOuter, TROUSERS.hemRightOuter, tolerance, 'hem right outer');
  assert.equal(detectCategory(s), 'bottom');
});

test('category: a long, flared, sleeveless shape is a dress; a T-shirt is not', async () => {
  const dress = await cutOutGarment(await drawDress());
  assert.equal(detectCategory(silhouetteOf(dress)), 'dress');
  const shirt = await cutOutGarment(await drawTshirt());
  assert.notEqual(detectCategory(silhouetteOf(shirt)), 'dress');
});
