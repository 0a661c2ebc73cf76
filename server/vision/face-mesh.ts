/**
 * "Where exactly is the face?": MediaPipe Face Mesh on ONNX Runtime, as its
 * face_landmark_front graph does it for a still image. detect (BlazeFace
 * short-range on the letterboxed photo, or on a square around a head box the
 * caller already knows, e.g. from the pose landmarks: a face in a full-body
 * shot is too small for the detector at 128×128) → crop (the detection's box
 * ×1.5, turned level with the eyes) → landmarks (468 points; a second pass
 * on the crop the landmarks imply when the first was poor) → regions (the
 * filled face oval and a skin mask the size of the photo).
 */
import { letterboxRect, rectToImage, sampleRect } from './geometry.ts';
import { boundingBox, extent, faceOvalMask, faceSkinMask, type Box, type Point } from './face-regions.ts';
import { visionModelPath } from './models.ts';
import { OrtSession, type ExecutionProvider } from '../onnx/ort.ts';
import { decodeSsd, normalizeRadians, ssdAnchors, weightedNms, type Anchor, type RawDetection } from './pose-detector.ts';
import type { Landmark, Mask, RawImage, RotatedRect } from './types.ts';

export type { Box } from './face-regions.ts';

export const FACE_DETECTOR_INPUT = 128;
export const FACE_LANDMARK_INPUT = 192;
export const FACE_LANDMARKS = 468;

/** face_detection_short_range.pbtxt: SsdAnchorsCalculator (fixed anchor size, 2 anchors per layer and cell). */
const ANCHOR_STRIDES = [8, 16, 16, 16] as const;
/** TensorsToDetectionsCalculator: box (4) + 6 keypoints × 2 per anchor, coordinates in input pixels. */
const NUM_KEYPOINTS = 6;
export const MIN_FACE_SCORE = 0.5;
/** The detection's box is scaled by this (square on the long side) for the landmark crop; the same from the landmarks. */
const ROI_SCALE = 1.5;
/** Below this (sigmoid of the model's face flag) the landmark model does not see a face in its crop. */
const MIN_FACE_PRESENCE = 0.5;
/** A head box from the caller is searched in a square this many times its long side. */
const HINT_CONTEXT = 2.5;
/** The first crop was poor when the crop the landmarks imply is this far from it (centre shift as a share of its side, size ratio, radians). */
const POOR_CROP = { shift: 0.1, size: 1.25, rotation: 0.2 };

/** Detector keypoints and mesh landmarks used for the crop's rotation: the person's right eye, then the left. */
const DETECTION_EYES = [0, 1] as const;
const MESH_EYE_CORNERS = [33, 263] as const;
/** Landmarks that must lie inside the photo for the face to count as seen: the eyes' outer corners and the nose tip. */
const MUST_SEE = [33, 263, 1] as const;

export interface FaceMeshOptions {
  /** ONNX Runtime intra-op threads per session (default 1). */
  threads?: number;
  providers?: ExecutionProvider[];
  /** Where models/ is (tests). */
  modelsDir?: string;
}

/** A face detection in image pixels. Keypoints: right eye, left eye, nose tip, mouth centre, right ear, left ear (the person's own sides). */
export interface FaceDetection {
  score: number;
  box: { xmin: number; ymin: number; width: number; height: number };
  keypoints: Point[];
}

export interface FaceMeshResult {
  /** 468 Face Mesh landmarks in image pixels; z in the same scale as x, relative to the face's centre (visibility and presence are 1). */
  landmarks: Landmark[];
  /** The box around the landmarks, clamped to the photo. */
  box: Box;
  /** The filled face oval (0/255), the size of the photo. */
  oval: Mask;
  /** The oval less the eyes, brows and lips (0/255): a clean skin sample, give or take hair over the forehead. */
  skin: Mask;
  /** The detector's score and the landmark model's face presence (0..1). */
  detectionScore: number;
  presence: number;
  /** The crop the landmark model looked at. */
  roi: RotatedRect;
}

/** Timings of the last `detect`, in milliseconds. */
export interface FaceMeshTimings {
  detect: number;
  landmarks: number;
  regions: number;
  total: number;
  /** Whether the landmark model ran a second time on a better crop. */
  refined: boolean;
}

/**
 * The 896 anchor centres of the 128×128 detector, normalised: a 16×16 grid
 * with 2 anchors per cell (stride 8), then an 8×8 grid with 6 (the three
 * stride-16 layers merged).
 */
export function faceAnchors(inputSize = FACE_DETECTOR_INPUT): Anchor[] {
  return ssdAnchors(inputSize, ANCHOR_STRIDES);
}

