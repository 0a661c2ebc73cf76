/**
 * The shop's garment catalogue, kept for the GUI: records in the state,
 * photos as files under `<data-dir>/catalogue/` (normalized like any input).
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ApiError, validationError, type FieldError } from '../kernel/errors.ts';
import { GARMENT_CATEGORIES, isOneOf, normalizeSize } from '../kernel/vocabulary.ts';
import { prepareImage, type ImageLimits } from '../images/index.ts';
import { mkdirDurably, writeFileDurably } from '../kernel/durable-fs.ts';
import { newId } from '../kernel/ids.ts';
import type { CatalogueGarment, StoredImage } from '../store/schema.ts';
import type { GarmentView } from './contract.ts';

const EXTENSIONS = { jpeg: 'jpg', png: 'png', webp: 'webp' } as const;
const NAME_MAX = 100;

/** The view of a garment. */
export function garmentView(garment: CatalogueGarment): GarmentView {
  return {
    id: garment.id,
    name: garment.name,
    category: garment.category,
    sizes: garment.sizes,
    imageUrl: `/gui/api/garments/${garment.id}/image`,
    createdAt: garment.createdAt,
  };
}

/** Checks a new garment's fields (all problems at once) and prepares its photo; 422 otherwise. */
export async function checkGarment(
  body: unknown,
  limits: ImageLimits,
): Promise<{ name: string; category: CatalogueGarment['category']; sizes: string[]; image: Awaited<ReturnType<typeof prepareImage>> }> {
  const fields = (body ?? {}) as Record<string, unknown>;
  const errors: FieldError[] = [];
  const name = typeof fields.name === 'string' ? fields.name.trim() : '';
  if (name === '' || name.length > NAME_MAX || /[\u0000-\u001f\u007f]/.test(name)) {
    errors.push({ field: 'name', message: `a name of 1 to ${NAME_MAX} printable characters is required` });
  }
  const category = fields.category as CatalogueGarment['category'];
  if (!isOneOf(category, GARMENT_CATEGORIES))
    errors.push({ field: 'category', message: `must be one of ${GARMENT_CATEGORIES.join(', ')}` });
  const sizes: string[] = [];
  if (!Array.isArray(fields.sizes) || fields.sizes.length > 30) {
    errors.push({ field: 'sizes', message: 'must be a list of at most 30 sizes' });
  } else {
    for (const [i, value] of fields.sizes.entries()) {
      const size = normalizeSize(value);
      if (size === null) errors.push({ field: `sizes[${i}]`, message: 'is not a known size' });
      else if (!sizes.includes(size)) sizes.push(size);
    }
  }
  if (fields.image === undefined) errors.push({ field: 'image', message: 'a photo of the garment is required' });
  if (errors.length > 0) throw validationError(errors);
  const image = await prepareImage(fields.image, 'image', limits);
  return { name, category, sizes, image };
}

/** Writes a garment's photo durably; returns its record part. */
export async function storeGarmentImage(
  dataDir: string,
  id: string,
  image: { bytes: Uint8Array; format: keyof typeof EXTENSIONS; width: number; height: number },
): Promise<StoredImage> {
  await mkdirDurably(join(dataDir, 'catalogue'));
  const file = join('catalogue', `${id}.${EXTENSIONS[image.format]}`);
  await writeFileDurably(join(dataDir, file), image.bytes);
  return { file, format: image.format, width: image.width, height: image.height };
}

/** A new garment id. */
export function newGarmentId(now: Date): string {
  return newId('gar', now.getTime());
}

/** Removes a garment's photo (a missing file is fine). */
export async function removeGarmentImage(dataDir: string, garment: CatalogueGarment): Promise<void> {
  await rm(join(dataDir, garment.image.file), { force: true });
}

/** The garment with this id; 404 otherwise. */
export function findGarment(garments: Record<string, CatalogueGarment>, id: string): CatalogueGarment {
  const garment = Object.hasOwn(garments, id) ? garments[id] : undefined;
  if (!garment) throw new ApiError('not_found', `There is no garment ${id} in the catalogue.`);
  return garment;
}
