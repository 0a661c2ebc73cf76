/**
 * The learned cut-out (U²-Netp) and how its map is combined with the
 * classical matte: the input tensor and the map's stretch, hole filling
 * and speck removal on drawn masks, and the real model on drawn garments
 * that the classical matte cannot see (a white tee on white, a black tee
 * on white with a shadow).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import sharp from 'sharp';
import type { GarmentMatte } from '../../server/engines/warp/cutout/alpha.ts';
import { garmentMatte } from '../../server/engines/warp/cutout/alpha.ts';
import { closeLegStripes, combineMattes, openSlits } from '../../server/engines/warp/cutout/combine.ts';
import { GarmentSegmenter, inputTensor, stretch } from '../../server/engines/warp/cutout/learned.ts';
import { readRawImage } from '../../server/vision/person.ts';
import type { Mask } from '../../server/vision/types.ts';

const W = 200;
const H = 200;

/** A 0/255 mask from a predicate over pixels. */
function mask(inside: (x: number, y: number) => boolean, value = 255): Mask {
  const data = new Uint8Array(W * H);
  for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) if (inside(x, y)) data[y * W + x] = value;
  return { data, width: W, height: H };
}
const matteOf = (m: Mask): GarmentMatte => ({ alpha: m, coverage: 0, box: [0, 0, W, H] });
const at = (m: GarmentMatte | null, x: number, y: number): number => m!.alpha.data[y * W + x]!;
const square = (x0: number, y0: number, x1: number, y1: number) => (x: number, y: number) => x >= x0 && x < x1 && y >= y0 && y < y1;

describe('preprocessing and postprocessing', () => {
  test("the input is planar, over the brightest value, with ImageNet's mean and deviation", () => {
    const rgb = new Uint8Array(320 * 320 * 3).fill(100);
    rgb[0] = 200; // the brightest value: 100 becomes 0.5
    const t = inputTensor(rgb);
    assert.equal(t.length, 3 * 320 * 320);
    assert.ok(Math.abs(t[1]! - (0.5 - 0.485) / 0.229) < 1e-6);
    assert.ok(Math.abs(t[320 * 320 + 1]! - (0.5 - 0.456) / 0.224) < 1e-6);
    assert.ok(Math.abs(t[2 * 320 * 320 + 1]! - (0.5 - 0.406) / 0.225) < 1e-6);
    assert.ok(Math.abs(t[0]! - (1 - 0.485) / 0.229) < 1e-6);
  });

  test('a map is stretched to 0..255, and a map with nothing salient stays empty', () => {
    assert.deepEqual([...stretch(Float32Array.from([0.1, 0.55, 1]))], [0, 128, 255]);
    assert.deepEqual([...stretch(Float32Array.from([0.01, 0.05, 0.1]))], [0, 0, 0]);
    assert.deepEqual([...stretch(new Float32Array(4).fill(0.9))], [0, 0, 0, 0]);
  });
});

