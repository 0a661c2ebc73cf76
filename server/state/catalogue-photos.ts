/**
 * Where the photos of the shop's garment catalogue live, behind one seam that every node of a shop can read:
 * `DirectoryCataloguePhotos` (files under `<root>/catalogue/`: the data directory on one PC, or a directory every
 * node mounts) and `PgCataloguePhotos` (postgres/catalogue-photos.ts: the `catalogue_photos` table of migration 5,
 * which `fittingroom migrate` fills). `test/unit/catalogue-photos.test.ts` runs one suite against both.
 *
 * A photo is named by its `StoredImage.file`, `catalogue/<garmentId>[-<version>].<ext>`, the same in both stores,
 * so that a garment's record reads the same whichever store holds the bytes. A new version of a garment's photo
 * gets a new name, so that the one a committed record names stays until the change that replaces it is durable.
 * Garment ids, versions and files are checked here, before any store sees them: no name can reach outside the
 * catalogue's own photos.
 */
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { mkdirDurably, writeFileDurably } from '../kernel/durable-fs.ts';
import { IMAGE_FORMATS, type ImageFormat } from '../kernel/vocabulary.ts';
import type { StoredImage } from '../store/schema.ts';
import { ImageKeyError, ImageNotFoundError, type ImageMeta } from './images.ts';

export interface CataloguePhotoStore {
  /**
   * Stores a photo of a garment as `catalogue/<garmentId>[-<version>].<ext>` (a version is 1 to 20 digits, say the
   * time in ms); durable once it resolves. A put of a file already stored replaces it, so a retried put is harmless.
   */
  put(garmentId: string, bytes: Uint8Array, meta: ImageMeta, version?: string): Promise<StoredImage>;
  /** The bytes of a stored photo; `ImageNotFoundError` when the store does not hold it. */
  get(photo: StoredImage): Promise<Buffer>;
  /** Removes one photo (a photo that is already gone is fine). */
  remove(photo: StoredImage): Promise<void>;
}

/** A garment id as `newGarmentId` makes it. */
const GARMENT_ID = /^gar_[0-9A-Z]{26}$/;
const VERSION = /^[0-9]{1,20}$/;
const EXTENSIONS: Readonly<Record<ImageFormat, string>> = { jpeg: 'jpg', png: 'png', webp: 'webp' };
/** `catalogue/<garmentId>[-<version>].<ext>`; backslashes too, as `path.join` writes it on Windows (migration 5's CHECK). */
const PHOTO_FILE = /^catalogue[\\/]gar_[0-9A-Z]{26}(-[0-9]{1,20})?\.(jpg|png|webp)$/;

/** Checks what a put names and describes; returns the photo's name in `catalogue/`. */
export function cataloguePhotoName(garmentId: unknown, meta: ImageMeta, version?: unknown): string {
  if (typeof garmentId !== 'string' || !GARMENT_ID.test(garmentId)) throw new ImageKeyError('a garment id', garmentId);
  if (version !== undefined && (typeof version !== 'string' || !VERSION.test(version)))
    throw new ImageKeyError("a photo's version", version);
  if (!IMAGE_FORMATS.includes(meta.format)) throw new ImageKeyError('an image format', meta.format);
  for (const side of [meta.width, meta.height])
    if (!Number.isInteger(side) || side <= 0) throw new ImageKeyError('an image side in pixels', side);
  return `${garmentId}${version === undefined ? '' : `-${version}`}.${EXTENSIONS[meta.format]}`;
}

/** Checks that a stored photo's file names a catalogue photo in its format; `ImageKeyError` for any other file. */
export function checkCataloguePhoto(photo: StoredImage): string {
  const match = typeof photo.file === 'string' ? PHOTO_FILE.exec(photo.file) : null;
  if (!match || EXTENSIONS[photo.format] !== match[2]) throw new ImageKeyError('a catalogue photo file', photo.file);
  return photo.file;
}

/**
 * Photos as files under `root` (`<root>/catalogue/<name>`), written durably (fsynced, renamed into place): the
 * layout and file names the catalogue has always had, in the data directory on one PC.
 */
export class DirectoryCataloguePhotos implements CataloguePhotoStore {
  constructor(readonly root: string) {}

  async put(garmentId: string, bytes: Uint8Array, meta: ImageMeta, version?: string): Promise<StoredImage> {
    const file = join('catalogue', cataloguePhotoName(garmentId, meta, version));
    await mkdirDurably(join(this.root, 'catalogue'));
    await writeFileDurably(join(this.root, file), bytes);
    return { file, format: meta.format, width: meta.width, height: meta.height };
  }

  async get(photo: StoredImage): Promise<Buffer> {
    const file = checkCataloguePhoto(photo);
    try {
      return await readFile(join(this.root, file));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new ImageNotFoundError(file);
      throw error;
    }
  }

  async remove(photo: StoredImage): Promise<void> {
    await rm(join(this.root, checkCataloguePhoto(photo)), { force: true });
  }
}
