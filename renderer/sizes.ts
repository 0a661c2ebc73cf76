/**
 * The try-on vocabulary for the pickers: the contract's own lists (2.1), from the one module that defines them
 * (it imports nothing, so it is bundled with the GUI as it is).
 */
export {
  EU_SIZES,
  FITS,
  GARMENT_CATEGORIES as CATEGORIES,
  LETTER_SIZES,
  STYLINGS as STYLING,
  WAIST_SIZES,
  sizeStep,
} from '../server/kernel/vocabulary.ts';
