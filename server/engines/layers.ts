/**
 * The order garments are worn in, which every engine draws or generates them in: what is worn underneath first.
 * A garment whose kind is not known yet (`auto`) is taken for a top.
 */
import type { GarmentCategory } from '../kernel/vocabulary.ts';

const WORN: Readonly<Record<GarmentCategory, number>> = { bottom: 0, dress: 1, auto: 2, top: 2, outerwear: 3 };

/** A garment's place in the order it is worn (lower goes on first); a tucked top goes on before the bottoms. */
export function layerOf(category: GarmentCategory, options: { tucked?: boolean } = {}): number {
  if (options.tucked && category === 'top') return -1;
  return WORN[category];
}
