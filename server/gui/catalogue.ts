/**
 * The shop's garment catalogue, kept for the GUI: records in the account store (AccountStore's garments), photos
 * in the catalogue's photo store (state/catalogue-photos.ts), normalized like any input.
 */
import { createHash } from 'node:crypto';
import { validationError, type FieldError } from '../kernel/errors.ts';
import { GARMENT_CATEGORIES, isOneOf, normalizeSize } from '../kernel/vocabulary.ts';
import { prepareImage, type ImageLimits } from '../images/index.ts';
import { newId } from '../kernel/ids.ts';
import { garmentNotFound, type AccountStore } from '../state/accounts.ts';
import type { CataloguePhotoStore } from '../state/catalogue-photos.ts';
import { photosOf, type CatalogueGarment, type StoredImage } from '../store/schema.ts';
import type { GarmentView } from './contract.ts';

const NAME_MAX = 100;
const CODE_MAX = 64;
const CONTROL = /[\u0000-\u001f\u007f]/;

/** At most this many photos per garment. */
export const MAX_PHOTOS = 6;

/** A short name for one stored photo (its file's), which changes whenever the photo does. */
function versionOf(photo: StoredImage): string {
  return createHash('sha256').update(photo.file).digest('base64url').slice(0, 10);
}

/** The view of a garment. */
export function garmentView(garment: CatalogueGarment): GarmentView {
  return {
    id: garment.id,
    name: garment.name,
    category: garment.category,
    sizes: garment.sizes,
    sku: garment.sku ?? null,
    barcode: garment.barcode ?? null,
    // Each address names the photo's file too: a replaced or swapped photo is a new address, never a cached old one.
    imageUrl: `/gui/api/garments/${garment.id}/image?v=${versionOf(garment.image)}`,
    photoUrls: photosOf(garment).map((photo, n) => `/gui/api/garments/${garment.id}/photos/${n}/image?v=${versionOf(photo)}`),
    createdAt: garment.createdAt,
  };
}

type Prepared = Awaited<ReturnType<typeof prepareImage>>;

/** A garment's checked fields: those given (all of them for a new garment). */
export interface CheckedGarment {
  name?: string;
  category?: CatalogueGarment['category'];
  sizes?: string[];
  mainPhoto?: number;
  /** null: clear it. */
  sku?: string | null;
  barcode?: string | null;
  image?: Prepared;
}

/** A new garment's checked fields. */
export interface NewGarment {
  name: string;
  category: CatalogueGarment['category'];
  sizes: string[];
  sku: string | null;
  barcode: string | null;
  image: Prepared;
}

/** Checks a new garment's fields (all problems at once) and prepares its photo; 422 otherwise. */
export async function checkGarment(body: unknown, limits: ImageLimits): Promise<NewGarment> {
  const fields = (body ?? {}) as Record<string, unknown>;
  const missing: FieldError[] = [];
  for (const field of ['name', 'category', 'sizes'] as const)
    if (fields[field] === undefined) missing.push({ field, message: 'is required' });
  if (fields.image === undefined) missing.push({ field: 'image', message: 'a photo of the garment is required' });
  // checkFields throws on any problem, the missing fields included: what it returns has them all.
  const checked = await checkFields(fields, limits, missing);
  return {
    name: checked.name!,
    category: checked.category!,
    sizes: checked.sizes!,
    sku: checked.sku ?? null,
    barcode: checked.barcode ?? null,
    image: checked.image!,
  };
}

/** Checks one more photo of a garment (`{ image }`) and prepares it; 422 or 415 otherwise. */
export async function checkGarmentPhoto(body: unknown, limits: ImageLimits): Promise<Prepared> {
  const image = ((body ?? {}) as Record<string, unknown>).image;
  if (image === undefined) throw validationError([{ field: 'image', message: 'a photo of the garment is required' }]);
  return prepareImage(image, 'image', limits);
}

/** Checks the fields of an edit (at least one, none unknown; all problems at once); 422 otherwise. */
export async function checkGarmentChanges(body: unknown, limits: ImageLimits): Promise<CheckedGarment> {
  const fields = (body ?? {}) as Record<string, unknown>;
  const errors: FieldError[] = [];
  for (const name of Object.keys(fields)) if (!isOneOf(name, FIELDS)) errors.push({ field: name, message: 'cannot be changed' });
  if (Object.keys(fields).length === 0) errors.push({ field: FIELDS.join(', '), message: 'give at least one field to change' });
  return checkFields(fields, limits, errors);
}

