/**
 * Migration 3: images in a table of their own (postgres/images.ts), so that every node of a shop reads them.
 *
 * No foreign key to `generations`: a try-on's inputs are stored before its record is written (and removed if the
 * submit is refused), and retention removes images by try-on id whether or not the record is still there. The
 * checks repeat the code's (server/state/images.ts), so that no row can name a path outside its try-on's images.
 */
import type { Migration } from '../migrations.ts';

export const migration: Migration = {
  version: 3,
  name: 'images',
  sql: `
CREATE TABLE images (
  gen_id text NOT NULL CONSTRAINT images_generation_id CHECK (gen_id ~ '^gen_[0-9A-Z]{26}$'),
  name text NOT NULL CONSTRAINT images_plain_name CHECK (name ~ '^[a-z0-9][a-z0-9-]{0,63}$'),
  format text NOT NULL CHECK (format IN ('jpeg', 'png', 'webp')),
  width integer NOT NULL CHECK (width > 0),
  height integer NOT NULL CHECK (height > 0),
  byte_size integer GENERATED ALWAYS AS (octet_length(bytes)) STORED,
  bytes bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (gen_id, name)
);
-- JPEG, PNG and WebP are compressed already: stored out of line without trying to compress them again.
ALTER TABLE images ALTER COLUMN bytes SET STORAGE EXTERNAL;
`,
};
