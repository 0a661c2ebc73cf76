/**
 * A phone-sized customer photo through the warp engine (in process): the try-on is made on a working copy at the
 * engine's resolution and blended back, so the result has the photo's own size, the pixels the try-on did not
 * change keep the photo's full-resolution bytes, and the torso is the garment's. Skipped without ../shared's photos.
 */
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import sharp from 'sharp';
import type { EngineRequest } from '../../server/engines/types.ts';
import { readRawImage } from '../../server/vision/person.ts';
import { warpEngineForSuite } from '../helpers/warp-engine.ts';

const FIXTURES = join(import.meta.dirname, '..', '..', '..', 'shared', 'fixtures');
const PERSON = join(FIXTURES, 'people', 'generated_model_1.png');
const TOP = join(FIXTURES, 'garments', 'upper_viton_00055_00.jpg');
const HAVE_PHOTOS = [PERSON, TOP].every((file) => existsSync(file));

describe('a phone-sized photo through the warp engine', { skip: HAVE_PHOTOS ? false : 'no ../shared/fixtures photos' }, () => {
  const { engine, work } = warpEngineForSuite('fittingroom-large-test-');
  /** The fixture top on `selfie`, as JPEG (the API's default). */
  const tryOn = (selfie: EngineRequest['selfie']) =>
    engine.run(
      {
        genId: 'large',
        selfie,
        items: [{ path: TOP, format: 'jpeg', width: 768, height: 1024 }],
        categories: ['top'],
        size: 'M',
        personSize: 'M',
        fit: 'regular',
        styling: [],
        outputFormat: 'jpeg',
        workDir: work,
      },
      { signal: new AbortController().signal, onProgress: () => {} },
    );

  test('worked on small, blended back: the photo’s size, its own bytes where nothing changed, the try-on drawn', async () => {
    const large = join(work, 'person.png');
    const { width, height } = await sharp(PERSON).metadata();
    const W = width! * 3;
    const H = height! * 3;
    writeFileSync(large, await sharp(PERSON).resize(W, H, { kernel: 'lanczos3' }).png({ compressionLevel: 1 }).toBuffer());
    const result = await tryOn({ path: large, format: 'png', width: W, height: H });
    // Encoded once, as asked: JPEG bytes from the engine itself.
    assert.equal(result.format, 'jpeg');
    assert.deepEqual([...result.image.subarray(0, 3)], [0xff, 0xd8, 0xff]);
    const out = await readRawImage(result.image);
    const photo = await readRawImage(large);
    assert.deepEqual([out.width, out.height], [W, H]);
    // The top rows (wall above the head) are the photo's bytes, not its working copy scaled back up.
    const rows = 20 * W * 3;
    // JPEG at quality 90: "the photo's bytes" means within a few levels of them.
    const close = (a: number, b: number): boolean => Math.abs(a - b) <= 12;
    const same = (a: Uint8Array, b: Uint8Array, n: number): boolean => a.subarray(0, n).every((v, i) => close(v, b[i]!));
    const rgbOf = (image: typeof photo): Uint8Array => {
      if (image.channels === 3) return image.data;
      const rgb = new Uint8Array(image.width * image.height * 3);
      for (let i = 0, j = 0; i < rgb.length; i += 3, j += image.channels) rgb.set(image.data.subarray(j, j + 3), i);
      return rgb;
    };
    const [o, p] = [rgbOf(out), rgbOf(photo)];
    assert.ok(same(o, p, rows), 'the wall above the head keeps its full-resolution pixels');
    // Most of the photo changed nowhere: well over half its pixels are the photo's.
    let unchanged = 0;
    for (let i = 0; i < W * H; i++)
      if (close(o[i * 3]!, p[i * 3]!) && close(o[i * 3 + 1]!, p[i * 3 + 1]!) && close(o[i * 3 + 2]!, p[i * 3 + 2]!)) unchanged++;
    assert.ok(unchanged > 0.5 * W * H, `${((100 * unchanged) / (W * H)).toFixed(1)} % unchanged`);
    assert.ok(unchanged < 0.97 * W * H, 'and the garment was drawn');
  });

  test('a phone photo stored on its side with an EXIF orientation is worked on and returned upright', async () => {
    const { width, height } = await sharp(PERSON).metadata();
    const W = width! * 3;
    const H = height! * 3;
    const upright = await sharp(PERSON).resize(W, H, { kernel: 'lanczos3' }).removeAlpha().jpeg({ quality: 95 }).toBuffer();
    // Stored turned a quarter anticlockwise, with orientation 6 telling viewers to turn it back clockwise.
    const sideways = join(work, 'sideways.jpg');
    writeFileSync(sideways, await sharp(upright).rotate(-90).withMetadata({ orientation: 6 }).jpeg({ quality: 95 }).toBuffer());
    const result = await tryOn({ path: sideways, format: 'jpeg', width: W, height: H });
    const out = await readRawImage(result.image);
    assert.deepEqual([out.width, out.height], [W, H], 'upright size');
    // Upright: the top rows are the wall above the head, as in the upright photo.
    const photo = await readRawImage(upright);
    let near = 0;
    const n = 20 * W * 3;
    for (let i = 0; i < n; i++) if (Math.abs(out.data[i]! - photo.data[i]!) <= 16) near++;
    assert.ok(near > 0.95 * n, `${((100 * near) / n).toFixed(1)} % of the top rows match the upright photo`);
  });
});
