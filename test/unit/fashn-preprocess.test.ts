/** FASHN VTON preprocessing: resize-and-pad, tensors, pose maps, garment category, blend mask (pure functions). */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { blendImages, blendMask } from '../../server/engines/fashn/blend.ts';
import { detectFlatLayCategory, modelCategory } from '../../server/engines/fashn/garment.ts';
import { LIMB_GRAY, drawPoseGray, openPoseKeypoints, type Keypoint } from '../../server/engines/fashn/pose-map.ts';
import { preResize, resizeNearest, resizePadPlan, toPaddedTensor, unpadToRgb } from '../../server/engines/fashn/preprocess.ts';
import { POSE, REGION, type Landmark } from '../../server/vision/types.ts';
import { GOLDENS_DIR } from '../goldens/golden-format.ts';

test('resize-and-pad: fit inside 576×864, int() of the scaled size, smaller half of the padding first', () => {
  assert.deepEqual(resizePadPlan(768, 1024, 576, 864), { width: 576, height: 768, left: 0, top: 48, right: 0, bottom: 48 });
  assert.deepEqual(resizePadPlan(1000, 500, 576, 864), { width: 576, height: 288, left: 0, top: 288, right: 0, bottom: 288 });
  assert.deepEqual(resizePadPlan(300, 451, 576, 864), { width: 574, height: 864, left: 1, top: 0, right: 1, bottom: 0 });
  assert.deepEqual(preResize(768, 1024, 864), { width: 648, height: 864 });
  assert.deepEqual(preResize(400, 300, 864), { width: 400, height: 300 }, 'never upsampled');
});

test('tensors are [C,H,W] in −1..1 with −1 padding; unpadding crops and truncates to bytes as the reference does', () => {
  const plan = resizePadPlan(2, 1, 2, 3);
  assert.deepEqual(plan, { width: 2, height: 1, left: 0, top: 1, right: 0, bottom: 1 });
  const rgb = Uint8Array.of(0, 128, 255, 10, 20, 30);
  const tensor = toPaddedTensor(rgb, 3, plan);
  assert.equal(tensor.length, 3 * 2 * 3);
  assert.deepEqual([...tensor.slice(0, 6)], [-1, -1, -1, Math.fround(10 / 127.5 - 1), -1, -1]);
  // 128 and 255 come back; 10, 20 and 30 land a float32 ulp below their level and truncate one lower, as in PyTorch.
  assert.deepEqual([...unpadToRgb(tensor, plan)], [0, 128, 255, 9, 19, 29]);
  // Channels [R: −1, 1.5], [G: 0, −1.2], [B: 1, 0]: 0 is 127.5, so 127 (not 128); out-of-range values clamp.
  const values = Float32Array.of(-1, 1.5, 0, -1.2, 1, 0);
  assert.deepEqual([...unpadToRgb(values, { width: 2, height: 1, left: 0, top: 0, right: 0, bottom: 0 })], [0, 127, 255, 255, 0, 127]);
  assert.deepEqual([...resizeNearest(Uint8Array.of(1, 2, 3, 4), 2, 2, 4, 2)], [1, 1, 2, 2, 3, 3, 4, 4]);
});

test('pose maps are drawn as DWPose draws them in grey: 0.6× limb levels, joints at 1.3× their first limb', () => {
  assert.deepEqual(LIMB_GRAY.slice(0, 4), [20, 32, 45, 58]);
  assert.equal(LIMB_GRAY[17], 240);
  const keypoints: Keypoint[] = new Array(18).fill(null);
  keypoints[1] = { x: 10 / 64, y: 20 / 64 }; // neck
  keypoints[2] = { x: 40 / 64, y: 20 / 64 }; // right shoulder: limb 0 (neck → right shoulder)
  const map = drawPoseGray(keypoints, 64, 64);
  const at = (x: number, y: number): number => map[y * 64 + x]!;
  assert.equal(at(25, 20), Math.floor(20 * 0.6), 'the limb between them');
  assert.equal(at(25, 24), Math.floor(20 * 0.6), '4 px thick');
  assert.equal(at(25, 26), 0);
  assert.equal(at(10, 20), Math.floor(20 * 1.3), 'the neck joint');
  assert.equal(at(40, 23), Math.floor(20 * 1.3), 'joint radius 4');
  assert.equal(at(60, 60), 0);
  assert.ok(
    drawPoseGray(new Array(18).fill(null), 8, 8).every((v) => v === 0),
    'a flat-lay garment has an empty map',
  );
});

