/**
 * The warp engine's garment side on drawn garments with known geometry: a
 * T-shirt (with a white print that must stay opaque), trousers and a dress,
 * on white, on a grey gradient with a soft shadow, and on a coloured wall.
 * The alpha is solid inside, empty outside and soft at the edge; the
 * category and the landmarks come out where they were drawn; a blank photo
 * and a print without its (white-on-white) shirt are refused.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import sharp from 'sharp';
import { backgroundReached, garmentMatte, keptGarment } from '../../server/engines/warp/cutout/alpha.ts';
import { cleanEdgeColours, cutOutGarment, leastSolidBand, solidity } from '../../server/engines/warp/cutout/index.ts';
import {
  armpitOf,
  categoryOf,
  hemOf,
  lowerLandmarks,
  necklineOf,
  readSilhouette,
  shapeFeatures,
  sleeveEndOf,
  upperBody,
  upperLandmarks,
  type Silhouette,
} from '../../server/engines/warp/cutout/silhouette.ts';
import { EngineError } from '../../server/engines/types.ts';
import type { GarmentCategory } from '../../server/kernel/vocabulary.ts';
import type { Point } from '../../server/engines/warp/types.ts';
import { PersonAnalyzer, readRawImage } from '../../server/vision/person.ts';
import { REGION, type RawImage } from '../../server/vision/types.ts';

/** A photo of the wide set's garments, read in place. */
const wideGarment = (name: string): string => join(import.meta.dirname, '..', '..', '..', 'shared', 'fixtures', 'wide', 'garments', name);
/** An on-model product photo of a black satin slip dress. */
const SATIN_DRESS = wideGarment('kolors_cloth_10_dress.png');
/** A flat Hawaiian shirt whose sunset print the pose model reads as a person. */
const PRINTED_SHIRT = wideGarment('fitdit_garment_0012.jpg');
/** On-model product photos: a check maxi skirt under a cardigan, framed to the feet; a cardigan. */
const ONMODEL_SKIRT = wideGarment('fitdit_model_8_onmodel_skirt.png');
const ONMODEL_CARDIGAN = wideGarment('fitdit_model_0083_onmodel_cardigan.jpg');
const ONMODEL_BLOUSE = wideGarment('kolors_garment3_onmodel_blouse.png');
const MODEL_PHOTO = join(import.meta.dirname, '..', '..', '..', 'shared', 'fixtures', 'people', 'viton_00034_00.jpg');
const W = 600;
const H = 800;

/** A T-shirt: body 200..400 × 150..650, sleeves from the shoulders (200,150)/(400,150) out to (110,300)/(490,300). */
const TEE = `<path d="M250 150 Q300 190 350 150 L400 150 L490 280 L450 320 L400 250 L400 650 L200 650 L200 250 L150 320 L110 280 L200 150 Z" fill="#c0392b"/>
  <rect x="250" y="300" width="100" height="60" fill="#ffffff"/>`;
/** Trousers: waistband 200..400 at y 100, legs down to y 740 with a gap from y 330. */
const TROUSERS = `<path d="M200 100 L400 100 L420 740 L320 740 L300 330 L280 740 L180 740 Z" fill="#2c3e50"/>`;
/** A dress: narrow shoulders, long flaring skirt. */
const DRESS = `<path d="M240 80 Q300 120 360 80 L380 80 L385 200 L370 330 L450 760 L150 760 L230 330 L215 200 L220 80 Z" fill="#8e44ad"/>`;

type Background = 'white' | 'gradient' | 'coloured';

async function drawn(shape: string, background: Background): Promise<RawImage> {
  const backgrounds: Record<Background, string> = {
    white: '<rect width="100%" height="100%" fill="#ffffff"/>',
    gradient:
      '<defs><linearGradient id="g" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="#f2f2f2"/><stop offset="1" stop-color="#dcdcdc"/></linearGradient></defs><rect width="100%" height="100%" fill="url(#g)"/>',
    coloured: '<rect width="100%" height="100%" fill="#cfe3d4"/>',
  };
  // A soft shadow offset down and right of the garment, as under studio light.
  const shadow = `<g transform="translate(8 10)" opacity="0.08" filter="url(#blur)">${shape.replace(/fill="#[0-9a-f]+"/g, 'fill="#000000"')}</g>`;
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}"><defs><filter id="blur"><feGaussianBlur stdDeviation="6"/></filter></defs>${backgrounds[background]}${shadow}${shape}</svg>`;
  return readRawImage(await sharp(Buffer.from(svg)).png().toBuffer());
}

const alphaAt = (image: RawImage, mask: Uint8Array, x: number, y: number): number => mask[y * image.width + x]!;
const near = (p: Point | undefined, x: number, y: number, tolerance: number, what: string): void => {
  assert.ok(p, `${what} is missing`);
  assert.ok(Math.hypot(p.x - x, p.y - y) <= tolerance, `${what} at (${p.x.toFixed(0)}, ${p.y.toFixed(0)}), drawn at (${x}, ${y})`);
};

