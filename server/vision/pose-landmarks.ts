/**
 * BlazePose's landmark model on a region of interest, post-processed the way
 * MediaPipe's pose_landmark_by_roi graph does it: the rotated crop at
 * 256×256 (values 0..1, edges replicated), 39 landmarks decoded with sigmoid
 * visibility and presence, refined from the heatmap, projected back to the
 * photo; and the model's own person mask in the crop's frame.
 */
import { alignedRect, ROI_SCALE } from './pose-detector.ts';
import { rectToImage, sampleRect } from './geometry.ts';
import type { OrtSession } from '../onnx/ort.ts';
import type { Landmark, RawImage, RotatedRect } from './types.ts';

export const LANDMARK_INPUT = 256;
/** 33 pose landmarks, 2 auxiliary ones (hip centre and body scale, for the next crop), 4 unused. */
const NUM_LANDMARKS = 39;
const NUM_POSE = 33;
const VALUES_PER_LANDMARK = 5;
const HEATMAP_KERNEL = 7;
const HEATMAP_MIN_CONFIDENCE = 0.5;

const sigmoid = (x: number): number => 1 / (1 + Math.exp(-x));

export interface RoiLandmarks {
  /** 33 landmarks in image pixels. */
  landmarks: Landmark[];
  /** The auxiliary landmarks in image pixels: hip centre and the body-scale point. */
  auxiliary: [{ x: number; y: number }, { x: number; y: number }];
  /** The model's confidence that a person fills the crop (0..1). */
  presence: number;
  /** The model's person mask in the crop's frame (LANDMARK_INPUT², 0..1). */
  mask: Float32Array;
  roi: RotatedRect;
}

/**
 * MediaPipe's RefineLandmarksFromHeatmapCalculator: each landmark moves to
 * the confidence-weighted centre of a 7×7 window of its heatmap channel,
 * when the window's best confidence reaches 0.5. Points in 0..1 of the crop.
 */
export function refineFromHeatmap(points: Float32Array, heatmap: Float32Array, size: number, channels: number): void {
  const half = (HEATMAP_KERNEL - 1) / 2;
  for (let k = 0; k < channels; k++) {
    const col = Math.trunc(points[2 * k]! * size);
    const row = Math.trunc(points[2 * k + 1]! * size);
    if (col < 0 || col >= size || row < 0 || row >= size) continue;
    let sum = 0;
    let best = 0;
    let wc = 0;
    let wr = 0;
    for (let r = Math.max(0, row - half); r < Math.min(size, row + half + 1); r++) {
      for (let c = Math.max(0, col - half); c < Math.min(size, col + half + 1); c++) {
        const confidence = sigmoid(heatmap[(r * size + c) * channels + k]!);
        sum += confidence;
        if (confidence > best) best = confidence;
        wc += c * confidence;
        wr += r * confidence;
      }
    }
    if (best >= HEATMAP_MIN_CONFIDENCE && sum > 0) {
      points[2 * k] = wc / size / sum;
      points[2 * k + 1] = wr / size / sum;
    }
  }
}

/** Runs the landmark model on `roi` of `image`. */
export async function landmarksInRoi(session: OrtSession, image: RawImage, roi: RotatedRect): Promise<RoiLandmarks> {
  const input = sampleRect(image, roi, LANDMARK_INPUT, LANDMARK_INPUT, { range: [0, 1], border: 'replicate' });
  const outputs = await session.run({ [session.inputNames[0]!]: { data: input, dims: [1, LANDMARK_INPUT, LANDMARK_INPUT, 3] } });
  const [landmarkName, presenceName, maskName, heatmapName] = session.outputNames;
  const raw = outputs[landmarkName!]!.data;
  const heatmap = outputs[heatmapName!]!;
  const maskLogits = outputs[maskName!]!.data;

  const points = new Float32Array(NUM_LANDMARKS * 2);
  for (let k = 0; k < NUM_LANDMARKS; k++) {
    points[2 * k] = raw[k * VALUES_PER_LANDMARK]! / LANDMARK_INPUT;
    points[2 * k + 1] = raw[k * VALUES_PER_LANDMARK + 1]! / LANDMARK_INPUT;
  }
  const heatmapSize = heatmap.dims[1]!;
  refineFromHeatmap(points, heatmap.data, heatmapSize, heatmap.dims[3]!);

  const project = (k: number): { x: number; y: number } => rectToImage(roi, points[2 * k]!, points[2 * k + 1]!);
  const landmarks: Landmark[] = [];
  for (let k = 0; k < NUM_POSE; k++) {
    const o = k * VALUES_PER_LANDMARK;
    const p = project(k);
    landmarks.push({
      x: p.x,
      y: p.y,
      z: (raw[o + 2]! / LANDMARK_INPUT) * roi.width,
      visibility: sigmoid(raw[o + 3]!),
      presence: sigmoid(raw[o + 4]!),
    });
  }
  const mask = new Float32Array(maskLogits.length);
  for (let i = 0; i < mask.length; i++) mask[i] = sigmoid(maskLogits[i]!);
  return {
    landmarks,
    auxiliary: [project(NUM_POSE), project(NUM_POSE + 1)],
    presence: outputs[presenceName!]!.data[0]!,
    mask,
    roi,
  };
}

/** The crop MediaPipe would use next, from the auxiliary landmarks (its pose_landmarks_to_roi). */
export function landmarksRoi(result: RoiLandmarks): RotatedRect {
  return alignedRect(result.auxiliary[0], result.auxiliary[1], ROI_SCALE);
}
