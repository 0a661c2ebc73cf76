/**
 * Validation of a try-on submission's fields (contract 2.1), all problems at
 * once. Images are only checked for presence and count here; their bytes are
 * checked by the images module.
 */
import { ApiError, type FieldError } from '../kernel/errors.ts';
import type { GenerationParams } from '../store/schema.ts';
import {
  FITS,
  GARMENT_CATEGORIES,
  GARMENT_KINDS,
  IMAGE_FORMATS,
  OCCASIONS,
  SIZE_RULE,
  STYLINGS,
  isOneOf as oneOf,
  normalizeSize,
  type Fit,
  type GarmentCategory,
  type ImageFormat,
  type Occasion,
  type Styling,
} from '../kernel/vocabulary.ts';

const KNOWN_FIELDS = new Set([
  'selfie',
  'items',
  'size',
  'personSize',
  'fit',
  'occasion',
  'styling',
  'categories',
  'engine',
  'seed',
  'outputFormat',
  'webhookUrl',
]);

/** The body of POST /api/v1/try-on as a client writes it (contract 2.1). */
export interface TryOnRequest {
  /** base64 or a data:image/...;base64, URL */
  selfie: string;
  items: string[];
  size: string;
  personSize?: string;
  fit?: Fit;
  occasion?: Occasion;
  styling?: Styling[];
  categories?: GarmentCategory[];
  engine?: string;
  seed?: number;
  outputFormat?: ImageFormat;
  webhookUrl?: string;
}

/** A submission whose fields are valid; images are still undecoded strings. */
export interface CheckedSubmission {
  selfie: string;
  items: string[];
  engine?: string;
  params: GenerationParams;
}

/** Checks every field of a submission; a 422 lists all that are wrong. */
export function checkSubmission(body: unknown): CheckedSubmission {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new ApiError('validation_failed', 'The body must be a JSON object.', {
      errors: [{ field: '', message: 'must be a JSON object' }],
    });
  }
  const input = body as Record<string, unknown>;
  const errors: FieldError[] = [];
  const fail = (field: string, message: string) => errors.push({ field, message });

  for (const field of Object.keys(input)) if (!KNOWN_FIELDS.has(field)) fail(field, 'is not a known field');
  // An empty string is left to the image decoder, which answers invalid_image like any other unreadable image.
  if (typeof input.selfie !== 'string') fail('selfie', 'a base64 image or data URL is required');
  const items = input.items;
  if (!Array.isArray(items) || items.length < 1 || items.length > 4) fail('items', 'an array of 1 to 4 images is required');
  else items.forEach((item, i) => typeof item !== 'string' && fail(`items[${i}]`, 'must be a base64 image or data URL'));

  const size = normalizeSize(input.size);
  if (size === null) fail('size', `must be ${SIZE_RULE}`);
  let personSize = size;
  if (input.personSize !== undefined) {
    personSize = normalizeSize(input.personSize);
    if (personSize === null) fail('personSize', 'must be a size in the same vocabulary as size');
  }
  if (input.fit !== undefined && !oneOf(input.fit, FITS)) fail('fit', `must be one of ${FITS.join(', ')}`);
  if (input.occasion !== undefined && !oneOf(input.occasion, OCCASIONS)) fail('occasion', `must be one of ${OCCASIONS.join(', ')}`);
  if (input.styling !== undefined) {
    if (!Array.isArray(input.styling)) fail('styling', 'must be an array');
    else {
      input.styling.forEach((s, i) => !oneOf(s, STYLINGS) && fail(`styling[${i}]`, `must be one of ${STYLINGS.join(', ')}`));
      const problem = stylingProblem(input.styling);
      if (problem) fail('styling', problem);
    }
  }
  let categories: GarmentCategory[] = Array.isArray(items) ? items.map(() => 'auto') : [];
  if (input.categories !== undefined) {
    if (!Array.isArray(input.categories)) fail('categories', 'must be an array');
    else {
      if (Array.isArray(items) && input.categories.length !== items.length) fail('categories', 'must have one entry per item');
      input.categories.forEach(
        (c, i) => !oneOf(c, GARMENT_CATEGORIES) && fail(`categories[${i}]`, `must be one of ${GARMENT_CATEGORIES.join(', ')}`),
      );
      categories = input.categories as GarmentCategory[];
      const problem = outfitProblem(categories);
      if (problem) fail('categories', problem);
    }
  }
  if (input.engine !== undefined && (typeof input.engine !== 'string' || !/^[a-z0-9][a-z0-9._-]{0,63}$/.test(input.engine)))
    fail('engine', 'must be an engine id');
  if (input.seed !== undefined && (!Number.isSafeInteger(input.seed) || (input.seed as number) < 0))
    fail('seed', 'must be a non-negative integer');
  if (input.outputFormat !== undefined && !oneOf(input.outputFormat, IMAGE_FORMATS))
    fail('outputFormat', `must be one of ${IMAGE_FORMATS.join(', ')}`);
  if (input.webhookUrl !== undefined) {
    const problem = webhookUrlProblem(input.webhookUrl);
    if (problem) fail('webhookUrl', problem);
  }
  if (errors.length > 0) {
    throw new ApiError(
      'validation_failed',
      errors.length === 1 ? `${errors[0]!.field}: ${errors[0]!.message}` : `${errors.length} fields are invalid.`,
      { errors },
    );
  }

  const params: GenerationParams = {
    size: size!,
    personSize: personSize!,
    fit: (input.fit as Fit | undefined) ?? 'regular',
    styling: [...new Set((input.styling as string[] | undefined) ?? [])],
    categories,
    outputFormat: (input.outputFormat as ImageFormat | undefined) ?? 'jpeg',
  };
  if (input.occasion !== undefined) params.occasion = input.occasion as string;
  if (input.seed !== undefined) params.seed = input.seed as number;
  if (input.webhookUrl !== undefined) params.webhookUrl = input.webhookUrl as string;
  const checked: CheckedSubmission = { selfie: input.selfie as string, items: items as string[], params };
  if (input.engine !== undefined) checked.engine = input.engine as string;
  return checked;
}

/** Styling that contradicts itself: a garment is tucked or untucked, open or closed, not both. */
function stylingProblem(styling: unknown[]): string | null {
  for (const [a, b] of [
    ['tucked', 'untucked'],
    ['open', 'closed'],
  ] as const) {
    if (styling.includes(a) && styling.includes(b)) return `cannot be both ${a} and ${b}`;
  }
  return null;
}

/**
 * An outfit no one can wear, refused before any credit is reserved: one garment of each kind at most (a top,
 * a bottom, a dress, outerwear), and a dress with neither a top nor a bottom. `auto` items are decided by the
 * engine and checked there.
 */
function outfitProblem(categories: readonly GarmentCategory[]): string | null {
  const count = (kind: GarmentCategory) => categories.filter((category) => category === kind).length;
  for (const kind of GARMENT_KINDS) if (count(kind) > 1) return `an outfit has at most one ${kind}; ${count(kind)} were given`;
  if (count('dress') > 0 && count('top') + count('bottom') > 0) return 'a dress is worn without a separate top or bottom';
  return null;
}

/** Why a webhook URL is refused by its syntax alone, or null. Its addresses are vetted by the submit (and at delivery). */
function webhookUrlProblem(value: unknown): string | null {
  if (typeof value !== 'string' || value.length === 0 || value.length > 2048) return 'must be an http(s) URL of at most 2048 characters';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'is not a valid URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must use http or https';
  if (url.username || url.password) return 'must not contain credentials';
  return null;
}
