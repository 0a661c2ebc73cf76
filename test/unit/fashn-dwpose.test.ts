/**
 * DWPose for the FASHN engine: the arithmetic against answers computed by
 * hand (letterbox, YOLOX grid decoding, NMS, the 1.25 crop at 3:4 and its
 * sampling, SimCC decoding back to image pixels, OpenPose order with a neck,
 * the one person kept), the grey drawing of hands and faces, and the whole
 * path through ONNX Runtime with stand-in models of the published shapes
 * under other names (the tensors are found by shape).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import {
  bestPerson,
  cropPlan,
  decodeDetections,
  decodeSimcc,
  detectorInput,
  nms,
  personBoxes,
  poseInput,
  resizeLinear,
  toOpenPoseOrder,
  wholeBodyPose,
  type PersonKeypoints,
} from '../../server/engines/fashn/dwpose-decode.ts';
import { DwPose, findDwPose } from '../../server/engines/fashn/dwpose.ts';
import {
  FACE_POINT_GRAY,
  HAND_GRAY,
  HAND_POINT_GRAY,
  LIMB_GRAY,
  drawWholeBodyGray,
  type Keypoint,
} from '../../server/engines/fashn/pose-map.ts';
import { constantModel, detectorOutput, detectorRow, simccOutputs, writeTinyDwPose } from '../helpers/dwpose-tiny.ts';

const dirs: string[] = [];
after(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), 'fashn-dwpose-'));
  dirs.push(dir);
  return dir;
}

function near(actual: number, expected: number, message: string, tolerance = 1e-4): void {
  assert.ok(Math.abs(actual - expected) <= tolerance, `${message}: ${actual} ≉ ${expected}`);
}

/**
 * A 320×480 photo is letterboxed at r = min(640/480, 640/320) = 4/3. Person A
 * in the stride-8 cell (10, 20): centre (10.5·8, 20.5·8) = (84, 164), size
 * 4·8 × 8·8 = 32×64 → (68, 132)–(100, 196) → ÷ 4/3 → (51, 99)–(75, 147),
 * score 0.9·0.8. B, one cell right (score 0.45), overlaps A by IoU 931/1519.
 * C (stride 32, score 0.25) survives NMS but not the 0.3 person threshold; D
 * (0.09) is not a candidate at all.
 */
const DETECTIONS = detectorOutput([
  { row: detectorRow(8, 10, 20), values: [0.5, 0.5, Math.log(4), Math.log(8), 0.9, 0.8] },
  { row: detectorRow(8, 11, 20), values: [0.5, 0.5, Math.log(4), Math.log(8), 0.9, 0.5] },
  { row: detectorRow(32, 2, 3), values: [0, 0, Math.log(2), Math.log(2), 0.5, 0.5] },
  { row: detectorRow(16, 30, 30), values: [0, 0, 0, 0, 0.3, 0.3] },
]);
const RATIO = 4 / 3;

test('resize is OpenCV INTER_LINEAR: pixel centres aligned, edges clamped', () => {
  const image = { data: Uint8Array.of(0, 0, 0, 100, 200, 40), width: 2, height: 1 };
  const out = resizeLinear(image, 4, 1);
  assert.deepEqual([...out.filter((_, i) => i % 3 === 0)], [0, 25, 75, 100]);
  assert.deepEqual([...out.filter((_, i) => i % 3 === 1)], [0, 50, 150, 200]);
});

test('the detector input is the image scaled into the top left of 640×640 filled with 114, raw values, channels as given', () => {
  const data = new Uint8Array(4 * 2 * 3);
  for (let i = 0; i < data.length; i += 3) data.set([10, 20, 30], i);
  const { tensor, ratio } = detectorInput({ data, width: 4, height: 2 });
  assert.equal(ratio, 160);
  const at = (c: number, x: number, y: number): number => tensor[c * 640 * 640 + y * 640 + x]!;
  assert.deepEqual([at(0, 0, 0), at(1, 639, 319), at(2, 320, 100)], [10, 20, 30]);
  assert.deepEqual([at(0, 0, 320), at(2, 639, 639)], [114, 114], 'below the scaled image');
});

