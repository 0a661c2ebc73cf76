/**
 * Pose maps against the reference's own: the 12 keypoint sets of the FASHN
 * goldens (shared/reference/fashn-goldens/poses.json, drawn by the official
 * draw_pose(grayscale=True) with OpenCV on three canvases) drawn by
 * drawPoseGray / drawWholeBodyGray must come out byte-identical, pixel for
 * pixel, including points on and past the edges. Each golden PNG is checked
 * against its recorded pixel hash before it is trusted.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import sharp from 'sharp';
import { drawPoseGray, drawWholeBodyGray, type Keypoint } from '../../server/engines/fashn/pose-map.ts';
import { fillCircle, type Canvas } from '../../server/engines/fashn/raster.ts';

const GOLDENS = fileURLToPath(new URL('../../../shared/reference/fashn-goldens/', import.meta.url));
const skip = existsSync(join(GOLDENS, 'poses.json')) ? false : `no FASHN goldens at ${GOLDENS}`;

interface PoseSet {
  index: number;
  name: string;
  kind: 'body' | 'whole';
  project: { body: Keypoint[]; hands?: Keypoint[][]; faces?: Keypoint[][] };
  maps: { width: number; height: number; file: string; sha256_pixels: string; nonzero: number }[];
}

interface PosesFile {
  sets: PoseSet[];
  flat_lay_dummy: { nonzero: number };
}

/** A golden map's pixels, one channel (sharp would expand grey to three otherwise), checked against its recorded hash. */
async function goldenMap(map: PoseSet['maps'][number]): Promise<Uint8Array> {
  const { data, info } = await sharp(join(GOLDENS, map.file)).extractChannel(0).raw().toBuffer({ resolveWithObject: true });
  assert.deepEqual([info.width, info.height, info.channels], [map.width, map.height, 1], `${map.file}: size`);
  assert.equal(createHash('sha256').update(data).digest('hex'), map.sha256_pixels, `${map.file}: decoded pixels`);
  return new Uint8Array(data.buffer, data.byteOffset, data.length);
}

function draw(set: PoseSet, width: number, height: number): Uint8Array {
  const { body, hands, faces } = set.project;
  return set.kind === 'body'
    ? drawPoseGray(body, width, height)
    : drawWholeBodyGray({ body, hands: hands ?? [], faces: faces ?? [] }, width, height);
}

/** Pixels that differ, where the first one is, and how many are drawn on either side. */
function compare(ours: Uint8Array, golden: Uint8Array, width: number): { differing: number; drawn: number; first: string } {
  let [differing, drawn, first] = [0, 0, ''];
  for (let i = 0; i < golden.length; i++) {
    if (ours[i] !== 0 || golden[i] !== 0) drawn++;
    if (ours[i] === golden[i]) continue;
    if (differing++ === 0) first = `(${i % width}, ${Math.floor(i / width)}): ours ${ours[i]}, reference ${golden[i]}`;
  }
  return { differing, drawn, first };
}

const poses = skip ? null : (JSON.parse(readFileSync(join(GOLDENS, 'poses.json'), 'utf8')) as PosesFile);

test('every keypoint set on every canvas is drawn byte-identical to draw_pose(grayscale=True)', { skip }, async () => {
  const failures: string[] = [];
  for (const set of poses!.sets) {
    for (const map of set.maps) {
      const golden = await goldenMap(map);
      assert.equal(golden.filter((v) => v !== 0).length, map.nonzero, `${map.file}: non-zero count`);
      const { differing, drawn, first } = compare(draw(set, map.width, map.height), golden, map.width);
      if (differing > 0) failures.push(`${map.file}: ${differing} of ${drawn} drawn pixels differ, first at ${first}`);
    }
  }
  assert.deepEqual(failures, []);
});

test('a flat-lay garment (no keypoints at all) gets an all-black map, as the reference dummy keypoints draw', { skip }, () => {
  assert.equal(poses!.flat_lay_dummy.nonzero, 0);
  const none = (n: number): Keypoint[] => new Array<Keypoint>(n).fill(null);
  const map = drawWholeBodyGray({ body: none(18), hands: [none(21), none(21)], faces: [none(68)] }, 576, 864);
  assert.ok(
    map.every((v) => v === 0),
    'nothing drawn',
  );
});

test("joints are OpenCV's filled circles: 49 pixels at radius 4 and 29 at radius 3, rows as cv2.circle spans them", () => {
  const disc = (radius: number): number[] => {
    const canvas: Canvas = { data: new Uint8Array(11 * 11), width: 11, height: 11 };
    fillCircle(canvas, 5, 5, radius, 1);
    return Array.from({ length: 11 }, (_, y) => canvas.data.subarray(y * 11, y * 11 + 11).reduce((a, b) => a + b, 0));
  };
  assert.deepEqual(disc(4), [0, 1, 5, 7, 7, 9, 7, 7, 5, 1, 0]);
  assert.deepEqual(disc(3), [0, 0, 1, 5, 5, 7, 5, 5, 1, 0, 0]);
});
