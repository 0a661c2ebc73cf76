/**
 * The catalogue's photos in a shop's PostgreSQL, readable by every API process: one row per photo in
 * `catalogue_photos` (migration 5, which `fittingroom migrate` fills with a one-PC shop's files), keyed by the file
 * its garment's record names. As the try-on images of postgres/images.ts: a put is one INSERT (committed when it
 * resolves, a put of a stored file replaces it), a get asks for base64 rather than bytea's hex text, and the bytes
 * are stored out of line uncompressed.
 */
import type { StoredImage } from '../../store/schema.ts';
import { cataloguePhotoName, checkCataloguePhoto, type CataloguePhotoStore } from '../catalogue-photos.ts';
import { ImageNotFoundError, type ImageMeta } from '../images.ts';
import type { PgDatabase } from './db.ts';

export class PgCataloguePhotos implements CataloguePhotoStore {
  /** On the pool of the shop's state (`PgState.db`); the schema is migrated by `PgDatabase.open`. */
  constructor(private readonly db: PgDatabase) {}

  async put(garmentId: string, bytes: Uint8Array, meta: ImageMeta, version?: string): Promise<StoredImage> {
    const file = `catalogue/${cataloguePhotoName(garmentId, meta, version)}`;
    await this.db.query(
      `INSERT INTO catalogue_photos (file, format, width, height, bytes) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (file) DO UPDATE SET format = excluded.format, width = excluded.width,
         height = excluded.height, bytes = excluded.bytes, created_at = excluded.created_at`,
      [file, meta.format, meta.width, meta.height, bytes],
    );
    return { file, format: meta.format, width: meta.width, height: meta.height };
  }

  async get(photo: StoredImage): Promise<Buffer> {
    const file = checkCataloguePhoto(photo);
    const { rows } = await this.db.query<{ data: string }>(
      `SELECT encode(bytes, 'base64') AS data FROM catalogue_photos WHERE file = $1 AND format = $2`,
      [file, photo.format],
    );
    if (!rows[0]) throw new ImageNotFoundError(file);
    return Buffer.from(rows[0].data, 'base64');
  }

  async remove(photo: StoredImage): Promise<void> {
    await this.db.query('DELETE FROM catalogue_photos WHERE file = $1', [checkCataloguePhoto(photo)]);
  }
}