/** A detection in the detector's normalised input frame (keypoints as x, y pairs). */
export type RawFaceDetection = RawDetection;

/** Decodes the raw regressors and classificators (TensorsToDetectionsCalculator), keeping those above the threshold. */
export function decodeFaceDetections(
  boxes: Float32Array,
  scores: Float32Array,
  anchors: readonly Anchor[],
  minScore = MIN_FACE_SCORE,
): RawFaceDetection[] {
  return decodeSsd(boxes, scores, anchors, { inputSize: FACE_DETECTOR_INPUT, keypoints: NUM_KEYPOINTS }, minScore);
}

/**
 * The landmark model's crop (DetectionsToRectsCalculator + RectTransformationCalculator):
 * centred on `box`, square on its long side ×1.5, turned so that the line from
 * `rightEye` to `leftEye` is level.
 */
export function faceRoi(box: Box, rightEye: Point, leftEye: Point): RotatedRect {
  const rotation = normalizeRadians(-Math.atan2(-(leftEye.y - rightEye.y), leftEye.x - rightEye.x));
  const side = Math.max(box.x1 - box.x0, box.y1 - box.y0) * ROI_SCALE;
  return { cx: (box.x0 + box.x1) / 2, cy: (box.y0 + box.y1) / 2, width: side, height: side, rotation };
}

/** The crop MediaPipe would use next, from the landmarks (face_landmark_landmarks_to_roi). */
export function landmarksFaceRoi(landmarks: readonly Point[]): RotatedRect {
  return faceRoi(extent(landmarks), landmarks[MESH_EYE_CORNERS[0]]!, landmarks[MESH_EYE_CORNERS[1]]!);
}

function poorCrop(used: RotatedRect, implied: RotatedRect): boolean {
  const shift = Math.hypot(implied.cx - used.cx, implied.cy - used.cy) / used.width;
  const size = Math.max(implied.width / used.width, used.width / implied.width);
  const turn = Math.abs(normalizeRadians(implied.rotation - used.rotation));
  return shift > POOR_CROP.shift || size > POOR_CROP.size || turn > POOR_CROP.rotation;
}

/** A head box from pose landmarks 0..10 (nose, eyes, ears, mouth), or null when none of them is in front of the camera. */
export function poseHeadBox(pose: readonly Landmark[], minVisibility = 0.5): Box | null {
  const seen = pose.slice(0, 11).filter((p) => p.visibility >= minVisibility);
  if (seen.length < 3) return null;
  const xs = seen.map((p) => p.x);
  const ys = seen.map((p) => p.y);
  return { x0: Math.min(...xs), y0: Math.min(...ys), x1: Math.max(...xs), y1: Math.max(...ys) };
}

interface MeshPass {
  points: Float32Array;
  presence: number;
  roi: RotatedRect;
}

export class FaceMesh {
  private readonly anchors = faceAnchors();
  /** Stage timings of the most recent `detect`. */
  lastTimings: FaceMeshTimings | null = null;

  private constructor(
    private readonly detector: OrtSession,
    private readonly landmarker: OrtSession,
  ) {}

  /** Loads both models (converting them first if needed). */
  static async create(options: FaceMeshOptions = {}): Promise<FaceMesh> {
    const session = async (id: string): Promise<OrtSession> =>
      OrtSession.create(await visionModelPath(id, options.modelsDir ? { dir: options.modelsDir } : {}), {
        threads: options.threads ?? 1,
        providers: options.providers,
        name: id,
      });
    const [detector, landmarker] = await Promise.all([session('face_detection_short'), session('face_landmark')]);
    return new FaceMesh(detector, landmarker);
  }

  /**
   * The most confident face: its 468 landmarks, box, oval and skin masks; null
   * when there is no face, or its eyes or nose are outside the photo (a head
   * cropped by the top edge). `hint` is a head box in image pixels (e.g.
   * poseHeadBox of the pose landmarks); the whole photo is searched when it
   * is missing or nothing is found around it.
   */
  async detect(image: RawImage, hint?: Box): Promise<FaceMeshResult | null> {
    const t0 = performance.now();
    let found = hint ? await this.detectFaces(image, hintFrame(hint)) : [];
    if (found.length === 0) found = await this.detectFaces(image, letterboxRect(image.width, image.height));
    const face = found[0];
    const t1 = performance.now();
    if (!face) return this.done(null, t0, t1, t1, t1, false);

    const box: Box = { x0: face.box.xmin, y0: face.box.ymin, x1: face.box.xmin + face.box.width, y1: face.box.ymin + face.box.height };
    const first = await this.mesh(image, faceRoi(box, face.keypoints[DETECTION_EYES[0]]!, face.keypoints[DETECTION_EYES[1]]!));
    let best = first;
    let refined = false;
    const next = landmarksFaceRoi(pointsOf(first));
    if (first.presence < MIN_FACE_PRESENCE || poorCrop(first.roi, next)) {
      const second = await this.mesh(image, next);
      if (second.presence >= first.presence) [best, refined] = [second, true];
    }
    const t2 = performance.now();
    if (best.presence < MIN_FACE_PRESENCE) return this.done(null, t0, t1, t2, t2, refined);
    const points = pointsOf(best);
    if (!MUST_SEE.every((k) => inside(points[k]!, image))) return this.done(null, t0, t1, t2, t2, refined);

    const landmarks = points.map((p, k): Landmark => ({ ...p, z: best.points[3 * k + 2]!, visibility: 1, presence: 1 }));
    const result: FaceMeshResult = {
      landmarks,
      box: boundingBox(points, image.width, image.height),
      oval: faceOvalMask(points, image.width, image.height),
      skin: faceSkinMask(points, image.width, image.height),
      detectionScore: face.score,
      presence: best.presence,
      roi: best.roi,
    };
    return this.done(result, t0, t1, t2, performance.now(), refined);
  }

