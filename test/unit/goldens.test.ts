import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  GOLDEN_FORMAT,
  GRID_WIDTH,
  POSE_LANDMARK_NAMES,
  decodeGrid,
  downsampleMask,
  encodeGrid,
  gridHeight,
  loadGoldens,
  maskIoU,
  maskStats,
  medianLandmarkDistance,
  type MaskStats,
  type PixelLandmark,
} from '../goldens/golden-format.ts';

// The fixture set: 7 person photos (../shared/fixtures/manifest.json).
const EXPECTED_PHOTOS = 7;
// MediaPipe places landmarks of body parts cut off by the frame outside the
// image (faces above the top edge at visibility 1, ankles below the bottom),
// (up to half an image below it on the VITON photos), so only this margin,
// as a fraction of the image size, is allowed.
const OFF_IMAGE_MARGIN = 1;
// Every fixture photo shows both shoulders and both hips.
const TORSO = [11, 12, 23, 24];
const TORSO_MIN_VISIBILITY = 0.9;
// Sanity bounds between MediaPipe's own answers (measured: lite vs full
// 0.6–1.6 % of the height, masks 0.95–0.99 IoU); looser, so they only catch
// a broken regeneration.
const LITE_FULL_MAX_MEDIAN = 0.04;
const MASKS_MIN_IOU = 0.85;

const goldens = loadGoldens();

function checkLandmarks(lms: PixelLandmark[] | null, width: number, height: number, what: string): PixelLandmark[] {
  assert.ok(lms, `${what}: MediaPipe found no person`);
  assert.equal(lms.length, POSE_LANDMARK_NAMES.length, `${what}: 33 landmarks`);
  for (const [i, p] of lms.entries()) {
    const name = `${what} ${POSE_LANDMARK_NAMES[i]}`;
    for (const v of [p.x, p.y, p.z, p.visibility]) assert.ok(Number.isFinite(v), `${name}: finite`);
    assert.ok(p.visibility >= 0 && p.visibility <= 1, `${name}: visibility in 0..1`);
    assert.ok(p.x >= -OFF_IMAGE_MARGIN * width && p.x <= (1 + OFF_IMAGE_MARGIN) * width, `${name}: x ${p.x} near the image`);
    assert.ok(p.y >= -OFF_IMAGE_MARGIN * height && p.y <= (1 + OFF_IMAGE_MARGIN) * height, `${name}: y ${p.y} near the image`);
  }
  for (const i of TORSO) {
    const p = lms[i]!;
    const name = `${what} ${POSE_LANDMARK_NAMES[i]}`;
    assert.ok(p.x >= 0 && p.x < width && p.y >= 0 && p.y < height, `${name}: inside the image`);
    assert.ok(p.visibility >= TORSO_MIN_VISIBILITY, `${name}: visible`);
  }
  return lms;
}

function checkMask(stats: MaskStats | null, width: number, height: number, what: string): Uint8Array {
  assert.ok(stats, `${what}: no mask`);
  assert.equal(stats.grid.width, GRID_WIDTH, `${what}: grid width`);
  assert.equal(stats.grid.height, gridHeight(width, height), `${what}: grid height`);
  const cells = decodeGrid(stats.grid);
  assert.equal(cells.length, stats.grid.width * stats.grid.height, `${what}: grid holds width × height cells`);
  assert.ok(stats.areaFraction > 0 && stats.areaFraction < 1, `${what}: area fraction ${stats.areaFraction} in 0..1`);
  assert.ok(stats.mean > 0 && stats.mean < 1, `${what}: mean in 0..1`);
  assert.ok(stats.bbox, `${what}: a box`);
  const [x0, y0, x1, y1] = stats.bbox;
  assert.ok(0 <= x0 && x0 < x1 && x1 <= width && 0 <= y0 && y0 < y1 && y1 <= height, `${what}: box inside the image`);
  const gridArea = cells.reduce((n, v) => n + (v >= 128 ? 1 : 0), 0) / cells.length;
  assert.ok(Math.abs(gridArea - stats.areaFraction) < 0.02, `${what}: grid area ${gridArea} agrees with ${stats.areaFraction}`);
  return cells;
}

