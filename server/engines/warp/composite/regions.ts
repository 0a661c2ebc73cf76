/** Body regions that the compositing steps treat alike. */
import { REGION } from '../../../vision/types.ts';

/** The head (face and hair) and the hands: no step draws over them or repaints them (a hand's bare skin, compose.ts). */
export const HEAD_AND_HANDS: ReadonlySet<number> = new Set<number>([REGION.head, REGION.leftHand, REGION.rightHand]);

/** The arms, upper and lower, without the hands. */
export const ARMS: ReadonlySet<number> = new Set<number>([
  REGION.leftUpperArm,
  REGION.leftLowerArm,
  REGION.rightUpperArm,
  REGION.rightLowerArm,
]);
