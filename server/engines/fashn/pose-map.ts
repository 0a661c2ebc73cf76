/**
 * Grayscale pose maps as the model was trained on them, DWPose's
 * draw_pose(grayscale=True): the body (18 OpenPose keypoints, 17 limbs as
 * filled ellipses 4 px thick at gray levels 20…240 scaled by 0.6, then 4 px
 * joints at 1.3× their first limb's level), then each hand (20 bones as
 * 2 px lines at 160…220, joints as 4 px dots at 240), then the face (68
 * dots of 3 px at 200). Keypoints come from DWPose when its models are
 * present, otherwise from MediaPipe's landmarks mapped to OpenPose's body
 * order (body only). A flat-lay garment gets an empty map (the reference's
 * dummy keypoints draw nothing). Shapes follow OpenCV's drawing rules
 * (raster.ts), so the maps are byte-identical to the reference's.
 */
import { POSE, type Landmark } from '../../vision/types.ts';
import { ellipsePoly, fillCircle, fillConvexPoly, thickLine, type Canvas } from './raster.ts';

/** A keypoint in 0..1 image coordinates, or null when not visible. */
export type Keypoint = { x: number; y: number } | null;

/** OpenPose body order (1-based pairs), as in DWPose's drawing code. */
const LIMBS: readonly [number, number][] = [
  [2, 3], [2, 6], [3, 4], [4, 5], [6, 7], [7, 8], [2, 9], [9, 10],
  [10, 11], [2, 12], [12, 13], [13, 14], [2, 1], [1, 15], [15, 17],
  [1, 16], [16, 18],
]; // prettier-ignore

/** What a pose map shows: OpenPose's 18 body points, and hands (21 points each) and faces (68 points) when known. */
export interface WholeBodyPose {
  body: readonly Keypoint[];
  hands: readonly (readonly Keypoint[])[];
  faces: readonly (readonly Keypoint[])[];
}

/** A hand's bones, wrist = 0, as DWPose draws them. */
const HAND_EDGES: readonly [number, number][] = [
  [0, 1], [1, 2], [2, 3], [3, 4], [0, 5], [5, 6], [6, 7], [7, 8], [0, 9], [9, 10],
  [10, 11], [11, 12], [0, 13], [13, 14], [14, 15], [15, 16], [0, 17], [17, 18], [18, 19], [19, 20],
]; // prettier-ignore

/** np.linspace(160, 220, 20).astype(uint8) */
export const HAND_GRAY: readonly number[] = Array.from({ length: 20 }, (_, i) => Math.floor(160 + (60 * i) / 19));
export const HAND_POINT_GRAY = 240;
export const FACE_POINT_GRAY = 200;

/** np.linspace(20, 240, 18).astype(uint8) */
export const LIMB_GRAY: readonly number[] = Array.from({ length: 18 }, (_, i) => Math.floor(20 + (220 * i) / 17));

/** DWPose's sizes in pixels: limbs are ellipses 2×4 px across, joints and hand points circles of radius 4, face points 3. */
const STICK_WIDTH = 4;
const JOINT_RADIUS = 4;
const FACE_RADIUS = 3;
const HAND_LINE_THICKNESS = 2;

/** DWPose's visibility threshold for a keypoint. */
export const VISIBLE = 0.3;

/**
 * MediaPipe's 33 landmarks (pixels) → OpenPose's 18 body keypoints (0..1):
 * nose, neck (shoulders' midpoint), right arm, left arm, right leg, left leg,
 * right eye, left eye, right ear, left ear. Left and right are the person's.
 */
export function openPoseKeypoints(landmarks: readonly Landmark[], width: number, height: number): Keypoint[] {
  const at = (index: number): Keypoint => {
    const l = landmarks[index];
    if (!l || l.visibility < VISIBLE || l.presence < VISIBLE) return null;
    return { x: l.x / width, y: l.y / height };
  };
  const ls = at(POSE.leftShoulder);
  const rs = at(POSE.rightShoulder);
  const neck = ls && rs ? { x: (ls.x + rs.x) / 2, y: (ls.y + rs.y) / 2 } : null;
  return [
    at(POSE.nose),
    neck,
    rs,
    at(POSE.rightElbow),
    at(POSE.rightWrist),
    ls,
    at(POSE.leftElbow),
    at(POSE.leftWrist),
    at(POSE.rightHip),
    at(POSE.rightKnee),
    at(POSE.rightAnkle),
    at(POSE.leftHip),
    at(POSE.leftKnee),
    at(POSE.leftAnkle),
    at(POSE.rightEye),
    at(POSE.leftEye),
    at(POSE.rightEar),
    at(POSE.leftEar),
  ];
}

