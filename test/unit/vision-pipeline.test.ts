/**
 * The non-model parts of the pose pipeline against plain arithmetic:
 * anchors, detection decoding, weighted NMS, the aligned ROI, crop sampling
 * and its inverse, heatmap refinement, the box filter and guided filter,
 * one-person checks, the poor-crop rule and the body parser's regions.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { HeuristicBodyParser } from '../../server/vision/body-layout.ts';
import { imageToRect, letterboxRect, projectMapToImage, rectToImage, resizeMap, sampleRect } from '../../server/vision/geometry.ts';
import { boxMean, boxOf, flood4, nearestThrough } from '../../server/kernel/raster.ts';
import { guidedUpsample } from '../../server/vision/matte.ts';
import { onePerson, poorCrop } from '../../server/vision/person.ts';
import { alignedRect, decodeDetections, poseAnchors, weightedNms, type PoseDetection } from '../../server/vision/pose-detector.ts';
import { refineFromHeatmap } from '../../server/vision/pose-landmarks.ts';
import { POSE, REGION, VisionError, type Landmark, type RawImage } from '../../server/vision/types.ts';

const close = (a: number, b: number, eps: number, what = ''): void => assert.ok(Math.abs(a - b) <= eps, `${what} ${a} vs ${b} (±${eps})`);

function gradientImage(width: number, height: number): RawImage {
  const data = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      data[i] = x;
      data[i + 1] = y;
      data[i + 2] = (x + y) % 256;
    }
  }
  return { data, width, height, channels: 3 };
}

describe('detector post-processing', () => {
  test('2254 anchors: 28×28×2, 14×14×2, then 7×7×6 for the three stride-32 layers', () => {
    const anchors = poseAnchors();
    assert.equal(anchors.length, 2254);
    assert.deepEqual(anchors[0], { x: 0.5 / 28, y: 0.5 / 28 });
    assert.deepEqual(anchors[1], anchors[0]);
    assert.deepEqual(anchors[1568], { x: 0.5 / 14, y: 0.5 / 14 });
    assert.deepEqual(anchors[1568 + 392], { x: 0.5 / 7, y: 0.5 / 7 });
    assert.deepEqual(anchors[1568 + 392 + 5], { x: 0.5 / 7, y: 0.5 / 7 });
    assert.deepEqual(anchors[1568 + 392 + 6], { x: 1.5 / 7, y: 0.5 / 7 });
    assert.deepEqual(anchors[2253], { x: 6.5 / 7, y: 6.5 / 7 });
  });

  test('decoding: offsets in input pixels around the anchor, sigmoid scores, threshold', () => {
    const anchors = [
      { x: 0.25, y: 0.5 },
      { x: 0.75, y: 0.5 },
    ];
    const boxes = new Float32Array(24);
    boxes.set([22.4, -11.2, 44.8, 22.4, 0, 0, 11.2, 11.2, 0, 0, 0, 0]);
    const scores = new Float32Array([2, -2]);
    const found = decodeDetections(boxes, scores, anchors, 0.5);
    assert.equal(found.length, 1, 'the second score (sigmoid −2 = 0.12) is below 0.5');
    const d = found[0]!;
    close(d.score, 1 / (1 + Math.exp(-2)), 1e-6);
    // Centre 0.25 + 0.1, 0.5 − 0.05; size 0.2 × 0.1.
    close(d.xmin, 0.35 - 0.1, 1e-6);
    close(d.ymin, 0.45 - 0.05, 1e-6);
    close(d.width, 0.2, 1e-6);
    close(d.height, 0.1, 1e-6);
    close(d.keypoints[0]!, 0.25, 1e-6);
    close(d.keypoints[2]!, 0.3, 1e-6);
    close(d.keypoints[3]!, 0.55, 1e-6);
  });

  test('weighted NMS averages an overlapping cluster by score and keeps separate detections', () => {
    const a = { score: 0.9, xmin: 0.1, ymin: 0.1, width: 0.2, height: 0.2, keypoints: [0.2, 0.2] };
    const b = { score: 0.6, xmin: 0.12, ymin: 0.1, width: 0.2, height: 0.2, keypoints: [0.3, 0.2] };
    const c = { score: 0.7, xmin: 0.6, ymin: 0.6, width: 0.2, height: 0.2, keypoints: [0.7, 0.7] };
    const out = weightedNms([b, c, a]);
    assert.equal(out.length, 2);
    assert.equal(out[0]!.score, 0.9, 'the best score stays');
    close(out[0]!.xmin, (0.9 * 0.1 + 0.6 * 0.12) / 1.5, 1e-9);
    close(out[0]!.keypoints[0]!, (0.9 * 0.2 + 0.6 * 0.3) / 1.5, 1e-9);
    assert.equal(out[1]!.score, 0.7);
    close(out[1]!.xmin, 0.6, 1e-12);
    close(out[1]!.width, 0.2, 1e-12);
  });

  test('the aligned ROI: centred on the hips, 2×1.25 the scale distance, rotated so the scale point is up', () => {
    const upright = alignedRect({ x: 100, y: 200 }, { x: 100, y: 120 });
    assert.deepEqual({ cx: upright.cx, cy: upright.cy, width: upright.width }, { cx: 100, cy: 200, width: 200 });
    close(upright.rotation, 0, 1e-12);
    const lying = alignedRect({ x: 100, y: 200 }, { x: 180, y: 200 });
    close(lying.rotation, Math.PI / 2, 1e-12);
    // The crop's top centre is towards the scale point.
    const top = rectToImage(lying, 0.5, 0);
    close(top.x, 200, 1e-9);
    close(top.y, 200, 1e-9);
  });
});

describe('crop geometry', () => {
  test('an unrotated rect covering the image reproduces its pixels', () => {
    const image = gradientImage(16, 12);
    const out = sampleRect(image, { cx: 8, cy: 6, width: 16, height: 12, rotation: 0 }, 16, 12, { range: [0, 255], border: 'zero' });
    for (let y = 0; y < 12; y++) {
      for (let x = 0; x < 16; x++) {
        close(out[(y * 16 + x) * 3]!, x, 1e-4, `R at ${x},${y}`);
        close(out[(y * 16 + x) * 3 + 1]!, y, 1e-4, `G at ${x},${y}`);
      }
    }
  });

  test('a quarter turn maps the crop’s rows to the image’s columns; ranges scale values', () => {
    const image = gradientImage(10, 10);
    const rect = { cx: 5, cy: 5, width: 10, height: 10, rotation: Math.PI / 2 };
    const out = sampleRect(image, rect, 10, 10, { range: [-1, 1], border: 'replicate' });
    for (let v = 0; v < 10; v++) {
      for (let u = 0; u < 10; u++) {
        const p = rectToImage(rect, (u + 0.5) / 10, (v + 0.5) / 10);
        close(out[(v * 10 + u) * 3]!, -1 + (2 * (p.x - 0.5)) / 255, 1e-4);
      }
    }
  });

  test('zero border darkens outside the image, replicate repeats the edge', () => {
    const image: RawImage = { data: new Uint8Array(4 * 4 * 3).fill(200), width: 4, height: 4, channels: 3 };
    const rect = letterboxRect(4, 2); // a 4×4 square over a 4×2 image: rows above and below are outside
    const flat: RawImage = { ...image, height: 2, data: image.data.subarray(0, 24) };
    const zero = sampleRect(flat, rect, 4, 4, { range: [0, 255], border: 'zero' });
    const replicate = sampleRect(flat, rect, 4, 4, { range: [0, 255], border: 'replicate' });
    assert.equal(zero[0], 0);
    assert.equal(replicate[0], 200);
    close(zero[(1 * 4 + 1) * 3]!, 200, 1e-4);
  });

  test('rectToImage and imageToRect are inverses', () => {
    const rect = { cx: 300, cy: 400, width: 500, height: 500, rotation: 0.7 };
    for (const [nx, ny] of [
      [0, 0],
      [0.3, 0.9],
      [1.2, -0.4],
    ] as const) {
      const p = rectToImage(rect, nx, ny);
      const q = imageToRect(rect, p.x, p.y);
      close(q.nx, nx, 1e-9);
      close(q.ny, ny, 1e-9);
    }
  });

  test('a map made in a rotated crop lands where the crop was taken from', () => {
    const rect = { cx: 40, cy: 50, width: 40, height: 40, rotation: 0.4 };
    const map = new Float32Array(32 * 32);
    for (let y = 8; y < 24; y++) for (let x = 8; x < 24; x++) map[y * 32 + x] = 1;
    const out = projectMapToImage(map, 32, 32, rect, 80, 100);
    const inside = rectToImage(rect, 0.5, 0.5);
    const corner = rectToImage(rect, 0.1, 0.1);
    assert.equal(out[Math.floor(inside.y) * 80 + Math.floor(inside.x)], 1);
    assert.equal(out[Math.floor(corner.y) * 80 + Math.floor(corner.x)], 0);
    assert.equal(out[0], 0, 'outside the crop');
  });

  test('resizeMap keeps a constant and a linear ramp', () => {
    const ramp = Float32Array.from({ length: 8 }, (_, x) => x);
    const up = resizeMap(ramp, 8, 1, 16, 1);
    for (let x = 1; x < 15; x++) close(up[x]!, (x + 0.5) / 2 - 0.5, 1e-6);
  });
});

describe('landmark post-processing', () => {
  test('heatmap refinement moves a landmark to the confident peak, and leaves it when nothing is confident', () => {
    const size = 16;
    const channels = 2;
    const heatmap = new Float32Array(size * size * channels).fill(-10);
    heatmap[(6 * size + 9) * channels] = 10; // channel 0 peaks at column 9, row 6
    const points = new Float32Array([8 / size, 5 / size, 0.5, 0.5]);
    refineFromHeatmap(points, heatmap, size, channels);
    close(points[0]!, 9 / size, 1e-3);
    close(points[1]!, 6 / size, 1e-3);
    assert.deepEqual([points[2], points[3]], [0.5, 0.5]);
  });
});

describe('matte filters', () => {
  test('boxMean equals the brute-force clipped window mean', () => {
    const w = 9;
    const h = 7;
    const src = Float32Array.from({ length: w * h }, (_, i) => Math.sin(i * 1.7));
    const out = boxMean(src, w, h, 2);
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) {
        let sum = 0;
        let n = 0;
        for (let yy = Math.max(0, y - 2); yy <= Math.min(h - 1, y + 2); yy++) {
          for (let xx = Math.max(0, x - 2); xx <= Math.min(w - 1, x + 2); xx++) {
            sum += src[yy * w + xx]!;
            n++;
          }
        }
        close(out[y * w + x]!, sum / n, 1e-5);
      }
    }
  });

  test('flood4 reaches the passable cells joined to a seed by edges, not by corners, seeds first', () => {
    // 5 × 4: '#' passes. The seed's region is the left block; the right block touches it only at a corner.
    const grid = ['##...', '##...', '..#..', '...##'];
    const passes = (x: number, y: number): boolean => grid[y]![x] === '#';
    const reached = flood4(5, 4, [0], passes);
    assert.equal(reached[0], 0, 'the seed first');
    assert.deepEqual(
      [...reached].sort((a, b) => a - b),
      [0, 1, 5, 6],
    );
    assert.deepEqual(flood4(5, 4, [12], passes), [12], 'a cell alone reaches only itself');
  });

  test('boxOf is the smallest box holding every set pixel, null for an empty mask', () => {
    // 5 × 4: '#' set.
    const mask = Uint8Array.from(['.....', '..#..', '....#', '.#...'].join(''), (c) => (c === '#' ? 255 : 0));
    assert.deepEqual(boxOf(mask, 5), { x0: 1, y0: 1, x1: 4, y1: 3 });
    assert.equal(boxOf(new Uint8Array(20), 5), null);
  });

  test('nearestThrough gives each passable cell its nearest source, through passable cells, within reach', () => {
    // 7 × 1: sources 'A' (x 0) and 'B' (x 6); '.' passes; '#' does not.
    const row = (cells: string, reach: number): number[] => {
      const mask = (of: string): Uint8Array => Uint8Array.from(cells, (c) => (of.includes(c) ? 1 : 0));
      return [...nearestThrough(cells.length, 1, mask('AB'), mask('.'), reach)];
    };
    assert.deepEqual(row('A.....B', 9), [0, 0, 0, 0, 6, 6, 6], 'each half to its nearer end (a tie to the first in order)');
    assert.deepEqual(row('A..#..B', 9), [0, 0, 0, -1, 6, 6, 6], 'a wall is not passed and gets no source');
    assert.deepEqual(row('A.....B', 1), [0, 0, -1, -1, -1, 6, 6], 'no farther than reach');
  });

  test('the guided filter sharpens a blurry mask along the photo’s edge', () => {
    // A photo with a vertical edge at x = 32 (dark left, light right) and a mask that ramps across 16 pixels there.
    const width = 64;
    const height = 32;
    const data = new Uint8Array(width * height * 3);
    for (let y = 0; y < height; y++)
      for (let x = 0; x < width; x++) data.fill(x < 32 ? 40 : 220, (y * width + x) * 3, (y * width + x) * 3 + 3);
    const s = 4;
    const coarse = new Float32Array((width / s) * (height / s));
    for (let y = 0; y < height / s; y++) {
      for (let x = 0; x < width / s; x++) coarse[y * (width / s) + x] = Math.min(1, Math.max(0, ((x + 0.5) * s - 24) / 16));
    }
    const mask = guidedUpsample({ data, width, height, channels: 3 }, coarse, s, 8, 1e-4);
    const row = 16 * width;
    // The input ramp is 0.25 (64) four pixels left of the edge and 0.75 (191) four pixels right of it.
    const left = mask.data[row + 28]!;
    const right = mask.data[row + 36]!;
    assert.ok(left < 0.8 * 64, `left of the edge: ${left}`);
    assert.ok(right > 191, `right of the edge: ${right}`);
    assert.ok(right - left > 1.25 * (191 - 64), `steeper than the input: ${left} → ${right}`);
    assert.ok(mask.data[row + 2]! < 10 && mask.data[row + 62]! > 245);
  });
});

describe('one person, poor crops', () => {
  const detection = (score: number, size: number): PoseDetection => ({
    score,
    box: { xmin: 0, ymin: 0, width: size, height: size },
    keypoints: [],
  });

  test('no detection is no_person_detected; a second big confident one is multiple_people; a small or weak one is ignored', () => {
    assert.throws(
      () => onePerson([]),
      (e: unknown) => e instanceof VisionError && e.code === 'no_person_detected',
    );
    assert.throws(
      () => onePerson([detection(0.9, 100), detection(0.8, 90)]),
      (e: unknown) => e instanceof VisionError && e.code === 'multiple_people',
    );
    assert.equal(onePerson([detection(0.9, 100), detection(0.8, 40)]).score, 0.9);
    assert.equal(onePerson([detection(0.9, 100), detection(0.55, 100)]).score, 0.9);
  });

  test('a crop is poor when the implied one moved, grew or turned beyond the thresholds', () => {
    const used = { cx: 100, cy: 100, width: 200, height: 200, rotation: 0 };
    assert.equal(poorCrop(used, { ...used, cx: 105 }), false);
    assert.equal(poorCrop(used, { ...used, cx: 120 }), true);
    assert.equal(poorCrop(used, { ...used, width: 250, height: 250 }), true);
    assert.equal(poorCrop(used, { ...used, rotation: 0.3 }), true);
    assert.equal(poorCrop({ ...used, rotation: 3.1 }, { ...used, rotation: -3.1 }), false, 'angles wrap');
  });
});

describe('body layout', () => {
  // A standing figure, arms out and down, 200 px shoulder width, in a 600×900 image; its matte is every pixel.
  const at = (x: number, y: number): Landmark => ({ x, y, z: 0, visibility: 1, presence: 1 });
  const landmarks: Landmark[] = Array.from({ length: 33 }, () => at(300, 100));
  const set = (k: number, x: number, y: number): void => {
    landmarks[k] = at(x, y);
  };
  set(POSE.nose, 300, 110);
  set(POSE.leftEye, 315, 95);
  set(POSE.rightEye, 285, 95);
  set(POSE.leftEar, 335, 105);
  set(POSE.rightEar, 265, 105);
  set(POSE.mouthLeft, 310, 130);
  set(POSE.mouthRight, 290, 130);
  set(POSE.leftShoulder, 400, 200);
  set(POSE.rightShoulder, 200, 200);
  set(POSE.leftElbow, 450, 330);
  set(POSE.rightElbow, 150, 330);
  set(POSE.leftWrist, 470, 450);
  set(POSE.rightWrist, 130, 450);
  for (const [k, x, y] of [
    [POSE.leftIndex, 475, 500],
    [POSE.leftPinky, 470, 495],
    [POSE.rightIndex, 125, 500],
    [POSE.rightPinky, 130, 495],
  ] as const)
    set(k, x, y);
  set(POSE.leftHip, 360, 470);
  set(POSE.rightHip, 240, 470);
  set(POSE.leftKnee, 360, 650);
  set(POSE.rightKnee, 240, 650);
  set(POSE.leftAnkle, 360, 830);
  set(POSE.rightAnkle, 240, 830);
  set(POSE.leftHeel, 360, 845);
  set(POSE.rightHeel, 240, 845);
  set(POSE.leftFootIndex, 380, 880);
  set(POSE.rightFootIndex, 220, 880);

  const width = 600;
  const height = 900;
  const image: RawImage = { data: new Uint8Array(width * height * 3).fill(128), width, height, channels: 3 };
  const matte = { data: new Uint8Array(width * height).fill(255), width, height };
  matte.data.fill(0, 0, width * 40); // the top 40 rows are background
  const layout = new HeuristicBodyParser().parse(image, landmarks, matte);
  const label = (x: number, y: number): number => layout.labels[y * width + x]!;

  test('each body part is labelled where its landmarks say', () => {
    const expectations: [string, number, number, number][] = [
      ['head', 300, 100, REGION.head],
      ['neck', 300, 170, REGION.neck],
      ['torso', 300, 320, REGION.torso],
      ['left upper arm', 425, 265, REGION.leftUpperArm],
      ['right upper arm', 175, 265, REGION.rightUpperArm],
      ['left lower arm', 460, 390, REGION.leftLowerArm],
      ['right lower arm', 140, 390, REGION.rightLowerArm],
      ['left hand', 472, 480, REGION.leftHand],
      ['right hand', 128, 480, REGION.rightHand],
      ['hips', 300, 480, REGION.hips],
      ['left upper leg', 360, 580, REGION.leftUpperLeg],
      ['right upper leg', 240, 580, REGION.rightUpperLeg],
      ['left lower leg', 360, 740, REGION.leftLowerLeg],
      ['right lower leg', 240, 740, REGION.rightLowerLeg],
      ['left foot', 372, 868, REGION.leftFoot],
      ['right foot', 228, 868, REGION.rightFoot],
    ];
    for (const [name, x, y, region] of expectations) assert.equal(label(x, y), region, `${name} at ${x},${y}`);
  });

  test('pixels outside the matte are background, and the layout is the size of the photo', () => {
    assert.equal(layout.labels.length, width * height);
    assert.equal(label(300, 20), REGION.background);
    assert.equal(label(300, 39), REGION.background);
    assert.notEqual(label(300, 41), REGION.background);
  });
});
