/**
 * DWPose's arithmetic around its two ONNX models, as the FASHN reference
 * (after DWPose's onnx branch) does it: the YOLOX-L person detector's
 * letterbox input and grid decoding with NMS, the top-down crop (bbox ×1.25,
 * widened to 288:384) and its normalisation, SimCC decoding and the way
 * back to image pixels, OpenPose's keypoint order with a neck, and the
 * choice of one person. Images here are BGR, as the reference feeds them.
 */
import { VISIBLE, type Keypoint, type WholeBodyPose } from './pose-map.ts';

/** The detector's square input side. */
export const DETECTOR_SIZE = 640;
/** YOLOX's output rows: one per grid cell at strides 8, 16, 32 of 640. */
export const DETECTOR_ROWS = 8400;
/** Box (4) + objectness (1) + COCO's 80 class scores. */
export const DETECTOR_COLUMNS = 85;
export const POSE_WIDTH = 288;
export const POSE_HEIGHT = 384;
/** COCO-WholeBody keypoints: 17 body, 6 feet, 68 face, 2 × 21 hands. */
export const WHOLEBODY_KEYPOINTS = 133;
/** SimCC bins per pixel. */
export const SIMCC_SPLIT = 2;

const STRIDES = [8, 16, 32];
const LETTERBOX_FILL = 114;
const SCORE_MIN = 0.1;
const NMS_IOU = 0.45;
const PERSON_MIN = 0.3;
const BOX_PADDING = 1.25;
/** mmpose's ImageNet statistics, applied in the image's own channel order (the reference's image is BGR). */
const MEAN = [123.675, 116.28, 103.53];
const STD = [58.395, 57.12, 57.375];
/** OpenPose index ← COCO index after the neck is inserted at 17 (the rest stay put). */
const OPENPOSE_FROM: readonly [number, number][] = [
  [1, 17], [2, 6], [3, 8], [4, 10], [6, 7], [7, 9], [8, 12], [9, 14],
  [10, 16], [12, 13], [13, 15], [14, 2], [15, 1], [16, 4], [17, 3],
]; // prettier-ignore

/** A three-channel image, interleaved bytes. */
export interface Bgr {
  data: Uint8Array;
  width: number;
  height: number;
}

/** A detected box in image pixels (corners) with its score. */
export interface Box {
  x1: number;
  y1: number;
  x2: number;
  y2: number;
  score: number;
}

/** Keypoints of one person in image pixels, `[x0, y0, x1, y1, …]`, with a score each. */
export interface PersonKeypoints {
  points: Float64Array;
  scores: Float64Array;
}

/** Where a crop comes from: the box's centre and its padded, 3:4 size in image pixels. */
export interface CropPlan {
  cx: number;
  cy: number;
  width: number;
  height: number;
}

/** RGB bytes → BGR bytes. */
export function toBgr(rgb: Uint8Array): Uint8Array {
  const out = new Uint8Array(rgb.length);
  for (let i = 0; i < rgb.length; i += 3) {
    out[i] = rgb[i + 2]!;
    out[i + 1] = rgb[i + 1]!;
    out[i + 2] = rgb[i]!;
  }
  return out;
}

/** OpenCV's INTER_LINEAR resize of three-channel bytes (pixel centres aligned, edges clamped). */
export function resizeLinear(image: Bgr, width: number, height: number): Uint8Array {
  const axis = (from: number, to: number): { i0: Int32Array; i1: Int32Array; t: Float64Array } => {
    const [i0, i1, t] = [new Int32Array(to), new Int32Array(to), new Float64Array(to)];
    const scale = from / to;
    for (let d = 0; d < to; d++) {
      const f = (d + 0.5) * scale - 0.5;
      let s = Math.floor(f);
      let w = f - s;
      if (s < 0) [s, w] = [0, 0];
      if (s >= from - 1) [s, w] = [from - 1, 0];
      [i0[d], i1[d], t[d]] = [s, Math.min(s + 1, from - 1), w];
    }
    return { i0, i1, t };
  };
  const xs = axis(image.width, width);
  const ys = axis(image.height, height);
  const out = new Uint8Array(width * height * 3);
  const src = image.data;
  for (let y = 0; y < height; y++) {
    const [r0, r1, ty] = [ys.i0[y]! * image.width, ys.i1[y]! * image.width, ys.t[y]!];
    for (let x = 0; x < width; x++) {
      const [c0, c1, tx] = [xs.i0[x]!, xs.i1[x]!, xs.t[x]!];
      for (let c = 0; c < 3; c++) {
        const top = src[(r0 + c0) * 3 + c]! * (1 - tx) + src[(r0 + c1) * 3 + c]! * tx;
        const bottom = src[(r1 + c0) * 3 + c]! * (1 - tx) + src[(r1 + c1) * 3 + c]! * tx;
        out[(y * width + x) * 3 + c] = Math.round(top * (1 - ty) + bottom * ty);
      }
    }
  }
  return out;
}

