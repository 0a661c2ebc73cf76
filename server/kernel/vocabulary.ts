/**
 * The try-on vocabulary of the v1 contract (2.1), defined once: the lists,
 * their types and the size ladder. Validation, the OpenAPI document, the
 * state schema, the engines, the catalogue and the GUI all take them from
 * here; adding a fit touches this file and the engine that honours it.
 * It imports nothing, so the GUI bundles it as it is.
 */

export const IMAGE_FORMATS = ['jpeg', 'png', 'webp'] as const;
export type ImageFormat = (typeof IMAGE_FORMATS)[number];

/** What a garment is; `auto` asks the engine to tell from the photo. */
export const GARMENT_CATEGORIES = ['auto', 'top', 'bottom', 'dress', 'outerwear'] as const;
export type GarmentCategory = (typeof GARMENT_CATEGORIES)[number];
/** The categories a garment can be (what `auto` resolves to; what a catalogue garment is filed as). */
export const GARMENT_KINDS = ['top', 'bottom', 'dress', 'outerwear'] as const satisfies readonly GarmentCategory[];
export type GarmentKind = (typeof GARMENT_KINDS)[number];

export const FITS = ['slim', 'regular', 'relaxed', 'oversized'] as const;
export type Fit = (typeof FITS)[number];

export const OCCASIONS = ['casual', 'business', 'formal', 'party', 'sport', 'outdoor'] as const;
export type Occasion = (typeof OCCASIONS)[number];

export const STYLINGS = ['tucked', 'untucked', 'open', 'closed', 'sleeves-rolled'] as const;
export type Styling = (typeof STYLINGS)[number];

/** Letter sizes in order: the size ladder. EU and waist sizes are placed on it (see sizeStep). */
export const LETTER_SIZES = ['XXS', 'XS', 'S', 'M', 'L', 'XL', 'XXL', '3XL', '4XL'] as const;
/** Even EU sizes 30–64. */
export const EU_SIZES: readonly string[] = Array.from({ length: 18 }, (_, i) => String(30 + i * 2));
/** Waist sizes W24–W44, every 2 inches as pickers show them (odd waists are accepted too). */
export const WAIST_SIZES: readonly string[] = Array.from({ length: 11 }, (_, i) => `W${24 + i * 2}`);
/** The words a client is told when a size is not one. */
export const SIZE_RULE = 'a letter size (XXS–4XL), an even EU size 30–64, or a waist W24–W44';

/** The canonical form of a size (`m` → `M`, `2XL` → `XXL`, `w32` → `W32`), or null if it is not one. */
export function normalizeSize(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const upper = value.trim().toUpperCase();
  const letter = upper === '2XL' ? 'XXL' : upper;
  if ((LETTER_SIZES as readonly string[]).includes(letter)) return letter;
  if (/^\d{2}$/.test(upper)) {
    const n = Number(upper);
    return n >= 30 && n <= 64 && n % 2 === 0 ? upper : null;
  }
  const waist = /^W(\d{2})$/.exec(upper);
  if (waist) {
    const n = Number(waist[1]);
    return n >= 24 && n <= 44 ? `W${n}` : null;
  }
  return null;
}

/**
 * A size's place on the letter ladder (XXS = 0 … 4XL = 8): EU sizes count one step per 2 (38 = M), waist sizes
 * one step per 2 inches (W32 = M). Null when `size` is not a size (see normalizeSize).
 */
export function sizeStep(size: string): number | null {
  const canonical = normalizeSize(size);
  if (canonical === null) return null;
  const letter = (LETTER_SIZES as readonly string[]).indexOf(canonical);
  if (letter >= 0) return letter;
  if (canonical.startsWith('W')) return (Number(canonical.slice(1)) - 26) / 2;
  return (Number(canonical) - 32) / 2;
}

/** Why a try-on failed (contract 2.3): what an engine may report; anything else it throws is `engine_failed`. */
export const GENERATION_ERROR_CODES = [
  'no_person_detected',
  'multiple_people',
  'pose_unsupported',
  'garment_not_detected',
  'engine_unavailable',
  'engine_failed',
  'timeout',
] as const;
export type GenerationErrorCode = (typeof GENERATION_ERROR_CODES)[number];

/** Whether a value is one of a vocabulary list's words (and, to TypeScript, that word's type). */
export function isOneOf<T extends string>(value: unknown, allowed: readonly T[]): value is T {
  return typeof value === 'string' && (allowed as readonly string[]).includes(value);
}