test('YOLOX rows decode to boxes in photo pixels; NMS and the 0.3 threshold keep one person', () => {
  const candidates = decodeDetections(DETECTIONS, RATIO);
  assert.equal(candidates.length, 3, 'the 0.09 row is not a candidate');
  const a = candidates.find((b) => Math.abs(b.score - 0.72) < 1e-6)!;
  [a.x1, a.y1, a.x2, a.y2].forEach((v, i) => near(v, [51, 99, 75, 147][i]!, 'box A'));
  const c = candidates.find((b) => Math.abs(b.score - 0.25) < 1e-6)!;
  [c.x1, c.y1, c.x2, c.y2].forEach((v, i) => near(v, [24, 48, 72, 96][i]!, 'box C (stride 32: (2·32, 3·32) ± 32, ÷ 4/3)'));
  assert.equal(nms(candidates).length, 2, 'B overlaps A by IoU 0.61 > 0.45');
  const people = personBoxes(DETECTIONS, RATIO);
  assert.equal(people.length, 1);
  near(people[0]!.score, 0.72, 'the person');
  // IoU exactly at the threshold is kept (the reference keeps ovr <= 0.45).
  const box = (x1: number, score: number) => ({ x1, y1: 0, x2: x1 + 9, y2: 9, score });
  assert.equal(nms([box(0, 0.9), box(5, 0.8)], 50 / 150).length, 2);
  assert.equal(nms([box(0, 0.9), box(5, 0.8)], 50 / 150 - 1e-9).length, 1);
});

test('the crop is the box ×1.25, made 3:4 around its centre', () => {
  assert.deepEqual(cropPlan({ x1: 51, y1: 99, x2: 75, y2: 147 }), { cx: 63, cy: 123, width: 45, height: 60 });
  const wide = cropPlan({ x1: 0, y1: 0, x2: 100, y2: 10 });
  assert.deepEqual([wide.cx, wide.cy, wide.width], [50, 5, 125]);
  near(wide.height, 125 / 0.75, 'heightened');
});

test('the pose input samples the crop bilinearly (zero outside), rounds to bytes, then subtracts the mean and divides by the std', () => {
  const [w, h] = [300, 400];
  const data = new Uint8Array(w * h * 3);
  data.set([255, 255, 255], (108 * w + 106) * 3);
  const norm = (v: number, c: number): number => Math.fround((v - [123.675, 116.28, 103.53][c]!) / [58.395, 57.12, 57.375][c]!);
  const at = (t: Float32Array, c: number, x: number, y: number): number => t[c * 288 * 384 + y * 288 + x]!;
  // One image pixel per crop pixel: crop (x, y) reads image (x − 144 + 150, y − 192 + 200).
  const one = poseInput({ data, width: w, height: h }, { cx: 150, cy: 200, width: 288, height: 384 });
  assert.equal(at(one, 0, 100, 100), norm(255, 0));
  assert.equal(at(one, 2, 100, 100), norm(255, 2));
  assert.equal(at(one, 1, 101, 100), norm(0, 1));
  // Two crop pixels per image pixel: crop x = 2·(106.5 − 150) + 144 = 57 reads halfway between columns 106 and 107.
  const half = poseInput({ data, width: w, height: h }, { cx: 150, cy: 200, width: 144, height: 192 });
  assert.equal(at(half, 0, 57, 2 * (108 - 200) + 192), norm(128, 0), '127.5 rounds to 128');
  assert.equal(at(half, 0, 0, 0), norm(0, 0), 'outside the photo is black');
});

