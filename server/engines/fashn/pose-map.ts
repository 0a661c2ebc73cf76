/**
 * Grayscale pose maps as the model was trained on them, DWPose's
 * draw_pose(grayscale=True): the body (18 OpenPose keypoints, 17 limbs as
 * filled ellipses 4 px thick at gray levels 20…240 scaled by 0.6, then 4 px
 * joints at 1.3× their first limb's level), then each hand (20 bones as
 * 2 px lines at 160…220, joints as 4 px dots at 240), then the face (68
 * dots of 3 px at 200). Keypoints come from DWPose when its models are
 * present, otherwise from MediaPipe's landmarks mapped to OpenPose's body
 * order (body only). A flat-lay garment gets an empty map (the reference's
 * dummy keypoints draw nothing).
 */
import { POSE, type Landmark } from '../../vision/types.ts';

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

function fillEllipse(
  canvas: Uint8Array,
  width: number,
  height: number,
  cx: number,
  cy: number,
  a: number,
  b: number,
  degrees: number,
  value: number,
): void {
  const angle = (degrees * Math.PI) / 180;
  const [cos, sin] = [Math.cos(angle), Math.sin(angle)];
  const reach = Math.ceil(Math.max(a, b)) + 1;
  // cv2.ellipse2Poly rounds the outline to pixels; half a pixel of slack includes the outline as fillConvexPoly does.
  const [ra, rb] = [Math.max(a, 0) + 0.5, b + 0.5];
  for (let y = Math.max(0, cy - reach); y <= Math.min(height - 1, cy + reach); y++) {
    for (let x = Math.max(0, cx - reach); x <= Math.min(width - 1, cx + reach); x++) {
      const [dx, dy] = [x - cx, y - cy];
      const u = dx * cos + dy * sin;
      const v = -dx * sin + dy * cos;
      if ((u / ra) ** 2 + (v / rb) ** 2 <= 1) canvas[y * width + x] = value;
    }
  }
}

function fillCircle(canvas: Uint8Array, width: number, height: number, cx: number, cy: number, r: number, value: number): void {
  for (let y = Math.max(0, cy - r); y <= Math.min(height - 1, cy + r); y++) {
    for (let x = Math.max(0, cx - r); x <= Math.min(width - 1, cx + r); x++) {
      if ((x - cx) ** 2 + (y - cy) ** 2 <= r * r + r) canvas[y * width + x] = value;
    }
  }
}

/** Draws the body keypoints as DWPose's draw_bodypose_gray does, on a black width×height canvas. */
export function drawPoseGray(keypoints: readonly Keypoint[], width: number, height: number): Uint8Array {
  const limbs = new Uint8Array(width * height);
  const pixel = (k: NonNullable<Keypoint>): [number, number] => [Math.trunc(k.x * width), Math.trunc(k.y * height)];
  LIMBS.forEach(([from, to], i) => {
    const a = keypoints[from - 1];
    const b = keypoints[to - 1];
    if (!a || !b) return;
    const [xA, yA] = pixel(a);
    const [xB, yB] = pixel(b);
    const length = Math.trunc(Math.hypot(xA - xB, yA - yB));
    const degrees = Math.trunc((Math.atan2(yA - yB, xA - xB) * 180) / Math.PI);
    fillEllipse(
      limbs,
      width,
      height,
      Math.floor((xA + xB) / 2),
      Math.floor((yA + yB) / 2),
      Math.floor(length / 2),
      4,
      degrees,
      LIMB_GRAY[i]!,
    );
  });
  const canvas = new Uint8Array(width * height);
  for (let i = 0; i < canvas.length; i++) canvas[i] = Math.floor(limbs[i]! * 0.6);
  for (let k = 1; k <= 18; k++) {
    const first = LIMBS.findIndex(([from, to]) => from === k || to === k);
    const point = keypoints[k - 1];
    if (first < 0 || !point) continue;
    const [x, y] = pixel(point);
    fillCircle(canvas, width, height, x, y, 4, Math.min(255, Math.floor(LIMB_GRAY[first]! * 1.3)));
  }
  return canvas;
}

/** Marks every pixel within `radius` of the segment: cv2.line of thickness 2·radius with its round caps. */
function fillCapsule(
  canvas: Uint8Array,
  width: number,
  height: number,
  a: [number, number],
  b: [number, number],
  radius: number,
  value: number,
): void {
  const [dx, dy] = [b[0] - a[0], b[1] - a[1]];
  const length2 = dx * dx + dy * dy;
  for (let y = Math.max(0, Math.min(a[1], b[1]) - radius); y <= Math.min(height - 1, Math.max(a[1], b[1]) + radius); y++) {
    for (let x = Math.max(0, Math.min(a[0], b[0]) - radius); x <= Math.min(width - 1, Math.max(a[0], b[0]) + radius); x++) {
      const t = length2 === 0 ? 0 : Math.max(0, Math.min(1, ((x - a[0]) * dx + (y - a[1]) * dy) / length2));
      if ((x - a[0] - t * dx) ** 2 + (y - a[1] - t * dy) ** 2 <= radius * radius) canvas[y * width + x] = value;
    }
  }
}

/** DWPose skips a hand or face point whose pixel column or row is 0 (its `> eps` test on int pixels). */
function drawable(k: Keypoint, width: number, height: number): [number, number] | null {
  if (!k) return null;
  const [x, y] = [Math.trunc(k.x * width), Math.trunc(k.y * height)];
  return x > 0.01 && y > 0.01 ? [x, y] : null;
}

/** Draws the whole pose as DWPose's draw_pose(grayscale=True) does: body, then hands, then faces, on a black canvas. */
export function drawWholeBodyGray(pose: WholeBodyPose, width: number, height: number): Uint8Array {
  const canvas = drawPoseGray(pose.body, width, height);
  for (const hand of pose.hands) {
    HAND_EDGES.forEach(([from, to], i) => {
      const a = drawable(hand[from] ?? null, width, height);
      const b = drawable(hand[to] ?? null, width, height);
      if (a && b) fillCapsule(canvas, width, height, a, b, 1, HAND_GRAY[i]!);
    });
    for (const point of hand) {
      const p = drawable(point, width, height);
      if (p) fillCircle(canvas, width, height, p[0], p[1], 4, HAND_POINT_GRAY);
    }
  }
  for (const face of pose.faces) {
    for (const point of face) {
      const p = drawable(point, width, height);
      if (p) fillCircle(canvas, width, height, p[0], p[1], 3, FACE_POINT_GRAY);
    }
  }
  return canvas;
}
