/**
 * Where images live: `<data-dir>/images/<genId>/` holds a generation's
 * inputs and result. Records in the state point here by relative path.
 */
import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { ImageFormat } from '../engines/types.ts';
import { mkdirDurably, writeFileDurably } from '../kernel/durable-fs.ts';
import type { StoredImage } from '../store/schema.ts';

const EXTENSIONS: Record<ImageFormat, string> = { jpeg: 'jpg', png: 'png', webp: 'webp' };
const CONTENT_TYPES: Record<ImageFormat, string> = { jpeg: 'image/jpeg', png: 'image/png', webp: 'image/webp' };
const GEN_DIR = /^gen_[0-9A-Z]{26}$/;

/** The MIME type of a format. */
export function contentType(format: ImageFormat): string {
  return CONTENT_TYPES[format];
}

/** Stores one image of a generation durably; returns its record. */
export async function storeImage(
  dataDir: string,
  genId: string,
  name: string,
  image: { bytes: Uint8Array; format: ImageFormat; width: number; height: number },
): Promise<StoredImage> {
  const relDir = join('images', genId);
  await mkdirDurably(join(dataDir, relDir));
  const file = join(relDir, `${name}.${EXTENSIONS[image.format]}`);
  await writeFileDurably(join(dataDir, file), image.bytes);
  return { file, format: image.format, width: image.width, height: image.height };
}

/** Reads a stored image. */
export function readImage(dataDir: string, image: StoredImage): Promise<Buffer> {
  return readFile(join(dataDir, image.file));
}

/** Removes every image of a generation (missing files are fine). */
export async function removeGenerationImages(dataDir: string, genId: string): Promise<void> {
  if (!GEN_DIR.test(genId)) throw new Error(`not a generation id: ${genId}`);
  await rm(join(dataDir, 'images', genId), { recursive: true, force: true });
}

/** Removes one image file. */
export async function removeImage(dataDir: string, image: StoredImage): Promise<void> {
  await rm(join(dataDir, image.file), { force: true });
}

/** The generation ids that have an image folder. */
export async function listImageDirs(dataDir: string): Promise<string[]> {
  try {
    return (await readdir(join(dataDir, 'images'))).filter((name) => GEN_DIR.test(name));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}
