/**
 * BlazePose's person detector, post-processed the way MediaPipe's
 * pose_detection graph does it: SSD anchors for the 224×224 letterboxed
 * input, box and keypoint decoding, sigmoid scores, weighted non-max
 * suppression, letterbox removal, and the rotated region of interest for the
 * landmark model from the detector's first two keypoints.
 */
import { letterboxRect, rectToImage, sampleRect } from './geometry.ts';
import type { OrtSession } from '../onnx/ort.ts';
import type { RawImage, RotatedRect } from './types.ts';

export const DETECTOR_INPUT = 224;

/** MediaPipe's SsdAnchorsCalculator options for the pose detector. */
const POSE_STRIDES = [8, 16, 32, 32, 32] as const;
const ANCHOR_OFFSET = 0.5;

/** TensorsToDetectionsCalculator and NonMaxSuppressionCalculator options. */
const NUM_KEYPOINTS = 4;
const SCORE_CLIP = 100;
export const MIN_DETECTION_SCORE = 0.5;
const NMS_IOU = 0.3;
/** The detected region is scaled by this (RectTransformationCalculator) before the landmark model. */
export const ROI_SCALE = 1.25;

export interface Anchor {
  x: number;
  y: number;
}

/**
 * SSD anchor centres for a square input (MediaPipe's SsdAnchorsCalculator with fixed anchor size, so every
 * anchor is 1×1 and only the centres matter): one grid per stride, layers that share a stride merged, two
 * anchors per cell and layer (aspect ratio 1 and the interpolated scale).
 */
export function ssdAnchors(inputSize: number, strides: readonly number[]): Anchor[] {
  const anchors: Anchor[] = [];
  let layer = 0;
  while (layer < strides.length) {
    let perCell = 0;
    let last = layer;
    while (last < strides.length && strides[last] === strides[layer]) {
      perCell += 2;
      last++;
    }
    const cells = Math.ceil(inputSize / strides[layer]!);
    for (let y = 0; y < cells; y++) {
      for (let x = 0; x < cells; x++) {
        for (let k = 0; k < perCell; k++) anchors.push({ x: (x + ANCHOR_OFFSET) / cells, y: (y + ANCHOR_OFFSET) / cells });
      }
    }
    layer = last;
  }
  return anchors;
}

/** The pose detector's 2254 anchor centres, normalised to the input. */
export function poseAnchors(inputSize = DETECTOR_INPUT): Anchor[] {
  return ssdAnchors(inputSize, POSE_STRIDES);
}

/** A detection in image pixels. Keypoints: hip centre, full-body scale point, shoulder centre, upper-body scale point. */
export interface PoseDetection {
  score: number;
  box: { xmin: number; ymin: number; width: number; height: number };
  keypoints: { x: number; y: number }[];
}

/** A detection in the detector's normalised input frame (keypoints as x, y pairs). */
export interface RawDetection {
  score: number;
  xmin: number;
  ymin: number;
  width: number;
  height: number;
  keypoints: number[];
}

/** How an SSD detector's output is laid out: its input size and keypoints per detection (after the 4 box values). */
export interface SsdLayout {
  inputSize: number;
  keypoints: number;
}

const sigmoid = (x: number): number => 1 / (1 + Math.exp(-x));

/** Decodes an SSD detector's raw boxes and scores (TensorsToDetectionsCalculator), keeping those above the threshold. */
export function decodeSsd(
  boxes: Float32Array,
  scores: Float32Array,
  anchors: readonly Anchor[],
  layout: SsdLayout,
  minScore: number,
): RawDetection[] {
  const out: RawDetection[] = [];
  const scale = layout.inputSize;
  const coords = 4 + 2 * layout.keypoints;
  for (let i = 0; i < anchors.length; i++) {
    const score = sigmoid(Math.max(-SCORE_CLIP, Math.min(SCORE_CLIP, scores[i]!)));
    if (score < minScore) continue;
    const a = anchors[i]!;
    const o = i * coords;
    const cx = boxes[o]! / scale + a.x;
    const cy = boxes[o + 1]! / scale + a.y;
    const w = boxes[o + 2]! / scale;
    const h = boxes[o + 3]! / scale;
    const keypoints: number[] = [];
    for (let k = 0; k < layout.keypoints; k++) keypoints.push(boxes[o + 4 + 2 * k]! / scale + a.x, boxes[o + 5 + 2 * k]! / scale + a.y);
    out.push({ score, xmin: cx - w / 2, ymin: cy - h / 2, width: w, height: h, keypoints });
  }
  return out;
}

