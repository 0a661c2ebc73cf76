/** The size vocabulary of the v1 contract (2.1), for pickers. */

export const LETTER_SIZES = ['XXS', 'XS', 'S', 'M', 'L', 'XL', 'XXL', '3XL', '4XL'];
export const EU_SIZES = Array.from({ length: 18 }, (_, i) => String(30 + i * 2));
export const WAIST_SIZES = Array.from({ length: 11 }, (_, i) => `W${24 + i * 2}`);
export const FITS = ['slim', 'regular', 'relaxed', 'oversized'] as const;
export const STYLING = ['tucked', 'untucked', 'open', 'closed', 'sleeves-rolled'] as const;
export const CATEGORIES = ['top', 'bottom', 'dress', 'outerwear'] as const;