describe('garment alpha', () => {
  for (const background of ['white', 'gradient', 'coloured'] as const) {
    test(`a T-shirt on ${background}: solid inside (the white print too), empty outside and in the shadow, soft at the edge`, async () => {
      const image = await drawn(TEE, background);
      const matte = garmentMatte(image);
      assert.ok(matte, 'a garment is found');
      const a = matte.alpha.data;
      assert.ok(alphaAt(image, a, 300, 500) > 242, 'inside the body');
      assert.ok(alphaAt(image, a, 300, 330) > 242, 'the white print stays opaque (the hole is filled)');
      assert.ok(alphaAt(image, a, 140, 290) > 242, 'inside a sleeve');
      assert.ok(alphaAt(image, a, 40, 40) < 13, 'the corner');
      assert.ok(alphaAt(image, a, 300, 668) < 13, 'the shadow under the hem');
      assert.ok(alphaAt(image, a, 300, 720) < 13, 'below the hem');
      // Across the slanted top edge of the left sleeve (wearer's left, image right) at y = 200 the alpha rises through
      // intermediate values (the edge crosses x = 434.6 there).
      const row = Array.from({ length: 8 }, (_, k) => alphaAt(image, a, 431 + k, 200));
      assert.ok(
        row.some((v) => v > 20 && v < 235),
        `soft edge: ${row.join(' ')}`,
      );
      const [x0, y0, x1, y1] = matte.box;
      assert.ok(Math.abs(x0 - 110) < 8 && Math.abs(x1 - 490) < 8 && Math.abs(y0 - 150) < 8 && Math.abs(y1 - 650) < 8, `box ${matte.box}`);
    });
  }

  test('a blank photo has no garment', async () => {
    const blank = await readRawImage(
      await sharp({ create: { width: W, height: H, channels: 3, background: '#f6f6f6' } })
        .png()
        .toBuffer(),
    );
    assert.equal(garmentMatte(blank), null);
  });
});

describe('garment alpha, step by step', () => {
  test('backgroundReached: the wall the border reaches; a hole inside the garment (a white print) is not wall', () => {
    const [w, h] = [40, 40];
    const soft = new Uint8Array(w * h);
    // A garment ring from 10 to 30 with a hole from 15 to 25 the colour of the wall.
    for (let y = 10; y < 30; y++) for (let x = 10; x < 30; x++) soft[y * w + x] = x >= 15 && x < 25 && y >= 15 && y < 25 ? 0 : 255;
    const outside = backgroundReached(soft, w, h);
    assert.equal(outside[0], 1, 'the corner is wall');
    assert.equal(outside[12 * w + 12], 0, 'the ring is garment');
    assert.equal(outside[20 * w + 20], 0, 'the hole inside is garment');
  });

  test('keptGarment: the garment and a cell around it are kept, a far speck is not; nothing at all is null', () => {
    const [w, h] = [400, 400];
    const outside = new Uint8Array(w * h).fill(1);
    for (let y = 100; y < 300; y++) for (let x = 100; x < 300; x++) outside[y * w + x] = 0;
    for (let y = 360; y < 368; y++) for (let x = 360; x < 368; x++) outside[y * w + x] = 0;
    const kept = keptGarment(outside, w, h)!;
    assert.equal(kept(200, 200), true);
    assert.equal(kept(364, 364), false, 'the speck');
    assert.equal(keptGarment(new Uint8Array(w * h).fill(1), w, h), null);
  });

  test('solidity: a garment cut out whole is solid; one cut out in shreds (holes a sheen or print left) is not', () => {
    const [w, h] = [200, 300];
    const box = [50, 50, 150, 250] as const;
    const whole = new Uint8Array(w * h);
    for (let y = box[1]; y < box[3]; y++) for (let x = box[0]; x < box[2]; x++) whole[y * w + x] = 255;
    assert.ok(solidity({ data: whole, width: w, height: h }, box) > 0.99);
    // Holes of 3 × 3 every 5 pixels: 36 % of it gone, each hole narrower than the closing.
    const shreds = Uint8Array.from(whole);
    for (let y = box[1]; y < box[3]; y++)
      for (let x = box[0]; x < box[2]; x++) if ((x - box[0]) % 5 < 3 && (y - box[1]) % 5 < 3) shreds[y * w + x] = 0;
    const s = solidity({ data: shreds, width: w, height: h }, box);
    assert.ok(s < 0.8, `shreds are ${s.toFixed(2)} solid`);
  });

  test('leastSolidBand: a garment whole above and in shreds over its lowest quarter is caught there', () => {
    const [w, h] = [200, 300];
    const box = [50, 50, 150, 250] as const;
    const mask = new Uint8Array(w * h);
    for (let y = box[1]; y < box[3]; y++) for (let x = box[0]; x < box[2]; x++) mask[y * w + x] = 255;
    assert.ok(leastSolidBand({ data: mask, width: w, height: h }, box) > 0.99, 'a whole garment is solid in every band');
    // The same holes as above, only from 200 down: the garment as a whole stays above 0.8.
    for (let y = 200; y < box[3]; y++)
      for (let x = box[0]; x < box[2]; x++) if ((x - box[0]) % 5 < 3 && (y - box[1]) % 5 < 3) mask[y * w + x] = 0;
    const whole = solidity({ data: mask, width: w, height: h }, box);
    const least = leastSolidBand({ data: mask, width: w, height: h }, box);
    assert.ok(whole > 0.8, `as a whole ${whole.toFixed(2)} solid`);
    assert.ok(least < 0.7, `its lowest quarter ${least.toFixed(2)} solid`);
  });

  test('cleanEdgeColours: a soft edge pixel takes the solid garment’s colour, not the wall’s mixed in', () => {
    const [w, h] = [20, 20];
    const rgba = new Uint8Array(w * h * 4);
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) {
        const o = (y * w + x) * 4;
        // Red garment on the left, its edge at x = 10 half red and half the white wall, the wall beyond.
        rgba.set(x < 10 ? [200, 20, 20, 255] : x === 10 ? [228, 138, 138, 128] : [255, 255, 255, 0], o);
      }
    }
    cleanEdgeColours(rgba, w, h);
    assert.deepEqual([...rgba.subarray((10 * w + 10) * 4, (10 * w + 10) * 4 + 4)], [200, 20, 20, 128], 'the edge is red, its alpha kept');
    assert.deepEqual([...rgba.subarray((10 * w + 5) * 4, (10 * w + 5) * 4 + 4)], [200, 20, 20, 255], 'the solid garment is untouched');
    assert.deepEqual([...rgba.subarray((10 * w + 15) * 4, (10 * w + 15) * 4 + 4)], [255, 255, 255, 0], 'the wall is untouched');
  });
});