/** The pose detector's raw output decoded (see decodeSsd). */
export function decodeDetections(
  boxes: Float32Array,
  scores: Float32Array,
  anchors: readonly Anchor[],
  minScore = MIN_DETECTION_SCORE,
): RawDetection[] {
  return decodeSsd(boxes, scores, anchors, { inputSize: DETECTOR_INPUT, keypoints: NUM_KEYPOINTS }, minScore);
}

function iou(a: RawDetection, b: RawDetection): number {
  const x0 = Math.max(a.xmin, b.xmin);
  const y0 = Math.max(a.ymin, b.ymin);
  const x1 = Math.min(a.xmin + a.width, b.xmin + b.width);
  const y1 = Math.min(a.ymin + a.height, b.ymin + b.height);
  const inter = Math.max(0, x1 - x0) * Math.max(0, y1 - y0);
  const union = a.width * a.height + b.width * b.height - inter;
  return union > 0 ? inter / union : 0;
}

/**
 * MediaPipe's weighted non-max suppression: the best remaining detection
 * absorbs every detection overlapping it by more than the threshold, and its
 * box and keypoints become their score-weighted mean (its score stays).
 */
export function weightedNms(detections: readonly RawDetection[], iouThreshold = NMS_IOU): RawDetection[] {
  let remaining = [...detections].sort((a, b) => b.score - a.score);
  const out: RawDetection[] = [];
  while (remaining.length > 0) {
    const best = remaining[0]!;
    const cluster: RawDetection[] = [];
    const rest: RawDetection[] = [];
    for (const d of remaining) (iou(best, d) > iouThreshold ? cluster : rest).push(d);
    let total = 0;
    let xmin = 0;
    let ymin = 0;
    let xmax = 0;
    let ymax = 0;
    const keypoints = new Array<number>(best.keypoints.length).fill(0);
    for (const d of cluster) {
      total += d.score;
      xmin += d.score * d.xmin;
      ymin += d.score * d.ymin;
      xmax += d.score * (d.xmin + d.width);
      ymax += d.score * (d.ymin + d.height);
      for (let k = 0; k < keypoints.length; k++) keypoints[k]! += d.score * d.keypoints[k]!;
    }
    out.push({
      score: best.score,
      xmin: xmin / total,
      ymin: ymin / total,
      width: (xmax - xmin) / total,
      height: (ymax - ymin) / total,
      keypoints: keypoints.map((v) => v / total),
    });
    remaining = rest;
  }
  return out;
}

/** Runs the detector on a photo; detections in image pixels, best first. */
export async function detectPoses(session: OrtSession, image: RawImage, anchors: readonly Anchor[]): Promise<PoseDetection[]> {
  const frame = letterboxRect(image.width, image.height);
  const input = sampleRect(image, frame, DETECTOR_INPUT, DETECTOR_INPUT, { range: [-1, 1], border: 'zero' });
  const outputs = await session.run({ [session.inputNames[0]!]: { data: input, dims: [1, DETECTOR_INPUT, DETECTOR_INPUT, 3] } });
  const boxes = outputs[session.outputNames[0]!]!.data;
  const scores = outputs[session.outputNames[1]!]!.data;
  const found = weightedNms(decodeDetections(boxes, scores, anchors));
  // Letterbox removal: the frame is unrotated, so a point maps with rectToImage.
  return found.map((d) => {
    const p0 = rectToImage(frame, d.xmin, d.ymin);
    const keypoints: { x: number; y: number }[] = [];
    for (let k = 0; k < d.keypoints.length; k += 2) keypoints.push(rectToImage(frame, d.keypoints[k]!, d.keypoints[k + 1]!));
    return { score: d.score, box: { xmin: p0.x, ymin: p0.y, width: d.width * frame.width, height: d.height * frame.height }, keypoints };
  });
}

/**
 * MediaPipe's AlignmentPointsRectsCalculator followed by its
 * RectTransformationCalculator (square on the long side, scaled): a square
 * centred on `centre`, twice the distance to `scalePoint` wide, rotated so
 * that `scalePoint` is straight up, then scaled by `scale`.
 */
export function alignedRect(centre: { x: number; y: number }, scalePoint: { x: number; y: number }, scale = ROI_SCALE): RotatedRect {
  const dx = scalePoint.x - centre.x;
  const dy = scalePoint.y - centre.y;
  const side = 2 * Math.hypot(dx, dy) * scale;
  const rotation = normalizeRadians(Math.PI / 2 - Math.atan2(-dy, dx));
  return { cx: centre.x, cy: centre.y, width: side, height: side, rotation };
}

export function normalizeRadians(angle: number): number {
  return angle - 2 * Math.PI * Math.floor((angle + Math.PI) / (2 * Math.PI));
}

/** The landmark model's region of interest for a detection. */
export function detectionRoi(detection: PoseDetection): RotatedRect {
  return alignedRect(detection.keypoints[0]!, detection.keypoints[1]!);
}