test('SimCC decodes to the first maximum ÷ 2 and back to photo pixels; a zero score sits at bin −1', () => {
  const plan = { cx: 63, cy: 123, width: 45, height: 60 };
  const { x, y } = simccOutputs([
    { k: 5, x: 288, y: 384, score: 0.9 },
    { k: 6, x: 0, y: 0, score: 0.8 },
  ]);
  x[6 * 576 + 10] = 0.8; // a tie later in the row: the first maximum wins
  y[5 * 768 + 384] = 0.5; // a lower y peak: the score is the smaller of the two maxima
  const person = decodeSimcc(x, y, 133, plan);
  assert.deepEqual([person.points[10], person.points[11]], [63, 123], 'the crop centre');
  assert.deepEqual([person.points[12], person.points[13]], [40.5, 93], 'the crop corner');
  near(person.scores[5]!, 0.5, 'min of the maxima');
  near(person.scores[6]!, 0.8, 'score');
  assert.equal(person.scores[0], 0);
  assert.deepEqual([person.points[0], person.points[1]], [(-0.5 / 288) * 45 + 40.5, (-0.5 / 384) * 60 + 93]);
});

function person(scores: (k: number) => number, point: (k: number) => [number, number], count = 133): PersonKeypoints {
  const points = new Float64Array(2 * count);
  const s = new Float64Array(count);
  for (let k = 0; k < count; k++) {
    [points[2 * k], points[2 * k + 1]] = point(k);
    s[k] = scores(k);
  }
  return { points, scores: s };
}

test("COCO-WholeBody becomes OpenPose's order with a neck between the shoulders", () => {
  const coco = person(
    (k) => (k === 5 ? 0.9 : k === 6 ? 0.8 : 0.5),
    (k) => [k, 100 + k],
  );
  const open = toOpenPoseOrder(coco);
  assert.equal(open.scores.length, 134);
  const at = (k: number): number[] => [open.points[2 * k]!, open.points[2 * k + 1]!, open.scores[k]!];
  assert.deepEqual(at(1), [5.5, 105.5, 1], 'neck');
  assert.deepEqual(at(2), [6, 106, 0.8], 'right shoulder ← COCO 6');
  assert.deepEqual(at(5), [5, 105, 0.9], 'left shoulder stays');
  assert.deepEqual(at(4), [10, 110, 0.5], 'right wrist ← COCO 10');
  assert.deepEqual(at(11), [11, 111, 0.5], 'left hip stays');
  assert.deepEqual(at(14), [2, 102, 0.5], 'right eye ← COCO 2');
  assert.deepEqual(at(17), [3, 103, 0.5], 'left ear ← COCO 3');
  assert.deepEqual(at(18), [17, 117, 0.5], 'the first foot point moves one place on');
  assert.deepEqual(at(133), [132, 232, 0.5], 'the last right-hand point');
  const weak = toOpenPoseOrder(
    person(
      (k) => (k === 6 ? 0.3 : 0.9),
      (k) => [k, k],
    ),
  );
  assert.equal(weak.scores[1], 0, 'a shoulder at 0.3 hides the neck');
});

test('of several people, the one whose headless body points score most over the largest area is drawn', () => {
  const small = person(
    () => 0.9,
    (k) => [10 + (k % 3), 10 + (k % 4)],
  );
  const large = person(
    () => 0.6,
    (k) => [10 + 10 * (k % 3), 10 + 10 * (k % 4)],
  );
  assert.equal(bestPerson([small, large]), 1, '0.6·13 × 20·30 beats 0.9·13 × 2·3');
  const flat = person(
    () => 0.9,
    () => [5, 5],
  );
  const flatWeak = person(
    () => 0.5,
    () => [5, 5],
  );
  assert.equal(bestPerson([flatWeak, flat]), 1, 'no area anywhere: the highest score sum');
  // Visibility is judged by the first person's scores for everyone, as the reference does.
  const hidden = person(
    (k) => (k >= 1 && k <= 13 ? 0.1 : 0.9),
    () => [1, 1],
  );
  assert.equal(bestPerson([hidden, large]), 1, 'area 0 for all, so the score sums decide');
});

