/**
 * Validation of a try-on submission's fields (contract 2.1), all problems at
 * once. Images are only checked for presence and count here; their bytes are
 * checked by the images module.
 */
import { ApiError, type FieldError } from '../kernel/errors.ts';
import type { GarmentCategory, ImageFormat } from '../engines/types.ts';
import type { Fit, GenerationParams } from '../store/schema.ts';

const LETTER_SIZES = ['XXS', 'XS', 'S', 'M', 'L', 'XL', 'XXL', '3XL', '4XL'];
const FITS: Fit[] = ['slim', 'regular', 'relaxed', 'oversized'];
const OCCASIONS = ['casual', 'business', 'formal', 'party', 'sport', 'outdoor'];
const STYLING = ['tucked', 'untucked', 'open', 'closed', 'sleeves-rolled'];
const CATEGORIES: GarmentCategory[] = ['auto', 'top', 'bottom', 'dress', 'outerwear'];
const FORMATS: ImageFormat[] = ['jpeg', 'png', 'webp'];
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

/** The canonical form of a size (`m` → `M`, `2XL` → `XXL`, `w32` → `W32`), or null if it is not one. */
export function normalizeSize(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const upper = value.trim().toUpperCase();
  const letter = upper === '2XL' ? 'XXL' : upper;
  if (LETTER_SIZES.includes(letter)) return letter;
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

/** The body of POST /api/v1/try-on as a client writes it (contract 2.1). */
export interface TryOnRequest {
  /** base64 or a data:image/...;base64, URL */
  selfie: string;
  items: string[];
  size: string;
  personSize?: string;
  fit?: Fit;
  occasion?: 'casual' | 'business' | 'formal' | 'party' | 'sport' | 'outdoor';
  styling?: Array<'tucked' | 'untucked' | 'open' | 'closed' | 'sleeves-rolled'>;
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

function oneOf<T extends string>(value: unknown, allowed: readonly T[]): value is T {
  return typeof value === 'string' && (allowed as readonly string[]).includes(value);
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
  if (size === null) fail('size', 'must be a letter size (XXS–4XL), an even EU size 30–64, or a waist W24–W44');
  let personSize = size;
  if (input.personSize !== undefined) {
    personSize = normalizeSize(input.personSize);
    if (personSize === null) fail('personSize', 'must be a size in the same vocabulary as size');
  }
  if (input.fit !== undefined && !oneOf(input.fit, FITS)) fail('fit', `must be one of ${FITS.join(', ')}`);
  if (input.occasion !== undefined && !oneOf(input.occasion, OCCASIONS)) fail('occasion', `must be one of ${OCCASIONS.join(', ')}`);
  if (input.styling !== undefined) {
    if (!Array.isArray(input.styling)) fail('styling', 'must be an array');
    else input.styling.forEach((s, i) => !oneOf(s, STYLING) && fail(`styling[${i}]`, `must be one of ${STYLING.join(', ')}`));
  }
  let categories: GarmentCategory[] = Array.isArray(items) ? items.map(() => 'auto') : [];
  if (input.categories !== undefined) {
    if (!Array.isArray(input.categories)) fail('categories', 'must be an array');
    else {
      if (Array.isArray(items) && input.categories.length !== items.length) fail('categories', 'must have one entry per item');
      input.categories.forEach((c, i) => !oneOf(c, CATEGORIES) && fail(`categories[${i}]`, `must be one of ${CATEGORIES.join(', ')}`));
      categories = input.categories as GarmentCategory[];
    }
  }
  if (input.engine !== undefined && (typeof input.engine !== 'string' || !/^[a-z0-9][a-z0-9._-]{0,63}$/.test(input.engine)))
    fail('engine', 'must be an engine id');
  if (input.seed !== undefined && (!Number.isSafeInteger(input.seed) || (input.seed as number) < 0))
    fail('seed', 'must be a non-negative integer');
  if (input.outputFormat !== undefined && !oneOf(input.outputFormat, FORMATS)) fail('outputFormat', `must be one of ${FORMATS.join(', ')}`);
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

/** Why a webhook URL is refused by its syntax alone, or null. Addresses are vetted again at connect time. */
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
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (
    /^169\.254\./.test(host) ||
    host === 'fd00:ec2::254' ||
    host === '0.0.0.0' ||
    host === '::' ||
    /^(22[4-9]|23\d)\./.test(host) ||
    (host.includes(':') && host.startsWith('ff'))
  ) {
    return 'points at an address that is never allowed (link-local, metadata, multicast or unspecified)';
  }
  return null;
}