describe('category from the silhouette', () => {
  test('T-shirt → top, trousers → bottom, dress → dress', async () => {
    for (const [shape, expected] of [
      [TEE, 'top'],
      [TROUSERS, 'bottom'],
      [DRESS, 'dress'],
    ] as const) {
      const matte = garmentMatte(await drawn(shape, 'gradient'))!;
      assert.equal(categoryOf(readSilhouette(matte.alpha)), expected);
    }
  });

  test('skirts and shorts → bottom (a waistband or a steady flare, no legs or legs), a strappy cami or long tank → top, a short flaring dress → dress', async () => {
    const SKIRT = `<path d="M220 120 L380 120 L440 620 L160 620 Z" fill="#b5651d"/>`;
    const SHORTS = `<path d="M180 200 L420 200 L440 520 L320 520 L300 420 L280 520 L160 520 Z" fill="#5b7fa6"/>`;
    const CAMI = `<path d="M215 120 L225 120 L240 330 L360 330 L375 120 L385 120 L400 340 L410 560 L190 560 L200 340 Z" fill="#e1c340"/>`;
    // A flat A-line maxi skirt: a narrow waistband, straight sides spreading to a wide hem (its top edge is under
    // WAISTBAND full against the width a quarter down).
    const FLARED_SKIRT = `<path d="M252 90 L348 90 L472 550 L128 550 Z" fill="#e8dc8c"/>`;
    // A sleeveless top as long: its width stops growing below the armholes.
    const LONG_TANK = `<path d="M250 80 L350 80 L400 200 L400 440 L200 440 L200 200 Z" fill="#8c6ee8"/>`;
    const SHORT_DRESS = `<path d="M245 100 Q300 130 355 100 L375 100 L380 230 L360 330 L470 640 L130 640 L240 330 L220 230 L225 100 Z" fill="#3a7d44"/>`;
    for (const [shape, expected] of [
      [SKIRT, 'bottom'],
      [FLARED_SKIRT, 'bottom'],
      [LONG_TANK, 'top'],
      [SHORTS, 'bottom'],
      [CAMI, 'top'],
      [SHORT_DRESS, 'dress'],
    ] as const) {
      const silhouette = readSilhouette(garmentMatte(await drawn(shape, 'white'))!.alpha);
      assert.equal(categoryOf(silhouette), expected, JSON.stringify(shapeFeatures(silhouette)));
    }
  });
});