/**
 * The detector's input: the image scaled by r = min(640/h, 640/w) to
 * int(w·r)×int(h·r) at the top left of a 640×640 canvas of 114, as raw
 * 0…255 floats in [3,640,640] (no normalisation).
 */
export function detectorInput(image: Bgr): { tensor: Float32Array; ratio: number } {
  const size = DETECTOR_SIZE;
  const ratio = Math.min(size / image.height, size / image.width);
  const [width, height] = [Math.trunc(image.width * ratio), Math.trunc(image.height * ratio)];
  const resized = resizeLinear(image, width, height);
  const tensor = new Float32Array(3 * size * size).fill(LETTERBOX_FILL);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      for (let c = 0; c < 3; c++) tensor[c * size * size + y * size + x] = resized[(y * width + x) * 3 + c]!;
    }
  }
  return { tensor, ratio };
}

/**
 * YOLOX's raw rows [8400, 85] → person candidates in image pixels: each row's
 * cell (x, y) and stride s give the centre ((dx + x)·s, (dy + y)·s) and size
 * (e^dw·s, e^dh·s); the score is objectness × the person class; rows scoring
 * at most 0.1 are dropped; `ratio` undoes the letterbox scale.
 */
export function decodeDetections(output: Float32Array, ratio: number): Box[] {
  if (output.length !== DETECTOR_ROWS * DETECTOR_COLUMNS) {
    throw new Error(`detector output has ${output.length} values, expected ${DETECTOR_ROWS}×${DETECTOR_COLUMNS}`);
  }
  const boxes: Box[] = [];
  let row = 0;
  for (const stride of STRIDES) {
    const cells = DETECTOR_SIZE / stride;
    for (let gy = 0; gy < cells; gy++) {
      for (let gx = 0; gx < cells; gx++, row++) {
        const o = row * DETECTOR_COLUMNS;
        const score = output[o + 4]! * output[o + 5]!;
        if (!(score > SCORE_MIN)) continue;
        const cx = (output[o]! + gx) * stride;
        const cy = (output[o + 1]! + gy) * stride;
        const w = Math.exp(output[o + 2]!) * stride;
        const h = Math.exp(output[o + 3]!) * stride;
        boxes.push({ x1: (cx - w / 2) / ratio, y1: (cy - h / 2) / ratio, x2: (cx + w / 2) / ratio, y2: (cy + h / 2) / ratio, score });
      }
    }
  }
  return boxes;
}

/** Greedy NMS, best score first, with YOLOX's +1 pixel box sizes; keeps boxes overlapping a kept one by at most `iou`. */
export function nms(boxes: readonly Box[], iou = NMS_IOU): Box[] {
  const order = [...boxes].sort((a, b) => b.score - a.score);
  const area = (b: Box): number => (b.x2 - b.x1 + 1) * (b.y2 - b.y1 + 1);
  const kept: Box[] = [];
  while (order.length > 0) {
    const best = order.shift()!;
    kept.push(best);
    for (let i = order.length - 1; i >= 0; i--) {
      const other = order[i]!;
      const w = Math.max(0, Math.min(best.x2, other.x2) - Math.max(best.x1, other.x1) + 1);
      const h = Math.max(0, Math.min(best.y2, other.y2) - Math.max(best.y1, other.y1) + 1);
      const inter = w * h;
      if (inter / (area(best) + area(other) - inter) > iou) order.splice(i, 1);
    }
  }
  return kept;
}

