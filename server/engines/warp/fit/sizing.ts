/**
 * How big the garment is on this body: from the garment's `size` against
 * the size the customer usually wears (`personSize`), the `fit`, and the
 * styling. The proportions are deliberate and documented (README, "The fast
 * engine"): one size step makes a garment 6 % wider and 3 % longer (sleeves
 * 3 % longer); fits are slim 0.94, regular 1, relaxed 1.08, oversized 1.18
 * times the width (oversized also 6 % longer, with dropped shoulders).
 */
import { sizeStep, type Fit } from '../../../kernel/vocabulary.ts';

/** Width and length changes per size step, and per fit. */
export const PER_SIZE_STEP = { width: 0.06, length: 0.03, sleeve: 0.03 } as const;
export const FIT: Record<Fit, { width: number; length: number }> = {
  slim: { width: 0.94, length: 0.99 },
  regular: { width: 1, length: 1 },
  relaxed: { width: 1.08, length: 1.02 },
  oversized: { width: 1.18, length: 1.06 },
} as const;
/** A size step is at most this many steps either way (a 4XL on an XXS is not a garment, it is a tent). */
const MAX_STEPS = 4;

export interface GarmentScale {
  /** How many sizes bigger than the customer's usual size the garment is (negative: smaller). */
  steps: number;
  /** Multiplies the garment's ease around the body (1 = a regular fit, true to size). */
  width: number;
  /** Multiplies the garment's length. */
  length: number;
  /** Multiplies the sleeves' length. */
  sleeve: number;
  /** Oversized garments drop the shoulder seam down the arm. */
  droppedShoulder: boolean;
}

export function garmentScale(size: string, personSize: string, fit: Fit): GarmentScale {
  const steps = Math.max(-MAX_STEPS, Math.min(MAX_STEPS, stepOf(size) - stepOf(personSize)));
  return {
    steps,
    width: FIT[fit].width * (1 + PER_SIZE_STEP.width * steps),
    length: FIT[fit].length * (1 + PER_SIZE_STEP.length * steps),
    sleeve: 1 + PER_SIZE_STEP.sleeve * steps,
    droppedShoulder: fit === 'oversized',
  };
}

/** A size's step on the ladder; the API has refused anything else before a try-on reaches an engine. */
function stepOf(size: string): number {
  const step = sizeStep(size);
  if (step === null) throw new Error(`unknown size ${size}`);
  return step;
}