describe('golden files (MediaPipe on the fixture photos)', () => {
  it('has one file per person photo', () => {
    assert.equal(goldens.size, EXPECTED_PHOTOS, [...goldens.keys()].join(', '));
  });

  for (const [name, g] of goldens) {
    it(`${name}: structure, landmarks and masks are sound`, () => {
      assert.equal(g.format, GOLDEN_FORMAT);
      assert.match(g.image.file, /^people\/[\w.-]+\.(jpg|png)$/);
      assert.ok(g.image.file.includes(name), 'named after its photo');
      assert.match(g.image.sha256, /^[0-9a-f]{64}$/);
      const { width, height } = g.image;
      assert.ok(Number.isInteger(width) && width > 0 && Number.isInteger(height) && height > 0);
      assert.match(g.generator.date, /^\d{4}-\d{2}-\d{2}$/);
      assert.match(g.generator.chromium, /^\d+\./);
      assert.ok(g.generator.mediapipe.pose && g.generator.mediapipe.selfieSegmentation);
      assert.equal(g.pose.lite.options.modelComplexity, 0);
      assert.equal(g.pose.full.options.modelComplexity, 1);
      assert.equal(g.selfie.options.modelSelection, 0);

      const lite = checkLandmarks(g.pose.lite.landmarks, width, height, 'lite');
      const full = checkLandmarks(g.pose.full.landmarks, width, height, 'full');
      const liteFull = medianLandmarkDistance(lite, full, height);
      assert.ok(liteFull < LITE_FULL_MAX_MEDIAN, `lite and full agree (median ${liteFull.toFixed(4)} of the height)`);

      const masks = {
        lite: checkMask(g.pose.lite.segmentation, width, height, 'lite mask'),
        full: checkMask(g.pose.full.segmentation, width, height, 'full mask'),
        selfie: checkMask(g.selfie.mask, width, height, 'selfie mask'),
      };
      for (const [a, b] of [
        ['lite', 'full'],
        ['full', 'selfie'],
        ['lite', 'selfie'],
      ] as const) {
        const iou = maskIoU(masks[a], masks[b]);
        assert.ok(iou > MASKS_MIN_IOU, `${a} and ${b} masks agree (IoU ${iou.toFixed(3)})`);
      }
    });
  }
});

describe('golden format helpers', () => {
  it('downsamples to cell means and round-trips a grid', () => {
    const w = 8;
    const h = 6;
    const mask = new Uint8Array(w * h);
    for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) mask[y * w + x] = x < 4 ? 255 : 0;
    const cells = downsampleMask(mask, w, h, 4);
    assert.equal(cells.length, 4 * gridHeight(w, h, 4));
    assert.deepEqual([...cells.slice(0, 4)], [255, 255, 0, 0]);
    const grid = encodeGrid(cells, 4, 3);
    assert.deepEqual(decodeGrid(grid), cells);
    assert.throws(() => encodeGrid(cells, 5, 3), /expected 5×3/);
  });

  it('measures area, box and mean of a mask', () => {
    const w = 10;
    const h = 10;
    const mask = new Uint8Array(w * h);
    for (let y = 2; y < 5; y++) for (let x = 3; x < 7; x++) mask[y * w + x] = 200;
    mask[0] = 127; // below 0.5: not counted in area or box
    const s = maskStats(mask, w, h, 5);
    assert.equal(s.areaFraction, 0.12);
    assert.deepEqual(s.bbox, [3, 2, 7, 5]);
    assert.equal(s.mean, Math.round(((12 * 200 + 127) / 255 / 100) * 1e5) / 1e5);
    assert.equal(maskStats(new Uint8Array(4), 2, 2, 2).bbox, null);
  });

  it('computes IoU and the median landmark distance', () => {
    assert.equal(maskIoU(Uint8Array.of(255, 255, 0, 0), Uint8Array.of(255, 0, 255, 0)), 1 / 3);
    assert.equal(maskIoU(new Uint8Array(3), new Uint8Array(3)), 1);
    const at = (x: number, y: number): PixelLandmark => ({ x, y, z: 0, visibility: 1 });
    const a = [at(0, 0), at(10, 0), at(20, 0)];
    const b = [at(3, 4), at(10, 1), at(20, 100)];
    assert.equal(medianLandmarkDistance(a, b, 100), 5 / 100);
  });
});