/** The people the detector found: decoded, NMS at 0.45, kept above 0.3, best first. */
export function personBoxes(output: Float32Array, ratio: number): Box[] {
  return nms(decodeDetections(output, ratio)).filter((box) => box.score > PERSON_MIN);
}

/** The crop for a box: centre, size × 1.25, then widened or heightened to 288:384. */
export function cropPlan(box: Omit<Box, 'score'>): CropPlan {
  let width = (box.x2 - box.x1) * BOX_PADDING;
  let height = (box.y2 - box.y1) * BOX_PADDING;
  const aspect = POSE_WIDTH / POSE_HEIGHT;
  if (width > height * aspect) height = width / aspect;
  else width = height * aspect;
  return { cx: (box.x1 + box.x2) / 2, cy: (box.y1 + box.y2) / 2, width, height };
}

/**
 * The pose model's input [3,384,288]: the crop scaled to 288×384 by
 * bilinear sampling (cv2.warpAffine: output pixel p reads image point
 * (p − (144, 192))·w/288 + centre, zero outside the image), rounded to
 * bytes, then (v − mean)/std per channel.
 */
export function poseInput(image: Bgr, plan: CropPlan): Float32Array {
  const [W, H] = [POSE_WIDTH, POSE_HEIGHT];
  const step = plan.width / W;
  const tensor = new Float32Array(3 * W * H);
  const pixel = (x: number, y: number, c: number): number =>
    x < 0 || y < 0 || x >= image.width || y >= image.height ? 0 : image.data[(y * image.width + x) * 3 + c]!;
  for (let y = 0; y < H; y++) {
    const sy = (y - H / 2) * step + plan.cy;
    const y0 = Math.floor(sy);
    const ty = sy - y0;
    for (let x = 0; x < W; x++) {
      const sx = (x - W / 2) * step + plan.cx;
      const x0 = Math.floor(sx);
      const tx = sx - x0;
      for (let c = 0; c < 3; c++) {
        const top = pixel(x0, y0, c) * (1 - tx) + pixel(x0 + 1, y0, c) * tx;
        const bottom = pixel(x0, y0 + 1, c) * (1 - tx) + pixel(x0 + 1, y0 + 1, c) * tx;
        const value = Math.min(255, Math.round(top * (1 - ty) + bottom * ty));
        tensor[c * W * H + y * W + x] = (value - MEAN[c]!) / STD[c]!;
      }
    }
  }
  return tensor;
}

/**
 * SimCC → keypoints in the crop's pixels: the first maximum of each
 * keypoint's x and y bins divided by the split ratio; the score is the
 * smaller of the two maxima; a score ≤ 0 puts the point at (−1, −1) bins.
 * Then back to image pixels: p/(288, 384)·size + centre − size/2.
 */
export function decodeSimcc(simccX: Float32Array, simccY: Float32Array, keypoints: number, plan: CropPlan): PersonKeypoints {
  const binsX = simccX.length / keypoints;
  const binsY = simccY.length / keypoints;
  if (!Number.isInteger(binsX) || !Number.isInteger(binsY)) throw new Error('SimCC outputs do not divide into keypoints');
  const argmax = (values: Float32Array, from: number, count: number): [number, number] => {
    let [best, at] = [-Infinity, 0];
    for (let i = 0; i < count; i++) {
      const v = values[from + i]!;
      if (v > best) [best, at] = [v, i];
    }
    return [at, best];
  };
  const points = new Float64Array(2 * keypoints);
  const scores = new Float64Array(keypoints);
  for (let k = 0; k < keypoints; k++) {
    const [atX, maxX] = argmax(simccX, k * binsX, binsX);
    const [atY, maxY] = argmax(simccY, k * binsY, binsY);
    const score = Math.min(maxX, maxY);
    const [x, y] = score <= 0 ? [-1, -1] : [atX, atY];
    points[2 * k] = (x / SIMCC_SPLIT / POSE_WIDTH) * plan.width + plan.cx - plan.width / 2;
    points[2 * k + 1] = (y / SIMCC_SPLIT / POSE_HEIGHT) * plan.height + plan.cy - plan.height / 2;
    scores[k] = score;
  }
  return { points, scores };
}