test('MediaPipe landmarks from the goldens map to OpenPose order, neck between the shoulders', () => {
  const golden = JSON.parse(readFileSync(join(GOLDENS_DIR, 'viton_00034_00.json'), 'utf8')) as {
    image: { width: number; height: number };
    pose: { full: { landmarks: Omit<Landmark, 'presence'>[] } };
  };
  const { width, height } = golden.image;
  const landmarks = golden.pose.full.landmarks.map((l) => ({ ...l, presence: 1 }));
  const keypoints = openPoseKeypoints(landmarks, width, height);
  assert.equal(keypoints.length, 18);
  const ls = landmarks[POSE.leftShoulder]!;
  const rs = landmarks[POSE.rightShoulder]!;
  assert.ok(Math.abs(keypoints[1]!.x - (ls.x + rs.x) / 2 / width) < 1e-9);
  assert.ok(Math.abs(keypoints[2]!.x - rs.x / width) < 1e-9, 'index 2 is the right shoulder');
  assert.ok(Math.abs(keypoints[5]!.x - ls.x / width) < 1e-9, 'index 5 is the left shoulder');
  assert.ok(keypoints[2]!.x < keypoints[5]!.x, "a person facing the camera has the right shoulder on the image's left");
  const map = drawPoseGray(keypoints, width, height);
  assert.ok(map.filter((v) => v > 0).length > 1000, 'the skeleton is drawn');
});

function shape(width: number, height: number, inside: (x: number, y: number) => boolean): Uint8Array {
  const rgb = new Uint8Array(width * height * 3).fill(255);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) if (inside(x, y)) rgb.fill(40, (y * width + x) * 3, (y * width + x) * 3 + 3);
  return rgb;
}

test('categories: from the request, or from a flat-lay silhouette', () => {
  assert.equal(modelCategory('top'), 'tops');
  assert.equal(modelCategory('outerwear'), 'tops');
  assert.equal(modelCategory('bottom'), 'bottoms');
  assert.equal(modelCategory('dress'), 'one-pieces');
  const [w, h] = [60, 100];
  assert.equal(
    detectFlatLayCategory(
      shape(w, h, (x, y) => x > 5 && x < 55 && y > 20 && y < 70),
      w,
      h,
    ),
    'tops',
  );
  const trousers = (x: number, y: number): boolean => y > 5 && y < 95 && x > 15 && x < 45 && (y < 40 || x < 27 || x > 33);
  assert.equal(detectFlatLayCategory(shape(w, h, trousers), w, h), 'bottoms');
  assert.equal(
    detectFlatLayCategory(
      shape(w, h, (x, y) => y > 5 && y < 95 && x > 15 && x < 45),
      w,
      h,
    ),
    'one-pieces',
  );
});

test('the blend mask covers the garment regions (grown, feathered) and is exactly 0 on the head', () => {
  const [width, height] = [40, 100];
  const labels = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) {
    for (let x = 10; x < 30; x++) labels[y * width + x] = y < 20 ? REGION.head : y < 60 ? REGION.torso : REGION.leftUpperLeg;
  }
  const mask = blendMask({ width, height, labels }, 'tops');
  assert.equal(mask[40 * width + 20], 1, 'inside the torso');
  assert.equal(mask[19 * width + 20], 0, 'the head');
  assert.equal(mask[95 * width + 20], 0, 'the legs are not a top');
  assert.equal(mask[40 * width + 2], 0, 'far background');
  assert.ok(mask[40 * width + 8]! > 0, 'grown past the torso edge');
  const tops = blendImages(new Uint8Array(3 * width * height).fill(10), new Uint8Array(3 * width * height).fill(200), mask);
  assert.equal(tops[3 * (19 * width + 20)], 10);
  assert.equal(tops[3 * (40 * width + 20)], 200);
});
