/**
 * Migration 4: API keys, the installation, webhook signing secrets, the shop floor's GUI (PIN, its throttle, the
 * GUI's key, sessions), the garment catalogue and take-home links (server/state/postgres/accounts.ts), with their
 * invariants:
 * - a key's hash is unique; a key is never deleted, and its id, scope, hash, prefix, creation and lineage never
 *   change; a revocation is for good; a rotated key has one successor, in its own lineage, and an end to its grace
 *   that only ever comes sooner; every key of a lineage has its first key's scope;
 * - one installation row, set once;
 * - at most one current webhook secret and one previous one;
 * - one shop-floor row; the GUI's key and every session's key are admin keys; a session's token hash is unique;
 * - a garment's SKU and barcode are unique among garments, case-insensitively, and never empty; at most 6 photos;
 * - one take-home link per try-on.
 */
import type { Migration } from '../migrations.ts';

export const migration: Migration = {
  version: 4,
  name: 'keys, installation, webhook secrets, GUI sessions and PIN, catalogue, take-home links',
  sql: `
-- Refuses the change a trigger guards against: TG_ARGV[0] names the constraint, TG_ARGV[1] says why.
CREATE FUNCTION accounts_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '%', TG_ARGV[1] USING ERRCODE = 'check_violation', CONSTRAINT = TG_ARGV[0];
END $$;

CREATE TABLE installation (
  one boolean PRIMARY KEY DEFAULT true CONSTRAINT installation_one_row CHECK (one),
  id text NOT NULL CHECK (id ~ '^inst_[0-9A-Z]{26}$'),
  created_at timestamptz NOT NULL
);
CREATE TRIGGER installation_set_once BEFORE UPDATE OR DELETE ON installation FOR EACH ROW
  EXECUTE FUNCTION accounts_refuse('installation_set_once', 'the installation id is set once: vouchers are bound to it');
CREATE TRIGGER installation_no_truncate BEFORE TRUNCATE ON installation FOR EACH STATEMENT
  EXECUTE FUNCTION accounts_refuse('installation_set_once', 'the installation id is set once: vouchers are bound to it');

CREATE TABLE api_keys (
  id text PRIMARY KEY,
  name text NOT NULL CHECK (name <> ''),
  scope text NOT NULL CHECK (scope IN ('admin', 'standard')),
  hash text NOT NULL CONSTRAINT api_keys_hash_unique UNIQUE CHECK (hash ~ '^[0-9a-f]{64}$'),
  prefix text NOT NULL,
  created_at timestamptz NOT NULL,
  revoked_at timestamptz,
  expires_at timestamptz,
  rotated_to text CONSTRAINT api_keys_one_predecessor UNIQUE CHECK (rotated_to <> id),
  lineage_id text NOT NULL,
  CONSTRAINT api_keys_id_scope UNIQUE (id, scope),
  CONSTRAINT api_keys_id_lineage UNIQUE (id, lineage_id),
  -- A lineage starts at a key of its own scope (itself, for a key never rotated to), so rotation keeps the scope.
  CONSTRAINT api_keys_lineage FOREIGN KEY (lineage_id, scope) REFERENCES api_keys (id, scope),
  CONSTRAINT api_keys_successor_in_lineage FOREIGN KEY (rotated_to, lineage_id) REFERENCES api_keys (id, lineage_id),
  CONSTRAINT api_keys_rotated_has_grace_end CHECK (rotated_to IS NULL OR expires_at IS NOT NULL)
);

CREATE FUNCTION api_keys_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.id <> OLD.id OR NEW.scope <> OLD.scope OR NEW.hash <> OLD.hash OR NEW.prefix <> OLD.prefix
     OR NEW.created_at <> OLD.created_at OR NEW.lineage_id <> OLD.lineage_id THEN
    RAISE EXCEPTION 'the id, scope, hash, prefix, creation and lineage of key % never change', OLD.id
      USING ERRCODE = 'check_violation', CONSTRAINT = 'api_keys_immutable';
  END IF;
  IF OLD.revoked_at IS NOT NULL AND NEW.revoked_at IS DISTINCT FROM OLD.revoked_at THEN
    RAISE EXCEPTION 'key % is revoked for good', OLD.id USING ERRCODE = 'check_violation', CONSTRAINT = 'api_keys_revoked_for_good';
  END IF;
  IF OLD.rotated_to IS NOT NULL AND NEW.rotated_to IS DISTINCT FROM OLD.rotated_to THEN
    RAISE EXCEPTION 'key % was already rotated to %', OLD.id, OLD.rotated_to
      USING ERRCODE = 'check_violation', CONSTRAINT = 'api_keys_rotated_once';
  END IF;
  IF OLD.expires_at IS NOT NULL AND (NEW.expires_at IS NULL OR NEW.expires_at > OLD.expires_at) THEN
    RAISE EXCEPTION 'the end of key %''s grace may come sooner, never later', OLD.id
      USING ERRCODE = 'check_violation', CONSTRAINT = 'api_keys_expiry_only_sooner';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER api_keys_guard BEFORE UPDATE ON api_keys FOR EACH ROW EXECUTE FUNCTION api_keys_guard();
CREATE TRIGGER api_keys_kept BEFORE DELETE ON api_keys FOR EACH ROW
  EXECUTE FUNCTION accounts_refuse('api_keys_kept', 'API keys are never deleted (try-ons name them): revoke them');
CREATE TRIGGER api_keys_no_truncate BEFORE TRUNCATE ON api_keys FOR EACH STATEMENT
  EXECUTE FUNCTION accounts_refuse('api_keys_kept', 'API keys are never deleted (try-ons name them): revoke them');

CREATE TABLE webhook_secrets (
  secret text PRIMARY KEY CHECK (secret ~ '^whsec_[A-Za-z0-9+/]{43}=$'),
  created_at timestamptz NOT NULL,
  -- Set on the previous secret while a rotation's overlap lasts.
  expires_at timestamptz
);
CREATE UNIQUE INDEX webhook_secrets_one_current ON webhook_secrets ((true)) WHERE expires_at IS NULL;
CREATE UNIQUE INDEX webhook_secrets_one_previous ON webhook_secrets ((true)) WHERE expires_at IS NOT NULL;

CREATE TABLE shop_floor (
  one boolean PRIMARY KEY DEFAULT true CONSTRAINT shop_floor_one_row CHECK (one),
  pin_hash text CHECK (pin_hash ~ '^scrypt[$][A-Za-z0-9+/=]+[$][A-Za-z0-9+/=]+$'),
  gui_key_id text,
  gui_key_scope text NOT NULL DEFAULT 'admin' CHECK (gui_key_scope = 'admin'),
  erase_on_new_customer boolean NOT NULL DEFAULT false,
  auto_capture boolean NOT NULL DEFAULT false,
  pin_failures integer NOT NULL DEFAULT 0 CHECK (pin_failures >= 0),
  pin_blocked_until timestamptz,
  CONSTRAINT shop_floor_gui_key_is_admin FOREIGN KEY (gui_key_id, gui_key_scope) REFERENCES api_keys (id, scope),
  CONSTRAINT shop_floor_blocked_after_failures CHECK (pin_blocked_until IS NULL OR pin_failures > 0)
);
INSERT INTO shop_floor DEFAULT VALUES;
CREATE TRIGGER shop_floor_kept BEFORE DELETE ON shop_floor FOR EACH ROW
  EXECUTE FUNCTION accounts_refuse('shop_floor_one_row', 'the shop floor has its one row');
CREATE TRIGGER shop_floor_no_truncate BEFORE TRUNCATE ON shop_floor FOR EACH STATEMENT
  EXECUTE FUNCTION accounts_refuse('shop_floor_one_row', 'the shop floor has its one row');

CREATE TABLE gui_sessions (
  id text PRIMARY KEY,
  hash text NOT NULL CONSTRAINT gui_sessions_hash_unique UNIQUE CHECK (hash ~ '^[0-9a-f]{64}$'),
  key_id text NOT NULL,
  key_scope text NOT NULL DEFAULT 'admin' CHECK (key_scope = 'admin'),
  via text NOT NULL CHECK (via IN ('key', 'pin', 'shell')),
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  CONSTRAINT gui_sessions_act_as_admin FOREIGN KEY (key_id, key_scope) REFERENCES api_keys (id, scope),
  CONSTRAINT gui_sessions_end_after_start CHECK (expires_at > created_at)
);
CREATE INDEX gui_sessions_by_key ON gui_sessions (key_id);
CREATE INDEX gui_sessions_by_expiry ON gui_sessions (expires_at);

CREATE TABLE garments (
  id text PRIMARY KEY,
  record jsonb NOT NULL,
  sku text GENERATED ALWAYS AS (record ->> 'sku') STORED CONSTRAINT garments_sku_not_empty CHECK (sku <> ''),
  barcode text GENERATED ALWAYS AS (record ->> 'barcode') STORED CONSTRAINT garments_barcode_not_empty CHECK (barcode <> ''),
  created_at text GENERATED ALWAYS AS (record ->> 'createdAt') STORED NOT NULL,
  CHECK (record ->> 'id' = id),
  CHECK (coalesce(record ->> 'name', '') <> ''),
  CHECK (jsonb_typeof(record -> 'image') = 'object'),
  CONSTRAINT garments_at_most_six_photos CHECK (coalesce(jsonb_array_length(record -> 'morePhotos'), 0) <= 5)
);
CREATE UNIQUE INDEX garments_sku_unique ON garments (lower(sku)) WHERE sku IS NOT NULL;
CREATE UNIQUE INDEX garments_barcode_unique ON garments (lower(barcode)) WHERE barcode IS NOT NULL;
CREATE INDEX garments_newest_first ON garments (created_at DESC, id DESC);

CREATE TABLE gui_shares (
  gen_id text PRIMARY KEY CHECK (gen_id ~ '^gen_[0-9A-Z]{26}$'),
  hash text NOT NULL CHECK (hash ~ '^[A-Za-z0-9+/]{43}=$'),
  expires_at timestamptz NOT NULL
);
CREATE INDEX gui_shares_by_expiry ON gui_shares (expires_at);
`,
};
