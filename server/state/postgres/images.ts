/**
 * A shop's images in its PostgreSQL, readable by every API process and worker: one row per image in a table of its
 * own (migration 3), keyed by try-on and name, never inside `generations`.
 *
 * The bytes are one `bytea` value (up to 1 GB; the API's images are at most a few tens of MB), stored out of line
 * uncompressed: JPEG, PNG and WebP are compressed already. A put is one INSERT, so it has committed (and, with
 * PostgreSQL's default `synchronous_commit`, reached its write-ahead log on disk) when it resolves; a put of a name
 * already stored replaces it, so a retried put is harmless. A get asks for base64 rather than bytea's hex text:
 * each copy the client holds while it reads (the message, the text) is about 1.35 times the image instead of twice,
 * and a 15 MB image came back in half the time. Removing a try-on's images
 * deletes its rows; autovacuum reclaims their space later, as a file system reuses a removed file's blocks.
 */
import type { StoredImage } from '../../store/schema.ts';
import { checkGenerationId, checkPut, imageFile, ImageNotFoundError, parseImageFile, type ImageMeta, type ImageStore } from '../images.ts';
import type { PgDatabase } from './db.ts';

export class PgImageStore implements ImageStore {
  /** On the pool of the shop's state (`PgState.db`); the schema is migrated by `PgDatabase.open`. */
  constructor(private readonly db: PgDatabase) {}

  async put(genId: string, name: string, bytes: Uint8Array, meta: ImageMeta): Promise<StoredImage> {
    checkPut(genId, name, meta);
    await this.db.query(
      `INSERT INTO images (gen_id, name, format, width, height, bytes) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (gen_id, name) DO UPDATE SET format = excluded.format, width = excluded.width,
         height = excluded.height, bytes = excluded.bytes, created_at = excluded.created_at`,
      // pg sends a byte-array parameter in binary, as it is: no encoding on the way in.
      [genId, name, meta.format, meta.width, meta.height, bytes],
    );
    return { file: imageFile(genId, name, meta.format), format: meta.format, width: meta.width, height: meta.height };
  }

  async get(image: StoredImage): Promise<Buffer> {
    const { genId, name, format } = parseImageFile(image);
    const { rows } = await this.db.query<{ data: string }>(
      `SELECT encode(bytes, 'base64') AS data FROM images WHERE gen_id = $1 AND name = $2 AND format = $3`,
      [genId, name, format],
    );
    if (!rows[0]) throw new ImageNotFoundError(image.file);
    return Buffer.from(rows[0].data, 'base64');
  }

  async remove(image: StoredImage): Promise<void> {
    const { genId, name, format } = parseImageFile(image);
    await this.db.query('DELETE FROM images WHERE gen_id = $1 AND name = $2 AND format = $3', [genId, name, format]);
  }

  async removeGeneration(genId: string): Promise<void> {
    await this.db.query('DELETE FROM images WHERE gen_id = $1', [checkGenerationId(genId)]);
  }
}