/** Draws the body keypoints as DWPose's draw_bodypose_gray does, on a black width×height canvas. */
export function drawPoseGray(keypoints: readonly Keypoint[], width: number, height: number): Uint8Array {
  const limbs: Canvas = { data: new Uint8Array(width * height), width, height };
  const pixel = (k: NonNullable<Keypoint>): [number, number] => [Math.trunc(k.x * width), Math.trunc(k.y * height)];
  LIMBS.forEach(([from, to], i) => {
    const a = keypoints[from - 1];
    const b = keypoints[to - 1];
    if (!a || !b) return;
    const [xA, yA] = pixel(a);
    const [xB, yB] = pixel(b);
    // Math.sqrt, not Math.hypot: exact on perfect squares, where int() of a value one ulp low would lose a pixel.
    const length = Math.trunc(Math.sqrt((xA - xB) ** 2 + (yA - yB) ** 2));
    // Python's math.degrees multiplies by a rounded 180/π; dividing by π instead can land on the other side of a whole degree.
    const degrees = Math.trunc(Math.atan2(yA - yB, xA - xB) * (180 / Math.PI));
    const outline = ellipsePoly(Math.floor((xA + xB) / 2), Math.floor((yA + yB) / 2), Math.floor(length / 2), STICK_WIDTH, degrees);
    fillConvexPoly(limbs, outline.xs, outline.ys, 0, LIMB_GRAY[i]!);
  });
  const canvas: Canvas = { data: new Uint8Array(width * height), width, height };
  for (let i = 0; i < canvas.data.length; i++) canvas.data[i] = Math.floor(limbs.data[i]! * 0.6);
  for (let k = 1; k <= 18; k++) {
    const first = LIMBS.findIndex(([from, to]) => from === k || to === k);
    const point = keypoints[k - 1];
    if (first < 0 || !point) continue;
    const [x, y] = pixel(point);
    fillCircle(canvas, x, y, JOINT_RADIUS, Math.min(255, Math.floor(LIMB_GRAY[first]! * 1.3)));
  }
  return canvas.data;
}

/** DWPose skips a hand or face point whose pixel column or row is 0 (its `> eps` test on int pixels). */
function drawable(k: Keypoint, width: number, height: number): [number, number] | null {
  if (!k) return null;
  const [x, y] = [Math.trunc(k.x * width), Math.trunc(k.y * height)];
  return x > 0.01 && y > 0.01 ? [x, y] : null;
}

/** Draws the whole pose as DWPose's draw_pose(grayscale=True) does: body, then hands, then faces, on a black canvas. */
export function drawWholeBodyGray(pose: WholeBodyPose, width: number, height: number): Uint8Array {
  const canvas: Canvas = { data: drawPoseGray(pose.body, width, height), width, height };
  for (const hand of pose.hands) {
    HAND_EDGES.forEach(([from, to], i) => {
      const a = drawable(hand[from] ?? null, width, height);
      const b = drawable(hand[to] ?? null, width, height);
      if (a && b) thickLine(canvas, a[0], a[1], b[0], b[1], HAND_LINE_THICKNESS, HAND_GRAY[i]!);
    });
    for (const point of hand) {
      const p = drawable(point, width, height);
      if (p) fillCircle(canvas, p[0], p[1], JOINT_RADIUS, HAND_POINT_GRAY);
    }
  }
  for (const face of pose.faces) {
    for (const point of face) {
      const p = drawable(point, width, height);
      if (p) fillCircle(canvas, p[0], p[1], FACE_RADIUS, FACE_POINT_GRAY);
    }
  }
  return canvas.data;
}
