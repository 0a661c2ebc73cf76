/**
 * What the vision layer tells an engine about a person photo: where the body
 * is (33 MediaPipe landmarks in image pixels), a person matte the size of the
 * photo, and a rough body layout (which part of the body each pixel shows).
 * Engines depend on these types only; server/vision/person.ts produces them.
 */

/** An 8-bit RGB or RGBA image in memory, rows top to bottom. */
export interface RawImage {
  data: Uint8Array;
  width: number;
  height: number;
  channels: 3 | 4;
}

/** A single-channel 8-bit map the size of its image (0 = none, 255 = full). */
export interface Mask {
  data: Uint8Array;
  width: number;
  height: number;
}

/**
 * One body landmark in image pixels. `z` is depth relative to the hips, in
 * the same scale as x. `visibility` and `presence` are probabilities (0..1):
 * presence that the point is in the frame, visibility that it is not hidden.
 */
export interface Landmark {
  x: number;
  y: number;
  z: number;
  visibility: number;
  presence: number;
}

/** MediaPipe's 33 pose landmarks, by index. Left and right are the person's own. */
export const POSE = {
  nose: 0,
  leftEyeInner: 1,
  leftEye: 2,
  leftEyeOuter: 3,
  rightEyeInner: 4,
  rightEye: 5,
  rightEyeOuter: 6,
  leftEar: 7,
  rightEar: 8,
  mouthLeft: 9,
  mouthRight: 10,
  leftShoulder: 11,
  rightShoulder: 12,
  leftElbow: 13,
  rightElbow: 14,
  leftWrist: 15,
  rightWrist: 16,
  leftPinky: 17,
  rightPinky: 18,
  leftIndex: 19,
  rightIndex: 20,
  leftThumb: 21,
  rightThumb: 22,
  leftHip: 23,
  rightHip: 24,
  leftKnee: 25,
  rightKnee: 26,
  leftAnkle: 27,
  rightAnkle: 28,
  leftHeel: 29,
  rightHeel: 30,
  leftFootIndex: 31,
  rightFootIndex: 32,
} as const;

/** Body layout labels (a rough human parsing). Left and right are the person's own. */
export const REGION = {
  background: 0,
  head: 1, // face and hair
  neck: 2,
  torso: 3,
  leftUpperArm: 4,
  leftLowerArm: 5,
  rightUpperArm: 6,
  rightLowerArm: 7,
  leftHand: 8,
  rightHand: 9,
  hips: 10,
  leftUpperLeg: 11,
  leftLowerLeg: 12,
  rightUpperLeg: 13,
  rightLowerLeg: 14,
  leftFoot: 15,
  rightFoot: 16,
} as const;

export type RegionName = keyof typeof REGION;

/** A label per pixel (values of REGION), the size of the photo. */
export interface BodyLayout {
  labels: Uint8Array;
  width: number;
  height: number;
}

/** A rotated rectangle in image pixels (centre, size, rotation in radians, clockwise). */
export interface RotatedRect {
  cx: number;
  cy: number;
  width: number;
  height: number;
  rotation: number;
}

/** Everything the vision layer found about the one person in a photo. */
export interface PersonAnalysis {
  width: number;
  height: number;
  /** 33 landmarks in image pixels (see POSE). */
  landmarks: Landmark[];
  /** The detector's confidence for the person (0..1). */
  score: number;
  /** The region the landmark model looked at. */
  roi: RotatedRect;
  /** Person alpha matte, the size of the photo. */
  matte: Mask;
  layout: BodyLayout;
}

/** Why a photo could not be analysed; codes match the engine failure codes. */
export type VisionErrorCode = 'no_person_detected' | 'multiple_people' | 'pose_unsupported';

export class VisionError extends Error {
  readonly code: VisionErrorCode;
  constructor(code: VisionErrorCode, message: string) {
    super(message);
    this.name = 'VisionError';
    this.code = code;
  }
}

/** Splits a body layout into parts; a learned parser can replace the landmark-and-colour one. */
export interface BodyParser {
  parse(image: RawImage, landmarks: readonly Landmark[], matte: Mask): BodyLayout;
}