describe('a top’s landmarks, step by step (on the drawn T-shirt, in photo pixels)', () => {
  const tee = async () => readSilhouette(garmentMatte(await drawn(TEE, 'white'))!.alpha);
  const near1 = (value: number, expected: number, tolerance: number, what: string): void =>
    assert.ok(Math.abs(value - expected) <= tolerance, `${what}: ${value.toFixed(0)}, drawn at ${expected}`);

  test('upperBody: the body’s sides under the arms and its centre line; the sleeves do not hang', async () => {
    const body = upperBody(await tee());
    near1(body.left, 200, 6, 'body left');
    near1(body.right, 400, 6, 'body right');
    near1(body.centre, 300, 6, 'centre');
    assert.equal(body.hanging, false);
  });

  /** Both armpits near (200, y) and (400, y): within `across` pixels across and `down` pixels up or down. */
  const armpitsAt = (s: Silhouette, y: number, across: number, down: number): void => {
    const body = upperBody(s);
    for (const [side, x] of [
      ['left', 200],
      ['right', 400],
    ] as const) {
      const pit = armpitOf(s, body, side)!;
      near1(pit.x, x, across, `${side} armpit x`);
      near1(pit.y, y, down, `${side} armpit y`);
    }
  };

  test('armpitOf: where each side leaves the body line going up', async () => {
    armpitsAt(await tee(), 250, 6, 24);
  });

  test('armpitOf: below a wide sleeve cut in one with the body (kimono), where the side comes back to the body line', async () => {
    // The sleeves reach from the shoulders out and down past mid-body; their undersides meet the body at y 410.
    const KIMONO = `<path d="M250 150 Q300 190 350 150 L400 150 L540 290 L450 420 L400 410 L400 550 L200 550 L200 410 L150 420 L60 290 L200 150 Z" fill="#3fb6e0"/>`;
    armpitsAt(readSilhouette(garmentMatte(await drawn(KIMONO, 'white'))!.alpha), 410, 8, 16);
  });

  test('upperLandmarks: short sleeves lying against the body hide the armpits; they go an armhole’s depth down', async () => {
    // Short sleeves hang from the shoulders beside the body down to y 330, where the side leaves the body line.
    const HANGING = `<path d="M250 150 Q300 190 350 150 L400 150 L450 170 L455 330 L400 330 L400 650 L200 650 L200 330 L145 330 L150 170 L200 150 Z" fill="#c0392b"/>`;
    const s = readSilhouette(garmentMatte(await drawn(HANGING, 'white'))!.alpha);
    const l = upperLandmarks(s, 'top');
    // 0.41 of the body's width (200) below the shoulders (150), not at the sleeves' hem.
    near1(l.leftArmpit!.y, 232, 10, 'left armpit y');
    near1(l.rightArmpit!.y, 232, 10, 'right armpit y');
    assert.ok(l.leftSleeveEnd && l.leftSleeveEnd.y > 280, 'the sleeve still ends at its hem');
    // Sleeves held out show their armpits, which stay.
    near1(upperLandmarks(await tee(), 'top').leftArmpit!.y, 250, 24, 'the T-shirt’s armpit');
  });

  test('upperBody: sleeves lying against the body that part from it only near their cuffs hang', async () => {
    // A jacket: sleeves from the shoulders down to y 600, against the body’s sides until y 470, then apart.
    const JACKET = `<path d="M200 150 L400 150 L400 650 L200 650 Z M200 150 L120 600 L185 600 L200 470 Z M400 150 L480 600 L415 600 L400 470 Z" fill="#7a5230"/>`;
    const s = readSilhouette(garmentMatte(await drawn(JACKET, 'white'))!.alpha);
    const body = upperBody(s);
    assert.equal(body.hanging, true);
    near1(body.left, 200, 6, 'body left');
    const l = upperLandmarks(s, 'top');
    assert.equal(l.sleevesHang, true);
    // The sleeves end at their cuffs, not where they leave the body.
    near(l.leftSleeveEnd, 445, 580, 30, 'left sleeve end');
    near(l.rightSleeveEnd, 155, 580, 30, 'right sleeve end');
  });

  test('necklineOf: the front lies below the sides, on the centre line', async () => {
    const s = await tee();
    const neck = necklineOf(s, upperBody(s));
    near1(neck.front.x, 300, 6, 'front x');
    assert.ok(neck.front.y > neck.imageLeft.y + 10 && neck.front.y > neck.imageRight.y + 10, JSON.stringify(neck));
    assert.ok(neck.imageLeft.x < 300 && neck.imageRight.x > 300);
  });

  test('sleeveEndOf: the far end of each sleeve, with its half-width; hemOf: the hem’s row and ends', async () => {
    const s = await tee();
    const body = upperBody(s);
    const end = sleeveEndOf(s, body, 'right', { x: 400, y: 150 }, armpitOf(s, body, 'right')!)!;
    // The right sleeve's opening runs from (490, 280) to (450, 320).
    near1(end.end.x, 470, 24, 'sleeve end x');
    near1(end.end.y, 300, 24, 'sleeve end y');
    assert.ok(end.half > 10 && end.half < 40, `half-width ${end.half}`);
    const hem = hemOf(s, body);
    near1(hem.y, 650, 20, 'hem y');
    near1(hem.left, 200, 6, 'hem left');
    near1(hem.right, 400, 6, 'hem right');
  });

  test('a tee whose hem curves up at the sides has its hem ends at its sides, on the hem’s lowest wide row', async () => {
    // The drawn T-shirt, its hem rounded: straight sides at 200 and 400 down to y 590, the hem bowing down to y 650.
    const ROUNDED = TEE.replace('L400 650 L200 650', 'L400 590 Q300 710 200 590');
    const s = readSilhouette(garmentMatte(await drawn(ROUNDED, 'white'))!.alpha);
    const hem = hemOf(s, upperBody(s));
    assert.ok(hem.y > 610, `the hem is the lowest row spanning most of the body (y ${hem.y})`);
    near1(hem.left, 200, 8, 'hem left');
    near1(hem.right, 400, 8, 'hem right');
  });

  test('a sleeve hanging against a top’s side down to its hem row is not taken for the hem’s end', async () => {
    // The drawn T-shirt with a cuff joined to its right side in the hem's last 10 rows, out to x 470.
    const CUFFED = TEE.replace('L400 650 L200 650', 'L400 640 L470 640 L470 650 L200 650');
    const s = readSilhouette(garmentMatte(await drawn(CUFFED, 'white'))!.alpha);
    const hem = hemOf(s, upperBody(s));
    // At most HEM_SIDE (0.2) of the body's half width past its side.
    assert.ok(hem.right <= 425, `hem right ${hem.right.toFixed(0)}`);
    near1(hem.left, 200, 8, 'hem left');
  });
});

describe('a dress’s hem', () => {
  // A shift dress flaring to a hem from x 150 to 450 at y 700 (its body 222–378 under the arms).
  const DRESS = `<path d="M245 80 Q300 130 355 80 L390 80 L393 190 L378 200 L378 420 L450 700 L150 700 L222 420 L222 200 L207 190 L210 80 Z" fill="#5a4f55"/>`;
  const hemOfDrawn = async (svg: string) => {
    const s = readSilhouette(garmentMatte(await drawn(svg, 'white'))!.alpha);
    return hemOf(s, upperBody(s), false);
  };
  const near1 = (value: number, expected: number, tolerance: number, what: string): void =>
    assert.ok(Math.abs(value - expected) <= tolerance, `${what}: ${value.toFixed(0)}, drawn at ${expected}`);

  test('a notch in the hem just beside the centre (a scallop) does not put a hem corner there', async () => {
    const hem = await hemOfDrawn(DRESS.replace('L150 700', 'L292 700 L289 690 L286 700 L150 700'));
    near1(hem.left, 150, 12, 'hem left');
    near1(hem.right, 450, 12, 'hem right');
  });

  test('a hem whose one half ends higher (a faint tulle edge cut away) has its corners on both sides', async () => {
    const hem = await hemOfDrawn(DRESS.replace('L150 700', 'L300 700 L300 688 L153 688'));
    assert.ok(hem.y < 690, `the hem's row (y ${hem.y}) spans both halves`);
    near1(hem.left, 153, 12, 'hem left');
    near1(hem.right, 450, 12, 'hem right');
  });
});

