/**
 * Face Mesh's arithmetic without the models: the detector's anchors, the
 * decoding of its raw tensors, the landmark crop, the head box from pose
 * landmarks, and the filled face oval and skin masks on drawn landmarks.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  decodeFaceDetections,
  FACE_DETECTOR_INPUT,
  FACE_LANDMARKS,
  faceAnchors,
  faceRoi,
  landmarksFaceRoi,
  poseHeadBox,
} from '../../server/vision/face-mesh.ts';
import {
  FACE_FEATURES,
  FACE_OVAL,
  faceOvalMask,
  faceSkinMask,
  fillPolygon,
  maskArea,
  type Point,
} from '../../server/vision/face-regions.ts';
import { weightedNms } from '../../server/vision/pose-detector.ts';
import type { Landmark, Mask } from '../../server/vision/types.ts';

const close = (actual: number, expected: number, tolerance: number, what: string): void =>
  assert.ok(Math.abs(actual - expected) <= tolerance, `${what}: ${actual} is not within ${tolerance} of ${expected}`);

test('896 anchors: 16×16 cells × 2 at stride 8, then 8×8 cells × 6 for the three stride-16 layers', () => {
  const anchors = faceAnchors();
  assert.equal(anchors.length, 896);
  assert.deepEqual(anchors[0], { x: 0.5 / 16, y: 0.5 / 16 });
  assert.deepEqual(anchors[1], anchors[0]);
  assert.deepEqual(anchors[2], { x: 1.5 / 16, y: 0.5 / 16 });
  assert.deepEqual(anchors[511], { x: 15.5 / 16, y: 15.5 / 16 });
  assert.deepEqual(anchors[512], { x: 0.5 / 8, y: 0.5 / 8 });
  assert.deepEqual(anchors[517], anchors[512]);
  assert.deepEqual(anchors[518], { x: 1.5 / 8, y: 0.5 / 8 });
  assert.deepEqual(anchors[895], { x: 7.5 / 8, y: 7.5 / 8 });
});

test('decoding a synthetic tensor: offsets from the anchor in input pixels, sigmoid scores, threshold, weighted NMS', () => {
  const anchors = faceAnchors();
  const boxes = new Float32Array(896 * 16);
  const scores = new Float32Array(896).fill(-10);
  const s = FACE_DETECTOR_INPUT;
  // Anchor 600 (8×8 layer) carries a face 32 px wide, 8 px right of and 4 px below the anchor's centre.
  const put = (i: number, dx: number, dy: number, size: number, logit: number): void => {
    scores[i] = logit;
    boxes.set([dx, dy, size, size], i * 16);
    for (let k = 0; k < 6; k++) boxes.set([dx + k, dy - k], i * 16 + 4 + 2 * k);
  };
  put(600, 8, 4, 32, 3);
  put(601, 9, 4, 32, 1); // the same face from the next anchor of the cell: merged by NMS
  put(20, 0, 0, 10, -1); // below the 0.5 threshold
  const raw = decodeFaceDetections(boxes, scores, anchors);
  assert.equal(raw.length, 2);
  const a = anchors[600]!;
  const first = raw.find((d) => d.score > 0.9)!;
  close(first.score, 1 / (1 + Math.exp(-3)), 1e-9, 'score');
  close(first.xmin, a.x + (8 - 16) / s, 1e-6, 'xmin');
  close(first.ymin, a.y + (4 - 16) / s, 1e-6, 'ymin');
  close(first.width, 32 / s, 1e-6, 'width');
  assert.equal(first.keypoints.length, 12);
  close(first.keypoints[4]!, a.x + 10 / s, 1e-6, 'third keypoint x');
  close(first.keypoints[5]!, a.y + 2 / s, 1e-6, 'third keypoint y');

  const merged = weightedNms(raw);
  assert.equal(merged.length, 1);
  const w = [1 / (1 + Math.exp(-3)), 1 / (1 + Math.exp(-1))];
  close(merged[0]!.xmin, a.x + (8 - 16 + w[1]! / (w[0]! + w[1]!)) / s, 1e-6, 'merged xmin is the score-weighted mean');
});

test('the landmark crop: the box ×1.5 square on its long side, turned level with the eyes', () => {
  const level = faceRoi({ x0: 100, y0: 200, x1: 180, y1: 300 }, { x: 120, y: 240 }, { x: 160, y: 240 });
  assert.deepEqual(level, { cx: 140, cy: 250, width: 150, height: 150, rotation: 0 });
  // The person's left eye lower on the image (head tilted clockwise): the crop turns clockwise too.
  const tilted = faceRoi({ x0: 0, y0: 0, x1: 100, y1: 100 }, { x: 30, y: 40 }, { x: 70, y: 80 });
  close(tilted.rotation, Math.PI / 4, 1e-12, 'rotation');
  // A head upside down.
  close(Math.abs(faceRoi({ x0: 0, y0: 0, x1: 10, y1: 10 }, { x: 7, y: 5 }, { x: 3, y: 5 }).rotation), Math.PI, 1e-12, 'upside down');
});

/** 468 landmarks: the oval on an ellipse, the eyes, brows and lips as small circles where a face has them, the rest at the centre. */
function drawnFace(cx: number, cy: number, rx: number, ry: number): Point[] {
  const points: Point[] = Array.from({ length: FACE_LANDMARKS }, () => ({ x: cx, y: cy }));
  FACE_OVAL.forEach((k, i) => {
    const t = (2 * Math.PI * i) / FACE_OVAL.length - Math.PI / 2;
    points[k] = { x: cx + rx * Math.cos(t), y: cy + ry * Math.sin(t) };
  });
  const ring = (indices: readonly number[], x: number, y: number, r: number): void =>
    indices.forEach((k, i) => {
      const t = (2 * Math.PI * i) / indices.length;
      points[k] = { x: x + r * Math.cos(t), y: y + r * Math.sin(t) };
    });
  ring(FACE_FEATURES.rightEye, cx - rx * 0.4, cy - ry * 0.15, rx * 0.12);
  ring(FACE_FEATURES.leftEye, cx + rx * 0.4, cy - ry * 0.15, rx * 0.12);
  ring(FACE_FEATURES.rightBrow, cx - rx * 0.4, cy - ry * 0.35, rx * 0.1);
  ring(FACE_FEATURES.leftBrow, cx + rx * 0.4, cy - ry * 0.35, rx * 0.1);
  ring(FACE_FEATURES.lips, cx, cy + ry * 0.5, rx * 0.2);
  return points;
}