  async dispose(): Promise<void> {
    await Promise.all([this.detector.release(), this.landmarker.release()]);
  }

  private done(result: FaceMeshResult | null, t0: number, t1: number, t2: number, t3: number, refined: boolean): FaceMeshResult | null {
    this.lastTimings = { detect: t1 - t0, landmarks: t2 - t1, regions: t3 - t2, total: t3 - t0, refined };
    return result;
  }

  /** The detector on one unrotated square `frame` of the photo; detections in image pixels, best first. */
  private async detectFaces(image: RawImage, frame: RotatedRect): Promise<FaceDetection[]> {
    const size = FACE_DETECTOR_INPUT;
    const input = sampleRect(image, frame, size, size, { range: [-1, 1], border: 'zero' });
    const outputs = await this.detector.run({ [this.detector.inputNames[0]!]: { data: input, dims: [1, size, size, 3] } });
    const boxes = outputs[this.detector.outputNames[0]!]!.data;
    const scores = outputs[this.detector.outputNames[1]!]!.data;
    return weightedNms(decodeFaceDetections(boxes, scores, this.anchors)).map((d) => {
      const p0 = rectToImage(frame, d.xmin, d.ymin);
      const keypoints: Point[] = [];
      for (let k = 0; k < d.keypoints.length; k += 2) keypoints.push(rectToImage(frame, d.keypoints[k]!, d.keypoints[k + 1]!));
      return { score: d.score, box: { xmin: p0.x, ymin: p0.y, width: d.width * frame.width, height: d.height * frame.height }, keypoints };
    });
  }

  /** The landmark model on `roi`: points (x, y in image pixels, z in the same scale as x) and face presence. */
  private async mesh(image: RawImage, roi: RotatedRect): Promise<MeshPass> {
    const size = FACE_LANDMARK_INPUT;
    const input = sampleRect(image, roi, size, size, { range: [0, 1], border: 'replicate' });
    const outputs = await this.landmarker.run({ [this.landmarker.inputNames[0]!]: { data: input, dims: [1, size, size, 3] } });
    const raw = outputs[this.landmarker.outputNames[0]!]!.data;
    const flag = outputs[this.landmarker.outputNames[1]!]!.data[0]!;
    const points = new Float32Array(FACE_LANDMARKS * 3);
    for (let k = 0; k < FACE_LANDMARKS; k++) {
      const p = rectToImage(roi, raw[3 * k]! / size, raw[3 * k + 1]! / size);
      points[3 * k] = p.x;
      points[3 * k + 1] = p.y;
      points[3 * k + 2] = (raw[3 * k + 2]! / size) * roi.width;
    }
    return { points, presence: sigmoid(flag), roi };
  }
}

const sigmoid = (x: number): number => 1 / (1 + Math.exp(-x));

/** The square (unrotated) search frame around a head box. */
function hintFrame(hint: Box): RotatedRect {
  const side = Math.max(hint.x1 - hint.x0, hint.y1 - hint.y0, 1) * HINT_CONTEXT;
  return { cx: (hint.x0 + hint.x1) / 2, cy: (hint.y0 + hint.y1) / 2, width: side, height: side, rotation: 0 };
}

function pointsOf(pass: MeshPass): Point[] {
  const out: Point[] = [];
  for (let k = 0; k < FACE_LANDMARKS; k++) out.push({ x: pass.points[3 * k]!, y: pass.points[3 * k + 1]! });
  return out;
}

const inside = (p: Point, image: RawImage): boolean => p.x >= 0 && p.y >= 0 && p.x < image.width && p.y < image.height;