describe('a pinafore’s landmarks', () => {
  test('armholes cut wide at the shoulders, their edges a little past the body line, are no sleeves; a tee’s sleeves are', async () => {
    const PINAFORE = `<path d="M245 80 Q300 130 355 80 L390 80 L393 190 L378 200 L378 420 L450 700 L150 700 L222 420 L222 200 L207 190 L210 80 Z" fill="#5a4f55"/>`;
    const pinafore = upperLandmarks(readSilhouette(garmentMatte(await drawn(PINAFORE, 'white'))!.alpha), 'dress');
    assert.ok(pinafore.leftArmpit && pinafore.rightArmpit, JSON.stringify(pinafore));
    assert.equal(pinafore.leftSleeveEnd, undefined, JSON.stringify(pinafore));
    assert.equal(pinafore.rightSleeveEnd, undefined);
    const tee = upperLandmarks(readSilhouette(garmentMatte(await drawn(TEE, 'white'))!.alpha), 'top');
    assert.ok(tee.leftSleeveEnd && tee.rightSleeveEnd, JSON.stringify(tee));
    // Shoulders spanning its body as a knit vest's do, but a dress: a sleeveless shift dress is worn alone.
    assert.equal(pinafore.layered, undefined);
    assert.equal(tee.layered, undefined);
  });
});

describe('a knit vest’s landmarks', () => {
  test('no sleeves and shoulders spanning the body: worn over a top; a tank’s straps and a halter’s band are not', async () => {
    // A boxy vest laid flat: a crew neck 250–350 dipping to y 125, shoulders as wide as its body (150–450) at y 100,
    // armholes cut in a few pixels down to y 280, straight sides to the hem at y 700.
    const VEST = `<path d="M150 100 L250 100 Q300 150 350 100 L450 100 Q440 190 450 280 L450 700 L150 700 L150 280 Q160 190 150 100 Z" fill="#f0ead0"/>`;
    const TANK = `<path d="M200 100 L250 100 Q300 200 350 100 L400 100 Q410 240 450 260 L450 700 L150 700 L150 260 Q190 240 200 100 Z" fill="#f0c020"/>`;
    const HALTER = `<path d="M280 100 L320 100 L330 160 Q360 240 450 300 L450 700 L150 700 L150 300 Q240 240 270 160 Z" fill="#a04060"/>`;
    const landmarks = async (svg: string) => upperLandmarks(readSilhouette(garmentMatte(await drawn(svg, 'white'))!.alpha), 'top');
    const vest = await landmarks(VEST);
    assert.equal(vest.leftSleeveEnd, undefined, JSON.stringify(vest));
    assert.equal(vest.layered, true, JSON.stringify(vest));
    const dress = upperLandmarks(readSilhouette(garmentMatte(await drawn(VEST, 'white'))!.alpha), 'dress');
    assert.equal(dress.layered, undefined, 'a sleeveless dress of that cut is worn alone');
    assert.equal((await landmarks(TANK)).layered, undefined);
    assert.equal((await landmarks(HALTER)).layered, undefined);
  });
});

describe('a strapless dress’s landmarks', () => {
  test('a straight top edge over a wider bodice hangs at the armpits; a sleeveless dress widest at its straight top hangs from its shoulders', async () => {
    const STRAPLESS = `<path d="M240 100 L360 100 L376 150 L366 320 L420 650 L180 650 L234 320 L224 150 Z" fill="#4060c0"/>`;
    const SHIFT = `<path d="M230 100 L370 100 L376 150 L376 650 L224 650 L224 150 Z" fill="#c06040"/>`;
    const strapless = upperLandmarks(readSilhouette(garmentMatte(await drawn(STRAPLESS, 'white'))!.alpha), 'dress');
    near(strapless.leftArmpit, 360, 100, 8, 'the top edge’s corner on the image’s right is the wearer’s left armpit');
    near(strapless.rightArmpit, 240, 100, 8, 'the top edge’s corner on the image’s left');
    assert.ok(strapless.leftShoulder!.y < 100 - 20 && strapless.rightShoulder!.y < 100 - 20, 'the shoulders are above the dress');
    assert.equal(strapless.neckFront, undefined, 'no neckline to put at the neck');
    const shift = upperLandmarks(readSilhouette(garmentMatte(await drawn(SHIFT, 'white'))!.alpha), 'dress');
    assert.ok(shift.leftShoulder!.y >= 100 - 2, `the shift dress hangs from its own shoulders (at y ${shift.leftShoulder!.y})`);
  });
});

describe('a cami’s landmarks', () => {
  test('straps sewn at the cup’s outer corners, straight above its sides, hang it from their tops; its armpits are the corners', async () => {
    // A cropped cami: a cup from x 150 to 450, its top edge dipping from y 260 at the sides to 290 in the middle; two
    // 10-pixel straps rising straight from its corners to y 100.
    const CAMI =
      `<path d="M150 260 Q300 320 450 260 L450 520 L150 520 Z" fill="#e8c020"/>` +
      `<rect x="150" y="100" width="10" height="170" fill="#e8c020"/><rect x="440" y="100" width="10" height="170" fill="#e8c020"/>`;
    const cami = upperLandmarks(readSilhouette(garmentMatte(await drawn(CAMI, 'white'))!.alpha), 'top');
    near(cami.leftShoulder, 445, 100, 8, 'the strap’s top on the image’s right is the wearer’s left shoulder');
    near(cami.rightShoulder, 155, 100, 8, 'the strap’s top on the image’s left');
    assert.ok(cami.leftArmpit!.y > 240 && cami.rightArmpit!.y > 240, `the armpits at the cup’s corners: ${JSON.stringify(cami)}`);
    assert.equal(cami.neckFront, undefined, 'no neckline to put at the neck');
  });
});