const FIELDS = ['name', 'category', 'sizes', 'sku', 'barcode', 'image', 'mainPhoto'] as const;

async function checkFields(fields: Record<string, unknown>, limits: ImageLimits, errors: FieldError[]): Promise<CheckedGarment> {
  const out: CheckedGarment = {};
  if (fields.name !== undefined) {
    const name = typeof fields.name === 'string' ? fields.name.trim() : '';
    if (name === '' || name.length > NAME_MAX || CONTROL.test(name))
      errors.push({ field: 'name', message: `a name of 1 to ${NAME_MAX} printable characters is required` });
    else out.name = name;
  }
  if (fields.category !== undefined) {
    if (isOneOf(fields.category, GARMENT_CATEGORIES)) out.category = fields.category;
    else errors.push({ field: 'category', message: `must be one of ${GARMENT_CATEGORIES.join(', ')}` });
  }
  if (fields.sizes !== undefined) {
    if (!Array.isArray(fields.sizes) || fields.sizes.length > 30)
      errors.push({ field: 'sizes', message: 'must be a list of at most 30 sizes' });
    else {
      const sizes: string[] = [];
      for (const [i, value] of fields.sizes.entries()) {
        const size = normalizeSize(value);
        if (size === null) errors.push({ field: `sizes[${i}]`, message: 'is not a known size' });
        else if (!sizes.includes(size)) sizes.push(size);
      }
      out.sizes = sizes;
    }
  }
  for (const field of ['sku', 'barcode'] as const) {
    const value = fields[field];
    if (value === undefined) continue;
    const code = typeof value === 'string' ? value.trim() : null;
    if (code === null || code.length > CODE_MAX || CONTROL.test(code))
      errors.push({ field, message: `must be up to ${CODE_MAX} printable characters ("" removes it)` });
    else out[field] = code === '' ? null : code;
  }
  if (fields.mainPhoto !== undefined) {
    const n = fields.mainPhoto;
    if (typeof n === 'number' && Number.isInteger(n) && n >= 1 && n < MAX_PHOTOS) out.mainPhoto = n;
    else errors.push({ field: 'mainPhoto', message: `must be the number of another photo (1 to ${MAX_PHOTOS - 1})` });
  }
  if (fields.mainPhoto !== undefined && fields.image !== undefined)
    errors.push({ field: 'mainPhoto', message: 'cannot be given with a new image' });
  if (errors.length > 0) throw validationError(errors);
  if (fields.image !== undefined) out.image = await prepareImage(fields.image, 'image', limits);
  return out;
}

/** Applies checked changes to a garment record (the photo is stored by the caller). */
export function applyGarmentChanges(garment: CatalogueGarment, changes: CheckedGarment, image?: StoredImage): void {
  if (changes.name !== undefined) garment.name = changes.name;
  if (changes.category !== undefined) garment.category = changes.category;
  if (changes.sizes !== undefined) garment.sizes = changes.sizes;
  for (const field of ['sku', 'barcode'] as const) {
    const code = changes[field];
    if (code === null) delete garment[field];
    else if (code !== undefined) garment[field] = code;
  }
  if (image) garment.image = image;
  if (changes.mainPhoto !== undefined) {
    const more = garment.morePhotos ?? [];
    const k = changes.mainPhoto - 1;
    const chosen = more[k];
    if (!chosen) throw validationError([{ field: 'mainPhoto', message: `the garment has no photo ${changes.mainPhoto}` }]);
    more[k] = garment.image;
    garment.image = chosen;
    garment.morePhotos = more;
  }
}

/** A new garment id. */
export function newGarmentId(now: Date): string {
  return newId('gar', now.getTime());
}

/** Removes all of a garment's photos (those already gone are fine). */
export async function removeGarmentPhotos(photos: CataloguePhotoStore, garment: CatalogueGarment): Promise<void> {
  for (const photo of photosOf(garment)) await photos.remove(photo);
}

/** The garment with this id; 404 otherwise. */
export async function findGarment(accounts: AccountStore, id: string): Promise<CatalogueGarment> {
  const garment = await accounts.garment(id);
  if (!garment) throw garmentNotFound(id);
  return garment;
}