/**
 * COCO-WholeBody's 133 keypoints → 134 in OpenPose's body order: a neck
 * (the shoulders' midpoint, score 1 when both shoulders score above 0.3,
 * else 0) inserted at 17, then the 18 body points reordered as OpenPose's.
 */
export function toOpenPoseOrder(person: PersonKeypoints): PersonKeypoints {
  const n = person.scores.length;
  const points = new Float64Array(2 * (n + 1));
  const scores = new Float64Array(n + 1);
  points.set(person.points.subarray(0, 34), 0);
  points.set(person.points.subarray(34), 36);
  scores.set(person.scores.subarray(0, 17), 0);
  scores.set(person.scores.subarray(17), 18);
  points[34] = (person.points[10]! + person.points[12]!) / 2;
  points[35] = (person.points[11]! + person.points[13]!) / 2;
  scores[17] = person.scores[5]! > VISIBLE && person.scores[6]! > VISIBLE ? 1 : 0;
  const [fromPoints, fromScores] = [points.slice(), scores.slice()];
  for (const [to, from] of OPENPOSE_FROM) {
    points[2 * to] = fromPoints[2 * from]!;
    points[2 * to + 1] = fromPoints[2 * from + 1]!;
    scores[to] = fromScores[from]!;
  }
  return { points, scores };
}

/**
 * The one person to draw when several were found (the reference's
 * _find_best_candidate): the sum of the visible scores of body points 1–13
 * (no head) times the area their points span, where "visible" is judged by
 * the first person's scores for everyone (as the reference does); the
 * highest score sum when every product is 0.
 */
export function bestPerson(people: readonly PersonKeypoints[]): number {
  if (people.length <= 1) return 0;
  const first = people[0]!;
  const visible = Array.from({ length: 13 }, (_, j) => first.scores[j + 1]! > VISIBLE);
  const sums = people.map((p) =>
    Array.from({ length: 13 }, (_, j) => (p.scores[j + 1]! > VISIBLE ? p.scores[j + 1]! : 0)).reduce((a, b) => a + b, 0),
  );
  const areas = people.map((p) => {
    const xs: number[] = [];
    const ys: number[] = [];
    for (let j = 0; j < 13; j++) {
      if (!visible[j]) continue;
      const [x, y] = [p.points[2 * (j + 1)]!, p.points[2 * (j + 1) + 1]!];
      if (x > 0) xs.push(x);
      if (y > 0) ys.push(y);
    }
    return xs.length && ys.length ? (Math.max(...xs) - Math.min(...xs)) * (Math.max(...ys) - Math.min(...ys)) : 0;
  });
  const products = sums.map((s, i) => (Number.isFinite(s * areas[i]!) ? s * areas[i]! : 0));
  const pick = products.every((v) => v === 0) ? sums : products;
  return pick.indexOf(Math.max(...pick));
}

/**
 * One person's 134 OpenPose-ordered keypoints → what the pose map draws, in
 * 0…1 image coordinates: the 18 body points visible above 0.3, the 68 face
 * points and both hands' 21 points visible from 0.3 (the reference hides
 * scores below 0.3); the 6 foot points are not drawn.
 */
export function wholeBodyPose(person: PersonKeypoints, width: number, height: number): WholeBodyPose {
  const at = (k: number, visible: boolean): Keypoint =>
    visible ? { x: person.points[2 * k]! / width, y: person.points[2 * k + 1]! / height } : null;
  const range = (from: number, to: number): Keypoint[] =>
    Array.from({ length: to - from }, (_, i) => at(from + i, person.scores[from + i]! >= VISIBLE));
  return {
    body: Array.from({ length: 18 }, (_, k) => at(k, person.scores[k]! > VISIBLE)),
    hands: [range(92, 113), range(113, 134)],
    faces: [range(24, 92)],
  };
}