describe('a tank top’s landmarks', () => {
  test('armholes cut in deep below wide straps: armpits at their bottoms, shoulders above them; a halter’s band is not straps', async () => {
    // A basketball jersey: straps 200–250 and 350–400 at y 100 round a scooped neck, armholes curving out to the
    // sides (150 and 450) at y 260, straight sides to the hem at y 700.
    const TANK = `<path d="M200 100 L250 100 Q300 200 350 100 L400 100 Q410 240 450 260 L450 700 L150 700 L150 260 Q190 240 200 100 Z" fill="#f0c020"/>`;
    const tank = upperLandmarks(readSilhouette(garmentMatte(await drawn(TANK, 'white'))!.alpha), 'top');
    near(tank.leftArmpit, 450, 260, 14, 'the armhole’s bottom on the image’s right is the wearer’s left armpit');
    near(tank.rightArmpit, 150, 260, 14, 'the armhole’s bottom on the image’s left');
    assert.ok(tank.leftShoulder!.y < 200 && tank.rightShoulder!.y < 200, `the shoulders well above the armpits: ${JSON.stringify(tank)}`);
    assert.ok(tank.leftShoulder!.x > 400 && tank.rightShoulder!.x < 200, 'the shoulders beyond the straps');
    assert.ok(tank.neckFront && tank.neckFront.y > 120, 'the scooped neck lies at the neck');
    // It hangs loose: its shoulders are put where a wearer about 1.2 times narrower than it is under the arms has them
    // (a jersey laid flat is about 1.3 times its wearer's shoulders wide, and loose, it hangs nearly that wide).
    assert.equal(tank.hangsLoose, true);
    const shoulders = tank.leftShoulder!.x - tank.rightShoulder!.x;
    assert.ok(Math.abs(shoulders - 300 / 1.2) < 14, `the shoulders ${shoulders} apart, the armpits 300`);
    // A halter: one band round the neck (280–320), armholes cut from it down to the sides.
    const HALTER = `<path d="M280 100 L320 100 L330 160 Q360 240 450 300 L450 700 L150 700 L150 300 Q240 240 270 160 Z" fill="#a04060"/>`;
    const halter = upperLandmarks(readSilhouette(garmentMatte(await drawn(HALTER, 'white'))!.alpha), 'top');
    assert.ok(halter.leftShoulder!.y > 200, `a halter keeps its shoulders on its outline: ${JSON.stringify(halter)}`);
    assert.ok(!halter.hangsLoose, 'a halter is not drawn loose');
  });
});

describe('a skirt’s landmarks', () => {
  test('an asymmetric hem, higher on the centre line than at one side, is no crotch: the skirt keeps one hem', async () => {
    // Waistband 240–360 at y 100; the hem slants from (150, 620) up to (450, 460).
    const SLANTED = `<path d="M240 100 L360 100 L450 460 L150 620 Z" fill="#202840"/>`;
    const landmarks = lowerLandmarks(readSilhouette(garmentMatte(await drawn(SLANTED, 'white'))!.alpha));
    assert.equal(landmarks.crotch, undefined, JSON.stringify(landmarks));
    assert.ok(landmarks.rightLegHemOuter!.x < landmarks.leftLegHemOuter!.x, 'the hem’s ends are on their own sides');
  });

  test('a flared skirt whose hem curves down in the middle has its hem corners at the hem’s widest, not on its last row', async () => {
    // Waistband 250–350 at y 90; straight sides to the corners (130, 520) and (470, 520); the hem bows down to y 560.
    const CURVED = `<path d="M250 90 L350 90 L470 520 Q300 600 130 520 Z" fill="#e8dc8c"/>`;
    const landmarks = lowerLandmarks(readSilhouette(garmentMatte(await drawn(CURVED, 'white'))!.alpha));
    assert.equal(landmarks.crotch, undefined, 'a skirt has no crotch');
    near(landmarks.rightLegHemOuter, 130, 520, 12, 'the hem’s corner on the image’s left');
    near(landmarks.leftLegHemOuter, 470, 520, 12, 'the hem’s corner on the image’s right');
  });
});