test('the drawn pose: body above 0.3, hands and face from 0.3, feet left out, in 0…1 of the photo', () => {
  const open = person(
    (k) => (k === 0 ? 0.3 : k === 24 ? 0.3 : k === 92 ? 0.29 : 0.9),
    (k) => [k, 2 * k],
    134,
  );
  const pose = wholeBodyPose(open, 200, 400);
  assert.equal(pose.body.length, 18);
  assert.equal(pose.body[0], null, 'a body point at exactly 0.3 is hidden');
  assert.deepEqual(pose.body[1], { x: 1 / 200, y: 2 / 400 });
  assert.deepEqual(pose.faces[0]![0], { x: 24 / 200, y: 48 / 400 }, 'a face point at 0.3 is drawn');
  assert.equal(pose.faces[0]!.length, 68);
  assert.equal(pose.hands[0]![0], null, 'left wrist below 0.3');
  assert.deepEqual(pose.hands[1]![20], { x: 133 / 200, y: 266 / 400 }, 'the last right-hand point');
});

test('hands are 2 px bones at 160…220 with 4 px joints at 240, faces 3 px dots at 200, drawn over the body', () => {
  assert.deepEqual([HAND_GRAY[0], HAND_GRAY[7], HAND_GRAY[13], HAND_GRAY[19]], [160, 182, 201, 220]);
  const none = (n: number): Keypoint[] => new Array<Keypoint>(n).fill(null);
  const body = none(18);
  body[1] = { x: 10 / 100, y: 50 / 100 };
  body[2] = { x: 60 / 100, y: 50 / 100 };
  const hand = none(21);
  hand[0] = { x: 20 / 100, y: 80 / 100 }; // wrist
  hand[1] = { x: 60 / 100, y: 80 / 100 }; // edge 0: wrist → thumb 1
  const face = none(68);
  face[0] = { x: 80 / 100, y: 20 / 100 };
  face[1] = { x: 0, y: 20 / 100 }; // pixel column 0: not drawn
  const map = drawWholeBodyGray({ body, hands: [none(21), hand], faces: [face] }, 100, 100);
  const at = (x: number, y: number): number => map[y * 100 + x]!;
  assert.equal(at(35, 50), Math.floor(LIMB_GRAY[0]! * 0.6), 'body limb');
  assert.equal(at(40, 80), HAND_GRAY[0], 'bone');
  assert.equal(at(40, 81), HAND_GRAY[0], 'one pixel off the bone: still the bone (2 px thick)');
  assert.equal(at(40, 82), 0, 'two pixels off the bone');
  assert.equal(at(20, 84), HAND_POINT_GRAY, 'wrist dot, radius 4');
  assert.equal(at(20, 85), 0);
  assert.equal(at(83, 20), FACE_POINT_GRAY, 'face dot, radius 3');
  assert.equal(at(84, 20), 0);
  assert.equal(at(0, 20), 0, 'the face point in column 0 is skipped');
  const hidden = drawWholeBodyGray({ body: none(18), hands: [none(21), none(21)], faces: [none(68)] }, 8, 8);
  assert.ok(
    hidden.every((v) => v === 0),
    'nothing visible: a black map',
  );
});

