/**
 * Resize-and-pad against the reference's own (shared/reference/fashn-goldens/
 * resize.json): six fixture photos, each decoded (checked against PIL's
 * pixels), pre-resized to fit 864×864 and resized and padded to 576×864 by
 * the engine's own functions. Geometry must be exact, the pre-resize
 * byte-identical to PIL's Lanczos, the resize to cv2.resize (INTER_AREA
 * down, INTER_LANCZOS4 up), and the padded output's 128×128 crops to the
 * reference's (which also places the image in its padding).
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import sharp from 'sharp';
import { preResize, resizePadPlan, type PadPlan } from '../../server/engines/fashn/preprocess.ts';
import { fitted, resized } from '../../server/engines/fashn/resample.ts';
import { readRawImage } from '../../server/vision/person.ts';

const GOLDENS = fileURLToPath(new URL('../../../shared/reference/fashn-goldens/', import.meta.url));
const FIXTURES = fileURLToPath(new URL('../../../shared/fixtures/', import.meta.url));
const noGoldens = existsSync(join(GOLDENS, 'resize.json')) ? false : `no FASHN goldens at ${GOLDENS}`;

interface Crop {
  kind: 'centre' | 'corner';
  x: number;
  y: number;
  width: number;
  height: number;
  file: string;
  sha256_pixels: string;
}

interface ResizeCase {
  photo: string;
  decoded_sha256: string;
  source_wh: [number, number];
  pre_resize: { wh: [number, number]; sha256_pixels: string; crops: Crop[] };
  resize_pad: {
    resized_wh: [number, number];
    padding_ltrb: [number, number, number, number];
    direction: 'up' | 'down' | 'none';
    interpolation: string;
    content_sha256: string;
    crops: Crop[];
  };
}

interface ResizeFile {
  model_wh: [number, number];
  pre_resize_max: number;
  cases: ResizeCase[];
}

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** A golden crop's RGB pixels, checked against its recorded hash. */
async function goldenCrop(crop: Crop): Promise<Uint8Array> {
  const { data, info } = await sharp(join(GOLDENS, crop.file)).raw().toBuffer({ resolveWithObject: true });
  assert.deepEqual([info.width, info.height, info.channels], [crop.width, crop.height, 3], `${crop.file}: size`);
  assert.equal(sha256(data), crop.sha256_pixels, `${crop.file}: decoded pixels`);
  return new Uint8Array(data.buffer, data.byteOffset, data.length);
}

/** The resized image placed in the model's canvas with zero padding (HWC), as ResizePad returns it. */
function padded(pixels: Uint8Array, plan: PadPlan): { data: Uint8Array; width: number } {
  const width = plan.left + plan.width + plan.right;
  const data = new Uint8Array(width * (plan.top + plan.height + plan.bottom) * 3);
  for (let y = 0; y < plan.height; y++) {
    data.set(pixels.subarray(y * plan.width * 3, (y + 1) * plan.width * 3), ((y + plan.top) * width + plan.left) * 3);
  }
  return { data, width };
}

/** Mean and largest absolute difference of a crop of `image` against the golden crop. */
function difference(image: { data: Uint8Array; width: number }, crop: Crop, golden: Uint8Array): { mean: number; peak: number } {
  let [sum, peak] = [0, 0];
  for (let y = 0; y < crop.height; y++) {
    for (let i = 0; i < crop.width * 3; i++) {
      const d = Math.abs(image.data[((crop.y + y) * image.width + crop.x) * 3 + i]! - golden[y * crop.width * 3 + i]!);
      sum += d;
      peak = Math.max(peak, d);
    }
  }
  return { mean: sum / golden.length, peak };
}

const goldens = noGoldens ? null : (JSON.parse(readFileSync(join(GOLDENS, 'resize.json'), 'utf8')) as ResizeFile);

for (const [index, c] of (goldens?.cases ?? [{ photo: '(goldens absent)' } as ResizeCase]).entries()) {
  const path = join(FIXTURES, c.photo);
  const skip = noGoldens || (existsSync(path) ? false : `fixture photo ${c.photo} is not in ${FIXTURES}`);
  test(
    `resize case ${index} (${c.photo}): geometry exact, pre-resize as PIL, resize as OpenCV, padded crops identical`,
    { skip },
    async (t) => {
      const [modelWidth, modelHeight] = goldens!.model_wh;
      const photo = await readRawImage(path);
      assert.deepEqual([photo.width, photo.height], c.source_wh, 'photo size');
      assert.equal(sha256(photo.data), c.decoded_sha256, 'decoded as PIL decodes it');

      const size = preResize(photo.width, photo.height, goldens!.pre_resize_max);
      assert.deepEqual([size.width, size.height], c.pre_resize.wh, 'pre-resized size');
      const small = fitted(photo, goldens!.pre_resize_max);
      assert.equal(sha256(small.data), c.pre_resize.sha256_pixels, 'pre-resized byte for byte as PIL');
      const plan = resizePadPlan(small.width, small.height, modelWidth, modelHeight);
      assert.deepEqual([plan.width, plan.height], c.resize_pad.resized_wh, 'resized size');
      assert.deepEqual([plan.left, plan.top, plan.right, plan.bottom], c.resize_pad.padding_ltrb, 'padding');

      const content = resized(small, plan);
      assert.equal(sha256(content), c.resize_pad.content_sha256, `resized byte for byte as cv2.resize(${c.resize_pad.interpolation})`);
      const outputs = [
        { stage: 'pre-resize', image: { data: small.data, width: small.width }, crops: c.pre_resize.crops },
        { stage: `resize ${c.resize_pad.direction}`, image: padded(content, plan), crops: c.resize_pad.crops },
      ];
      for (const { stage, image, crops } of outputs) {
        for (const crop of crops) {
          const { mean, peak } = difference(image, crop, await goldenCrop(crop));
          t.diagnostic(`${stage} ${crop.kind}: mean ${mean.toFixed(3)}, max ${peak}`);
          assert.equal(peak, 0, `${stage} ${crop.kind} crop: mean ${mean.toFixed(3)}, max ${peak}`);
        }
      }
    },
  );
}
