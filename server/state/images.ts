/**
 * Where a try-on's images live, behind one seam that every node of a shop can read: `DirectoryImageStore` (files
 * under `<root>/images/<genId>/`: the data directory on one PC, or a directory every node mounts) and `PgImageStore`
 * (postgres/images.ts: rows of their own in the shop's PostgreSQL). `test/unit/image-store.test.ts` runs one suite
 * against both.
 *
 * A stored image is named by its `StoredImage.file`, `images/<genId>/<name>.<ext>`, the same in both stores, so
 * that a record reads the same whichever store holds its bytes. Generation ids, names and files are checked here,
 * before any store sees them: no name can reach outside a generation's own images.
 */
import { IMAGE_FORMATS, type ImageFormat } from '../kernel/vocabulary.ts';
import { readImage, removeGenerationImages, removeImage, storeImage } from '../images/files.ts';
import type { StoredImage } from '../store/schema.ts';

/** What a store keeps beside an image's bytes. */
export interface ImageMeta {
  format: ImageFormat;
  width: number;
  height: number;
}

export interface ImageStore {
  /** Stores (or replaces) the image `name` of a try-on; durable once it resolves. */
  put(genId: string, name: string, bytes: Uint8Array, meta: ImageMeta): Promise<StoredImage>;
  /** The bytes of a stored image; `ImageNotFoundError` when the store does not hold it. */
  get(image: StoredImage): Promise<Buffer>;
  /** Removes one image (an image that is already gone is fine). */
  remove(image: StoredImage): Promise<void>;
  /** Removes every image of a try-on, for erasure and retention (none left is fine). */
  removeGeneration(genId: string): Promise<void>;
}

/** A generation id, a name or a file that could not name a try-on's image: refused before any store is touched. */
export class ImageKeyError extends Error {
  constructor(what: string, value: unknown) {
    super(`not ${what}: ${JSON.stringify(value)}`);
    this.name = 'ImageKeyError';
  }
}

/** Asked for an image that the store does not hold (never stored, or removed). */
export class ImageNotFoundError extends Error {
  constructor(readonly file: string) {
    super(`the image ${file} is not in the image store (never stored, or removed)`);
    this.name = 'ImageNotFoundError';
  }
}

/** A try-on id as `newId('gen')` makes it. */
const GENERATION_ID = /^gen_[0-9A-Z]{26}$/;
/** An image's name within its try-on: `selfie`, `item-0`, `result`. */
const IMAGE_NAME = /^[a-z0-9][a-z0-9-]{0,63}$/;
const EXTENSIONS: Readonly<Record<ImageFormat, string>> = { jpeg: 'jpg', png: 'png', webp: 'webp' };
/** `images/<genId>/<name>.<ext>`; backslashes too, as `path.join` writes it on Windows. */
const IMAGE_FILE = /^images[\\/](gen_[0-9A-Z]{26})[\\/]([a-z0-9][a-z0-9-]{0,63})\.(jpg|png|webp)$/;

/** Checks a generation id; returns it. */
export function checkGenerationId(genId: unknown): string {
  if (typeof genId !== 'string' || !GENERATION_ID.test(genId)) throw new ImageKeyError('a try-on id', genId);
  return genId;
}

/** Checks what a put names and describes. */
export function checkPut(genId: unknown, name: unknown, meta: ImageMeta): void {
  checkGenerationId(genId);
  if (typeof name !== 'string' || !IMAGE_NAME.test(name)) throw new ImageKeyError('an image name', name);
  if (!IMAGE_FORMATS.includes(meta.format)) throw new ImageKeyError('an image format', meta.format);
  for (const side of [meta.width, meta.height])
    if (!Number.isInteger(side) || side <= 0) throw new ImageKeyError('an image side in pixels', side);
}

/** The file a put of `name` in `format` is stored as. */
export function imageFile(genId: string, name: string, format: ImageFormat): string {
  return `images/${genId}/${name}.${EXTENSIONS[format]}`;
}

/** The try-on, name and format a stored image's file names; `ImageKeyError` for any other file. */
export function parseImageFile(image: StoredImage): { genId: string; name: string; format: ImageFormat } {
  const match = typeof image.file === 'string' ? IMAGE_FILE.exec(image.file) : null;
  if (!match || EXTENSIONS[image.format] !== match[3]) throw new ImageKeyError("a try-on's image file", image.file);
  return { genId: match[1]!, name: match[2]!, format: image.format };
}

/**
 * Images as files under `root` (`<root>/images/<genId>/<name>.<ext>`), written durably (fsynced, renamed into
 * place): today's layout, in the data directory on one PC, or in a directory that every node mounts.
 */
export class DirectoryImageStore implements ImageStore {
  constructor(readonly root: string) {}

  async put(genId: string, name: string, bytes: Uint8Array, meta: ImageMeta): Promise<StoredImage> {
    checkPut(genId, name, meta);
    return storeImage(this.root, genId, name, { bytes, format: meta.format, width: meta.width, height: meta.height });
  }

  async get(image: StoredImage): Promise<Buffer> {
    parseImageFile(image);
    try {
      return await readImage(this.root, image);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new ImageNotFoundError(image.file);
      throw error;
    }
  }

  async remove(image: StoredImage): Promise<void> {
    parseImageFile(image);
    await removeImage(this.root, image);
  }

  async removeGeneration(genId: string): Promise<void> {
    await removeGenerationImages(this.root, checkGenerationId(genId));
  }
}