test('through ONNX Runtime: the person box, its crop and the SimCC peaks come back as the pose of the photo', async () => {
  const dir = scratch();
  const { x, y } = simccOutputs([
    { k: 5, x: 288, y: 384, score: 0.9 }, // left shoulder at the crop centre (63, 123)
    { k: 6, x: 0, y: 0, score: 0.8 }, // right shoulder at the crop corner (40.5, 93)
    { k: 23, x: 96, y: 192, score: 0.7 }, // face 0: (48/288·45 + 40.5, 96/384·60 + 93) = (48, 108)
    { k: 112, x: 192, y: 576, score: 0.6 }, // right wrist: (55.5, 138)
  ]);
  await writeTinyDwPose(dir, { detector: DETECTIONS, simccX: x, simccY: y });
  const dwpose = await DwPose.open(findDwPose(dir)!, { providers: ['cpu'], threads: 1 });
  try {
    const photo = { data: new Uint8Array(320 * 480 * 3).fill(90), width: 320, height: 480, channels: 3 as const };
    const pose = await dwpose.estimate(photo);
    const px = (k: Keypoint, expected: [number, number], what: string): void => {
      assert.ok(k, what);
      near(k.x * 320, expected[0], `${what} x`, 1e-6);
      near(k.y * 480, expected[1], `${what} y`, 1e-6);
    };
    px(pose.body[5]!, [63, 123], 'left shoulder');
    px(pose.body[2]!, [40.5, 93], 'right shoulder');
    px(pose.body[1]!, [51.75, 108], 'neck');
    assert.equal(pose.body[0], null);
    px(pose.faces[0]![0]!, [48, 108], 'face 0');
    px(pose.hands[1]![0]!, [55.5, 138], 'right wrist');
    assert.ok(pose.hands[0]!.every((k) => k === null));
  } finally {
    await dwpose.release();
  }

  // No person detected: the whole photo is the box, (0, 0)–(320, 480) → centre (160, 240), 450×600.
  const empty = scratch();
  await writeTinyDwPose(empty, { detector: detectorOutput([]), simccX: x, simccY: y });
  const whole = await DwPose.open(findDwPose(empty)!, { providers: ['cpu'], threads: 1 });
  try {
    const pose = await whole.estimate({ data: new Uint8Array(320 * 480 * 3), width: 320, height: 480, channels: 3 });
    near(pose.body[5]!.x * 320, 160, 'x', 1e-6);
    near(pose.body[5]!.y * 480, 240, 'y', 1e-6);
    near(pose.body[2]!.x * 320, 160 - 225, 'corner x', 1e-6);
    near(pose.body[2]!.y * 480, 240 - 300, 'corner y', 1e-6);
  } finally {
    await whole.release();
  }
});

test('DWPose files are checked by shape, not name: what does not fit is refused with what was found and what is expected', async () => {
  const dir = scratch();
  const { x, y } = simccOutputs([]);
  await writeTinyDwPose(dir, { detector: new Float32Array(8400 * 85), simccX: x, simccY: y }, [{ name: 'output', dims: [1, 8400, 6] }]);
  await assert.rejects(
    DwPose.open(findDwPose(dir)!, { providers: ['cpu'] }),
    /yolox_l\.onnx has inputs pixels \[1,3,640,640\] and outputs output \[1,8400,6\]; expected one input \[1,3,640,640\] and one output \[1,8400,85\] \(names are not checked\)/,
  );
  const rank = scratch();
  await writeTinyDwPose(rank, { detector: new Float32Array(8400 * 85), simccX: x, simccY: y }, [{ name: 'output', dims: [8400, 85] }]);
  await assert.rejects(DwPose.open(findDwPose(rank)!, { providers: ['cpu'] }), /outputs output \[8400,85\]; expected/, 'rank 2, not 3');
  assert.equal(findDwPose(scratch()), null, 'no files: MediaPipe poses');
  const half = scratch();
  await writeTinyDwPose(half, { detector: DETECTIONS, simccX: x, simccY: y });
  rmSync(join(half, 'dw-ll_ucoco_384.onnx'));
  assert.throws(() => findDwPose(half), /dw-ll_ucoco_384\.onnx is missing/);
});

test('a pose model whose SimCC outputs cannot be told apart by their bins is refused', async () => {
  const dir = scratch();
  const { x, y } = simccOutputs([]);
  await writeTinyDwPose(dir, { detector: DETECTIONS, simccX: x, simccY: y });
  // Both outputs with 576 bins: neither is 2 × the input height of 384.
  const same = await constantModel(
    [{ name: 'crop', dims: [1, 3, 384, 288] }],
    [
      { name: 'a', dims: [1, 133, 576], values: new Float32Array(133 * 576) },
      { name: 'b', dims: [1, 133, 576], values: new Float32Array(133 * 576) },
    ],
  );
  writeFileSync(join(dir, 'dw-ll_ucoco_384.onnx'), same);
  await assert.rejects(
    DwPose.open(findDwPose(dir)!, { providers: ['cpu'] }),
    /dw-ll_ucoco_384\.onnx has inputs crop \[1,3,384,288\] and outputs a \[1,133,576\], b \[1,133,576\]; expected one input \[1,3,384,288\] and two outputs \[1,133,576\] \(x\) and \[1,133,768\] \(y\), in either order/,
  );
});