const at = (mask: Mask, x: number, y: number): number => mask.data[Math.floor(y) * mask.width + Math.floor(x)]!;

test('the face oval fills the ellipse its landmarks are drawn on; pixels outside stay 0', () => {
  const [w, h, cx, cy, rx, ry] = [200, 240, 100, 110, 60, 80];
  const face = drawnFace(cx, cy, rx, ry);
  const oval = faceOvalMask(face, w, h);
  assert.deepEqual([oval.width, oval.height, oval.data.length], [w, h, w * h]);
  assert.ok(oval.data.every((v) => v === 0 || v === 255));
  // A 36-gon inscribed in the ellipse: its area is (36/2π)·sin(2π/36) of the ellipse's.
  const polygonArea = Math.PI * rx * ry * ((FACE_OVAL.length / (2 * Math.PI)) * Math.sin((2 * Math.PI) / FACE_OVAL.length));
  close(maskArea(oval), polygonArea, polygonArea * 0.01, 'oval area');
  assert.equal(at(oval, cx, cy), 255);
  assert.equal(at(oval, cx, cy - ry + 3), 255);
  assert.equal(at(oval, cx + rx + 2, cy), 0);
  assert.equal(at(oval, 2, 2), 0);

  const skin = faceSkinMask(face, w, h);
  assert.equal(at(skin, cx - rx * 0.4, cy - ry * 0.15), 0, 'an eye is not skin');
  assert.equal(at(skin, cx, cy + ry * 0.5), 0, 'the mouth is not skin');
  assert.equal(at(skin, cx + rx * 0.6, cy + ry * 0.15), 255, 'a cheek is skin');
  for (let i = 0; i < skin.data.length; i++) if (skin.data[i]) assert.equal(oval.data[i], 255, 'skin lies inside the oval');
  assert.ok(maskArea(skin) < maskArea(oval) * 0.9);
});

test('polygon fill: pixel centres decide, concave shapes and shapes past the edge', () => {
  const mask: Mask = { data: new Uint8Array(20 * 10), width: 20, height: 10 };
  fillPolygon(mask, [
    { x: 2, y: 1 },
    { x: 6, y: 1 },
    { x: 6, y: 4 },
    { x: 2, y: 4 },
  ]);
  assert.equal(maskArea(mask), 4 * 3);
  mask.data.fill(0);
  // An L: 6×6 less its 3×3 top-right corner.
  fillPolygon(mask, [
    { x: 0, y: 0 },
    { x: 3, y: 0 },
    { x: 3, y: 3 },
    { x: 6, y: 3 },
    { x: 6, y: 6 },
    { x: 0, y: 6 },
  ]);
  assert.equal(maskArea(mask), 36 - 9);
  assert.equal(at(mask, 4, 1), 0);
  mask.data.fill(0);
  fillPolygon(mask, [
    { x: -5, y: -5 },
    { x: 30, y: -5 },
    { x: 30, y: 30 },
  ]);
  assert.ok(maskArea(mask) > 0 && maskArea(mask) < 200, 'clipped to the mask');
  fillPolygon(mask, [
    { x: 0, y: 0 },
    { x: 20, y: 0 },
    { x: 20, y: 10 },
    { x: 0, y: 10 },
  ]);
  fillPolygon(
    mask,
    [
      { x: 5, y: 2 },
      { x: 8, y: 2 },
      { x: 8, y: 5 },
      { x: 5, y: 5 },
    ],
    0,
  );
  assert.equal(maskArea(mask), 200 - 9, 'value 0 cuts a hole');
});

test('the crop implied by drawn landmarks is centred on them, 1.5× their extent, level with the eye corners', () => {
  const face = drawnFace(100, 110, 60, 80);
  face[33] = { x: 70, y: 95 };
  face[263] = { x: 130, y: 95 };
  const roi = landmarksFaceRoi(face);
  close(roi.cx, 100, 1e-9, 'cx');
  close(roi.width, 160 * 1.5, 1e-9, 'side');
  close(roi.rotation, 0, 1e-12, 'rotation');
});

test('the head box from pose landmarks 0..10 uses only those in view', () => {
  const pose: Landmark[] = Array.from({ length: 33 }, (_, k) => ({ x: 100 + k, y: 50 + k, z: 0, visibility: 0.9, presence: 0.9 }));
  assert.deepEqual(poseHeadBox(pose), { x0: 100, y0: 50, x1: 110, y1: 60 });
  pose[10]!.visibility = 0.1;
  assert.deepEqual(poseHeadBox(pose), { x0: 100, y0: 50, x1: 109, y1: 59 });
  for (const p of pose) p.visibility = 0.1;
  assert.equal(poseHeadBox(pose), null);
});
