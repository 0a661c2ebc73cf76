/**
 * Migration 5: what `fittingroom migrate` needs to move a one-PC shop into this database (server/state/migrate-shop.ts):
 * - `shop_migrations`, the record that a shop was moved here: one row, never changed or removed, so a second move
 *   into the same database is refused by the schema as well as by the code;
 * - `catalogue_photos`, the photos of the catalogue's garments, which on one PC are files under `catalogue/` (a
 *   try-on's images have their own table, migration 3, keyed by try-on; a garment's photo is keyed by the file its
 *   record names, so that a record reads the same whichever store holds the bytes).
 */
import type { Migration } from '../migrations.ts';

export const migration: Migration = {
  version: 5,
  name: 'shop moves, catalogue photos',
  sql: `
CREATE TABLE shop_migrations (
  one boolean PRIMARY KEY DEFAULT true CONSTRAINT shop_migrations_one_shop CHECK (one),
  installation_id text NOT NULL CHECK (installation_id ~ '^inst_[0-9A-Z]{26}$'),
  -- The data directory it came from, as the command was given it (for people; nothing reads it back).
  from_data_dir text NOT NULL,
  migrated_at timestamptz NOT NULL,
  -- What was copied and verified, as the command printed it.
  totals jsonb NOT NULL
);
CREATE TRIGGER shop_migrations_kept BEFORE UPDATE OR DELETE ON shop_migrations FOR EACH ROW
  EXECUTE FUNCTION accounts_refuse('shop_migrations_kept', 'a shop is moved into a database once');
CREATE TRIGGER shop_migrations_no_truncate BEFORE TRUNCATE ON shop_migrations FOR EACH STATEMENT
  EXECUTE FUNCTION accounts_refuse('shop_migrations_kept', 'a shop is moved into a database once');

CREATE TABLE catalogue_photos (
  file text PRIMARY KEY
    CONSTRAINT catalogue_photos_plain_file CHECK (file ~ '^catalogue[\\\\/]gar_[0-9A-Z]{26}(-[0-9]{1,20})?\\.(jpg|png|webp)$'),
  format text NOT NULL CHECK (format IN ('jpeg', 'png', 'webp')),
  width integer NOT NULL CHECK (width > 0),
  height integer NOT NULL CHECK (height > 0),
  byte_size integer GENERATED ALWAYS AS (octet_length(bytes)) STORED,
  bytes bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
-- Compressed already, as a try-on's images.
ALTER TABLE catalogue_photos ALTER COLUMN bytes SET STORAGE EXTERNAL;
`,
};