describe('combining the learned and the classical matte', () => {
  test('a garment the classical matte misses (white on white) is taken from the learned map', () => {
    const combined = combineMattes(mask(square(50, 40, 150, 180)), null);
    assert.ok(combined);
    assert.equal(at(combined, 100, 100), 255);
    assert.equal(at(combined, 20, 20), 0);
    assert.deepEqual(combined.box, [50, 40, 150, 180]);
  });

  test('a large enclosed hole is filled where the classical matte sees garment, kept where it sees backdrop', () => {
    const ring = (x: number, y: number): boolean => square(40, 40, 160, 160)(x, y) && !square(70, 70, 130, 130)(x, y);
    const intarsia = combineMattes(mask(ring), matteOf(mask(square(40, 40, 160, 160))));
    assert.equal(at(intarsia, 100, 100), 255, 'a light star inside a knit is garment');
    const gap = combineMattes(mask(ring), matteOf(mask(ring)));
    assert.equal(at(gap, 100, 100), 0, 'a gap that looks like the backdrop stays open');
  });

  test('a small enclosed hole is filled whatever the classical matte says; specks are dropped', () => {
    const learned = mask((x, y) => (square(40, 40, 160, 160)(x, y) && !square(95, 95, 105, 105)(x, y)) || square(180, 180, 184, 184)(x, y));
    const combined = combineMattes(learned, null);
    assert.equal(at(combined, 100, 100), 255);
    assert.equal(at(combined, 181, 181), 0, 'a speck apart from the garment goes');
  });

  test('the edge keeps the classical soft alpha where both agree, and the decided side of half where they do not', () => {
    const learned = mask(square(50, 50, 150, 150));
    const classical = mask(square(50, 50, 150, 150));
    classical.data[100 * W + 50] = 200; // a soft edge pixel inside
    classical.data[100 * W + 49] = 60; // and outside
    const combined = combineMattes(learned, matteOf(classical));
    assert.equal(at(combined, 50, 100), 200);
    assert.equal(at(combined, 49, 100), 60);
    const disagree = combineMattes(learned, matteOf(mask(() => false)));
    assert.ok(at(disagree, 50, 100) >= 128);
    assert.ok(at(disagree, 49, 100) < 128);
  });

  test('a learned outline running past the classical one all along a side is trimmed to it', () => {
    // The learned map, enlarged from 320 × 320, reaches 2 px past the garment's left side into the backdrop.
    const combined = combineMattes(mask(square(50, 50, 150, 150)), matteOf(mask(square(52, 50, 150, 150))));
    for (const y of [60, 100, 140]) {
      assert.equal(at(combined, 50, y), 0, `(50, ${y}) is backdrop`);
      assert.equal(at(combined, 51, y), 0, `(51, ${y}) is backdrop`);
      assert.equal(at(combined, 52, y), 255, `(52, ${y}) is garment`);
    }
    assert.equal(at(combined, 149, 100), 255, 'the side where both agree stays');
  });

  test('where the classical matte meets the learned outline along a side, its backdrop-white pixels there stay', () => {
    // A striped edge: dark stripes reach the outline, white ones look like the backdrop to the classical matte.
    const stripes = (x: number, y: number): boolean => square(50, 50, 150, 150)(x, y) && (x >= 52 || Math.floor(y / 4) % 2 === 0);
    const combined = combineMattes(mask(square(50, 50, 150, 150)), matteOf(mask(stripes)));
    for (const y of [61, 101, 141]) {
      assert.equal(Math.floor(y / 4) % 2, 1, 'a white stripe');
      assert.ok(at(combined, 50, y) >= 128, `(50, ${y}) on a white stripe stays garment`);
    }
  });

  test('a slit of backdrop between a hanging sleeve and the body, blurred shut, is opened within its window', () => {
    // A dark top (x 40..160, y 20..180) on white: a sleeve on each side, parted from the body by a 4-pixel slit from
    // y 40 to 160; the left slit shows the white backdrop, the right one a cloth nearly the top's colour.
    const data = new Uint8Array(W * H * 3).fill(240);
    for (let y = 20; y < 180; y++)
      for (let x = 40; x < 160; x++) {
        const slit = y >= 40 && y < 160 && ((x >= 56 && x < 60) || (x >= 140 && x < 144));
        if (!slit) data.set([30, 30, 30], (y * W + x) * 3);
        else if (x >= 140) data.set([45, 45, 45], (y * W + x) * 3);
      }
    const image = { data, width: W, height: H, channels: 3 as const };
    const slits = (x: number, y: number) => y >= 40 && y < 160 && ((x >= 56 && x < 60) || (x >= 140 && x < 144));
    const classical = mask((x, y) => square(40, 20, 160, 180)(x, y) && !slits(x, y));
    const everywhere = { left: 0, right: W, top: 0, bottom: H };
    const combined = mask(square(40, 20, 160, 180));
    const opened = openSlits(combined, classical, [40, 20, 160, 180], image, everywhere);
    assert.equal(combined.data[100 * W + 58], 0, 'the backdrop between the left sleeve and the body is open');
    assert.equal(opened, 4 * 120);
    assert.equal(combined.data[100 * W + 142], 255, "a slit of the top's own colour stays (a knit's openwork)");
    assert.equal(combined.data[170 * W + 58], 255, 'below the slit, where the sleeve touches the body, it is cloth');
    // Outside the window (beside the other armpit only), the same slit stays shut.
    const elsewhere = mask(square(40, 20, 160, 180));
    assert.equal(openSlits(elsewhere, classical, [40, 20, 160, 180], image, { ...everywhere, left: 120 }), 0);
    // Too short to be a slit between a sleeve and the body: a notch of backdrop 10 rows tall.
    const notch = mask(square(40, 20, 160, 180));
    const notched = mask((x, y) => square(40, 20, 160, 180)(x, y) && !(x >= 56 && x < 60 && y >= 40 && y < 50));
    assert.equal(openSlits(notch, notched, [40, 20, 160, 180], image, everywhere), 0);
  });

  test('an empty learned map gives no matte', () => {
    assert.equal(
      combineMattes(
        mask(() => false),
        null,
      ),
      null,
    );
  });
});