describe('cutting out through the engine’s entry point', () => {
  let analyzer: PersonAnalyzer;
  before(async () => {
    analyzer = await PersonAnalyzer.create();
  });
  after(async () => {
    await analyzer.dispose();
  });

  test('a knit vest whose inside back looks like its front has a round neck’s inside back marked; a tee does not', async () => {
    // Laid flat, the back neck dipping a little between the neck points (250 and 350 at y 100); the inside back seen
    // through the opening is the front's colour, with no edge where the front neckline runs.
    const PLAIN_VEST = `<path d="M150 100 L250 100 Q300 116 350 100 L450 100 Q440 190 450 280 L450 700 L150 700 L150 280 Q160 190 150 100 Z" fill="#f0ead0"/>`;
    const vest = await cutOutGarment(await drawn(PLAIN_VEST, 'white'), { category: 'top', analyzer });
    assert.equal(vest.landmarks.layered, true, JSON.stringify(vest.landmarks));
    assert.ok(vest.insideBack, 'the inside back is marked');
    // Marked between the neck points, down the middle to a round neck's depth (about half the opening's width), no
    // deeper; nothing beside the opening.
    const { neckLeft, neckRight } = vest.landmarks;
    const w = vest.image.width;
    const lowest = (x: number): number => {
      let y = -1;
      for (let row = 0; row < vest.image.height; row++) if (vest.insideBack![row * w + x]) y = row;
      return y;
    };
    const centre = Math.round((neckLeft!.x + neckRight!.x) / 2);
    const expected = Math.max(neckLeft!.y, neckRight!.y) + 0.45 * Math.abs(neckLeft!.x - neckRight!.x);
    assert.ok(
      Math.abs(lowest(centre) - expected) <= 3,
      `marked to row ${lowest(centre)} at the middle, a round neck's depth is ${expected}`,
    );
    assert.equal(lowest(Math.round(Math.min(neckLeft!.x, neckRight!.x)) - 5), -1, 'the shoulder is no inside back');
    // A blouse's front of another colour sewn into the opening (a pinafore's, down past where a neckline is looked
    // for, its sides beside the neck points) is no inside back.
    const PINAFORE = PLAIN_VEST + '<rect x="180" y="100" width="240" height="190" fill="#6070b0"/>';
    const collared = await cutOutGarment(await drawn(PINAFORE, 'white'), { category: 'top', analyzer });
    assert.equal(collared.landmarks.layered, true);
    assert.equal(collared.insideBack, undefined, 'the collar is drawn');
    // The same with short sleeves.
    const PLAIN_TEE = `<path d="M150 100 L250 100 Q300 116 350 100 L450 100 L540 230 L500 280 L450 220 L450 700 L150 700 L150 220 L100 280 L60 230 Z" fill="#f0ead0"/>`;
    const tee = await cutOutGarment(await drawn(PLAIN_TEE, 'white'), { category: 'top', analyzer });
    assert.notEqual(tee.landmarks.layered, true);
    assert.equal(tee.insideBack, undefined, 'a sleeved top’s plain opening is left alone');
  });

  test('the T-shirt: a flat top, cropped with its landmarks where they were drawn (wearer’s left on the image right)', async () => {
    const cut = await cutOutGarment(await drawn(TEE, 'white'), { category: 'auto', analyzer });
    assert.equal(cut.category, 'top');
    assert.equal(cut.categorySource, 'silhouette');
    assert.equal(cut.photo, 'flat');
    assert.equal(cut.image.channels, 4);
    // The crop starts 8 px before the garment's box (110, 150).
    const ox = 102;
    const oy = 142;
    const l = cut.landmarks;
    const tolerance = 0.06 * 200; // 6 % of the body's width
    near(l.leftShoulder, 400 - ox, 150 - oy, tolerance, 'left shoulder');
    near(l.rightShoulder, 200 - ox, 150 - oy, tolerance, 'right shoulder');
    near(l.leftHem, 400 - ox, 650 - oy, tolerance, 'left hem');
    near(l.rightHem, 200 - ox, 650 - oy, tolerance, 'right hem');
    near(l.leftArmpit, 400 - ox, 250 - oy, tolerance * 2, 'left armpit');
    near(l.rightArmpit, 200 - ox, 250 - oy, tolerance * 2, 'right armpit');
    // The sleeve ends: the middle of the openings (490,280)–(450,320) and (110,280)–(150,320).
    near(l.leftSleeveEnd, 470 - ox, 300 - oy, tolerance * 2, 'left sleeve end');
    near(l.rightSleeveEnd, 130 - ox, 300 - oy, tolerance * 2, 'right sleeve end');
    assert.ok(l.neckFront && l.neckFront.y > l.neckLeft!.y, 'the front of the neckline is below its sides');
  });

  test('trousers: waistband corners, crotch and leg hems', async () => {
    const cut = await cutOutGarment(await drawn(TROUSERS, 'coloured'), { category: 'auto', analyzer });
    assert.equal(cut.category, 'bottom');
    const ox = 172;
    const oy = 92;
    const l = cut.landmarks;
    near(l.waistbandLeft, 400 - ox, 100 - oy, 12, 'waistband left');
    near(l.waistbandRight, 200 - ox, 100 - oy, 12, 'waistband right');
    near(l.crotch, 300 - ox, 330 - oy, 24, 'crotch');
    // The hems are read a little above the last rows (within 3 % of the height, 19 px here).
    near(l.leftLegHemOuter, 420 - ox, 740 - oy, 22, 'left leg, outer hem');
    near(l.rightLegHemOuter, 180 - ox, 740 - oy, 22, 'right leg, outer hem');
  });

  test(
    'a garment worn by a model: their top, without the face, hair or hands',
    { skip: existsSync(MODEL_PHOTO) ? false : 'no ../shared/fixtures' },
    async () => {
      const photo = await readRawImage(MODEL_PHOTO);
      const cut = await cutOutGarment(photo, { category: 'top', analyzer });
      assert.equal(cut.photo, 'worn');
      assert.equal(cut.category, 'top');
      const person = await analyzer.analyze(photo);
      let opaque = 0;
      let onHeadOrHands = 0;
      const { width, height } = cut.image;
      const labels = person.layout.labels;
      for (let y = 0; y < height; y++) {
        for (let x = 0; x < width; x++) {
          if (cut.image.data[(y * width + x) * 4 + 3]! < 128) continue;
          opaque++;
          const px = cut.origin.x + x;
          const py = cut.origin.y + y;
          const label = labels[py * photo.width + px];
          if (label === REGION.head || label === REGION.leftHand || label === REGION.rightHand) onHeadOrHands++;
        }
      }
      assert.ok(opaque > 20_000, `the top is cut out (${opaque} opaque pixels)`);
      assert.ok(onHeadOrHands / opaque < 0.01, `head and hands left out: ${onHeadOrHands} of ${opaque}`);
    },
  );

  /** A worn garment photo asked for as each of `categories` is refused before anything is drawn. */
  const refusedAsShreds = async (file: string, categories: readonly GarmentCategory[]): Promise<void> => {
    const photo = await readRawImage(file);
    for (const category of categories) {
      await assert.rejects(
        cutOutGarment(photo, { category, analyzer }),
        (error: unknown) => error instanceof EngineError && error.code === 'garment_not_detected',
        `asked for ${category}`,
      );
    }
  };

  test(
    'a satin slip dress worn by a model, whose sheen reads as skin, is refused, not cut out in shreds',
    { skip: existsSync(SATIN_DRESS) ? false : 'no ../shared/fixtures/wide' },
    () => refusedAsShreds(SATIN_DRESS, ['dress', 'auto']),
  );

  test(
    'a cardigan worn over jeans of its print’s blue, cut out whole above and in shreds over its lowest quarter, is refused',
    { skip: existsSync(ONMODEL_CARDIGAN) ? false : 'no ../shared/fixtures/wide' },
    () => refusedAsShreds(ONMODEL_CARDIGAN, ['outerwear', 'auto']),
  );

  test(
    'an on-model photo asked for with auto shows what it is framed on: the skirt below the hips, the blouse above',
    { skip: existsSync(ONMODEL_SKIRT) && existsSync(ONMODEL_BLOUSE) ? false : 'no ../shared/fixtures/wide' },
    async () => {
      // Framed from the chin to the feet, the model's hips above the photo's middle: the skirt is for sale, not the
      // cardigan over it.
      const skirt = await cutOutGarment(await readRawImage(ONMODEL_SKIRT), { category: 'auto', analyzer });
      assert.equal(skirt.photo, 'worn');
      assert.equal(skirt.category, 'bottom');
      // Framed on the upper body, the hips below the middle: the blouse.
      const blouse = await cutOutGarment(await readRawImage(ONMODEL_BLOUSE), { category: 'auto', analyzer });
      assert.equal(blouse.photo, 'worn');
      assert.equal(blouse.category, 'top');
      // The satin slip dress is framed on the legs too, its dark bodice and skin neither one colour with the skirt
      // nor clearly another: staff are asked for the category.
      await assert.rejects(
        cutOutGarment(await readRawImage(SATIN_DRESS), { category: 'auto', analyzer }),
        (error: unknown) => error instanceof EngineError && /choose its category/.test(error.message),
      );
    },
  );

  test(
    'a flat shirt whose print the pose model takes for a person (a "face" between its shoulders) is cut out as flat',
    { skip: existsSync(PRINTED_SHIRT) ? false : 'no ../shared/fixtures/wide' },
    async () => {
      const cut = await cutOutGarment(await readRawImage(PRINTED_SHIRT), { category: 'auto', analyzer });
      assert.equal(cut.photo, 'flat');
      assert.equal(cut.category, 'top');
    },
  );

  test('a split hem is not a body between hanging sleeves: the shoulders stay at the body’s sides', async () => {
    // The T-shirt with a slit up the front of its hem (a gap on the centre line in its lowest rows, like the two
    // cuffs of sleeves hanging below a cropped body): read as hanging sleeves, the body would be the slit.
    const slit = `${TEE}<rect x="292" y="560" width="16" height="100" fill="#ffffff"/>`;
    const l = (await cutOutGarment(await drawn(slit, 'white'), { category: 'top', analyzer })).landmarks;
    assert.equal(l.sleevesHang, undefined);
    const ox = 102;
    const oy = 142;
    near(l.leftShoulder, 400 - ox, 150 - oy, 12, 'left shoulder');
    near(l.rightShoulder, 200 - ox, 150 - oy, 12, 'right shoulder');
  });

  test('a requested category wins over the silhouette', async () => {
    const cut = await cutOutGarment(await drawn(TEE, 'white'), { category: 'outerwear', analyzer });
    assert.equal(cut.category, 'outerwear');
    assert.equal(cut.categorySource, 'request');
  });

  test('a white T-shirt with a print on a white wall (6 % darker than it) is cut out along its outline, not refused', async () => {
    const whiteTee = TEE.replace('fill="#c0392b"', 'fill="#f0f0f0"').replace('fill="#ffffff"', 'fill="#b03a2e"');
    const image = await drawn(whiteTee, 'white');
    assert.ok((garmentMatte(image)?.coverage ?? 0) < 0.05, 'the first look finds only the print');
    const cut = await cutOutGarment(image, { category: 'auto', analyzer });
    assert.equal(cut.category, 'top');
    assert.equal(cut.photo, 'flat');
    // The crop starts 8 px before the garment's box (110, 150); the body, a sleeve and the print are opaque.
    const alpha = (x: number, y: number) => cut.image.data[((y - 142) * cut.image.width + (x - 102)) * 4 + 3]!;
    assert.ok(alpha(300, 500) > 242, 'inside the body');
    assert.ok(alpha(300, 330) > 242, 'the print');
    assert.ok(alpha(140, 290) > 242, 'inside a sleeve');
    assert.ok(alpha(160, 500) < 13, 'beside the body, under the sleeve');
    assert.ok(Math.abs(cut.image.width - (490 - 110 + 16)) < 12, `crop width ${cut.image.width}`);
  });

  test('nothing to cut out, or only scattered fragments: garment_not_detected', async () => {
    const refused = (e: unknown) => e instanceof EngineError && e.code === 'garment_not_detected';
    const blank = await readRawImage(
      await sharp({ create: { width: W, height: H, channels: 3, background: '#ffffff' } })
        .png()
        .toBuffer(),
    );
    await assert.rejects(cutOutGarment(blank, { category: 'auto', analyzer }), refused);
    // A print of scattered marks: what is left of a white shirt on a white wall.
    const marks = Array.from(
      { length: 9 },
      (_, k) => `<circle cx="${150 + (k % 3) * 150}" cy="${200 + Math.floor(k / 3) * 200}" r="18" fill="#b03a2e"/>`,
    ).join('');
    const print = await readRawImage(
      await sharp(
        Buffer.from(
          `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}"><rect width="100%" height="100%" fill="#fff"/>${marks}</svg>`,
        ),
      )
        .png()
        .toBuffer(),
    );
    await assert.rejects(cutOutGarment(print, { category: 'auto', analyzer }), refused);
  });
});