describe('U²-Netp on drawn garments', () => {
  let segmenter: GarmentSegmenter;
  before(async () => {
    segmenter = await GarmentSegmenter.create({ threads: 1 });
  });
  after(async () => {
    await segmenter.dispose();
  });

  const TEE = (fill: string): string =>
    `<path d="M250 150 Q300 190 350 150 L400 150 L490 280 L450 320 L400 250 L400 650 L200 650 L200 250 L150 320 L110 280 L200 150 Z" fill="${fill}" stroke="#d8d8d8" stroke-width="2"/>`;
  const photo = async (shape: string, background: string) =>
    readRawImage(
      await sharp(
        Buffer.from(
          `<svg xmlns="http://www.w3.org/2000/svg" width="600" height="800"><rect width="100%" height="100%" fill="${background}"/>${shape}</svg>`,
        ),
      )
        .png()
        .toBuffer(),
    );

  for (const [what, fill, background] of [
    ['a white tee on white', '#fbfbfb', '#ffffff'],
    ['a white tee on light grey', '#ffffff', '#e9e9e9'],
    ['a black tee on white', '#111111', '#ffffff'],
  ] as const) {
    test(`${what} is cut out: the body and sleeves are garment, the corners are not`, async () => {
      const image = await photo(TEE(fill), background);
      const learned = await segmenter.segment(image);
      assert.equal(learned.width, 600);
      assert.equal(learned.height, 800);
      const combined = combineMattes(learned, garmentMatte(image));
      assert.ok(combined, 'a garment is found');
      const a = (x: number, y: number): number => combined.alpha.data[y * 600 + x]!;
      for (const [x, y] of [
        [300, 400],
        [300, 600],
        [230, 220],
        [440, 280],
      ] as const)
        assert.ok(a(x, y) >= 128, `(${x}, ${y}) is garment`);
      for (const [x, y] of [
        [20, 20],
        [580, 780],
        [120, 600],
        [300, 720],
      ] as const)
        assert.ok(a(x, y) < 128, `(${x}, ${y}) is background`);
    });
  }

  test('a blank photo has no garment', async () => {
    const learned = await segmenter.segment(await photo('', '#ffffff'));
    assert.equal(combineMattes(learned, null), null);
  });
});

describe('stripes of trousers in the backdrop’s colour', () => {
  test('are closed inside the legs and above the crotch; the gap between the legs and the belt loops stay', () => {
    // Trousers (x 40..160, y 20..190) with their crotch at (100, 90): the legs part below it (gap x 95..105, widening),
    // belt loops at the top edge (rows 20..22 open between x 60..70), and a white stripe lost down the right leg
    // (x 130..133, y 30..180).
    const trousers = mask((x, y) => {
      if (x < 40 || x >= 160 || y < 20 || y >= 190) return false;
      if (y < 23 && x >= 60 && x < 70) return false;
      if (y >= 90 && Math.abs(x - 100) <= 5 + (y - 90) / 10) return false;
      return !(x >= 130 && x < 134 && y >= 30 && y < 180);
    });
    const closed = closeLegStripes(trousers, [40, 20, 160, 190], { x: 100, y: 90 });
    assert.ok(closed >= 4 * 150, `${closed} pixels closed`);
    for (const y of [40, 100, 170]) assert.equal(trousers.data[y * W + 131], 255, `the stripe at row ${y}`);
    for (const y of [100, 150, 185]) assert.equal(trousers.data[y * W + 100], 0, `the gap between the legs at row ${y}`);
    assert.equal(trousers.data[21 * W + 65], 0, 'between the belt loops');
  });
});
