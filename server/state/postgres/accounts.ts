/**
 * The account store on PostgreSQL (migration 4's tables), shared by every API process of one shop. Each change is
 * one transaction that locks what it decides on; where a feature's rule needs "the state" (keys/'s revoke and
 * rotate, webhooks/secrets.ts), the locked rows are handed to the feature's own function as a scratch state and
 * what it changed is written back, so the rules are the same code as on one PC. The schema holds the invariants as
 * well (unique hashes and codes, one successor per key, one installation, admin-only sessions), so a bug here
 * fails a transaction instead of breaking them.
 *
 * Lock order, where a transaction takes several: shop_floor, then api_keys (by id), then the rest.
 */
import { createKey, hashKey, isKeyActive, revokeKey, rotateKey } from '../../keys/api-keys.ts';
import { newId } from '../../kernel/ids.ts';
import {
  emptyState,
  type ApiKeyRecord,
  type CatalogueGarment,
  type GuiSession,
  type KeyScope,
  type State,
  type WebhookSecret,
} from '../../store/schema.ts';
import { currentSecret, ensureSecret, rotateSecret, secretView, signingSecrets, type SecretView } from '../../webhooks/secrets.ts';
import {
  FIRST_KEY_NAME,
  GUI_KEY_NAME,
  alreadyRotated,
  checkChangedGarment,
  checkCodesUnique,
  checkSessionKey,
  checkSessionTimes,
  garmentIdTaken,
  garmentNotFound,
  guiKeyUsable,
  keyAlreadyStored,
  newCodes,
  sessionTokenInUse,
  withoutEmptyCodes,
  type AccountStore,
  type CodeHolder,
  type CreatedKey,
  type Installation,
  type LiveSession,
  type NewSession,
  type PinThrottleState,
  type RotatedKey,
  type ShareLink,
  type ShopFloor,
  type ShopFloorChoices,
} from '../accounts.ts';
import { PgDatabase, type Sql } from './db.ts';

interface KeyRow {
  id: string;
  name: string;
  scope: KeyScope;
  hash: string;
  prefix: string;
  created_at: Date;
  revoked_at: Date | null;
  expires_at: Date | null;
  rotated_to: string | null;
  lineage_id: string;
}

interface ShopFloorRow {
  pin_hash: string | null;
  gui_key_id: string | null;
  erase_on_new_customer: boolean;
  auto_capture: boolean;
  pin_failures: number;
  pin_blocked_until: Date | null;
}

interface SessionRow {
  id: string;
  hash: string;
  key_id: string;
  via: GuiSession['via'];
  created_at: Date;
  expires_at: Date;
}

interface SecretRow {
  secret: string;
  created_at: Date;
  expires_at: Date | null;
}

interface ShareRow {
  gen_id: string;
  hash: string;
  expires_at: Date;
}

export class PgAccounts implements AccountStore {
  /** On a database another part opened (PgState's); `close()` leaves it open. */
  constructor(
    private readonly db: PgDatabase,
    private readonly owned = false,
  ) {}

  /** Connects on its own, migrating the schema first; `close()` disconnects. */
  static async open(url: string, options: { maxConnections?: number } = {}): Promise<PgAccounts> {
    return new PgAccounts(await PgDatabase.open(url, options), true);
  }

  async installation(): Promise<Installation | null> {
    const { rows } = await this.db.query<{ id: string; created_at: Date }>('SELECT id, created_at FROM installation');
    return rows[0] ? { id: rows[0].id, createdAt: rows[0].created_at.toISOString() } : null;
  }

  install(now: Date, firstAdminKey: string): Promise<{ installation: Installation; created: boolean }> {
    return this.db.transaction(async (sql) => {
      // A concurrent first start waits here for the one that inserted first, and then finds its row.
      const inserted = await sql.query('INSERT INTO installation (id, created_at) VALUES ($1, $2) ON CONFLICT (one) DO NOTHING', [
        newId('inst', now.getTime()),
        now,
      ]);
      const { rows } = await sql.query<{ id: string; created_at: Date }>('SELECT id, created_at FROM installation');
      const installation = { id: rows[0]!.id, createdAt: rows[0]!.created_at.toISOString() };
      if (inserted.rowCount === 0) return { installation, created: false };
      await insertNewKey(sql, FIRST_KEY_NAME, 'admin', now, firstAdminKey);
      return { installation, created: true };
    });
  }

  createKey(name: string, scope: KeyScope, now: Date, options: { key?: string } = {}): Promise<CreatedKey> {
    return this.db.transaction((sql) => insertNewKey(sql, name, scope, now, options.key));
  }

  async keys(): Promise<ApiKeyRecord[]> {
    const { rows } = await this.db.query<KeyRow>('SELECT * FROM api_keys ORDER BY created_at, id');
    return rows.map(keyOf);
  }

  async key(id: string): Promise<ApiKeyRecord | undefined> {
    const { rows } = await this.db.query<KeyRow>('SELECT * FROM api_keys WHERE id = $1', [id]);
    return rows[0] && keyOf(rows[0]);
  }

  async activeKeyByHash(hash: string, now: Date): Promise<ApiKeyRecord | undefined> {
    const { rows } = await this.db.query<KeyRow>('SELECT * FROM api_keys WHERE hash = $1', [hash]);
    const record = rows[0] && keyOf(rows[0]);
    return record && isKeyActive(record, now) ? record : undefined;
  }

  revokeKey(id: string, now: Date): Promise<ApiKeyRecord> {
    return this.db.transaction(async (sql) => {
      // The key and every admin key, locked: two admins revoking each other at once cannot both succeed.
      const { rows } = await sql.query<KeyRow>(`SELECT * FROM api_keys WHERE id = $1 OR scope = 'admin' ORDER BY id FOR UPDATE`, [id]);
      const state = scratch({ keys: rows.map(keyOf) });
      const record = revokeKey(state, id, now);
      await sql.query('UPDATE api_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL', [id, record.revokedAt]);
      return record;
    });
  }

  rotateKey(id: string, now: Date, graceSeconds: number): Promise<RotatedKey> {
    return this.db.transaction(async (sql) => {
      const { rows } = await sql.query<KeyRow>('SELECT * FROM api_keys WHERE id = $1 FOR UPDATE', [id]);
      const previous = rows[0] && keyOf(rows[0]);
      if (previous?.rotatedTo !== undefined) throw alreadyRotated(previous);
      const state = scratch({ keys: previous ? [previous] : [] });
      const rotated = rotateKey(state, id, now, graceSeconds);
      await insertKey(sql, rotated.record);
      await sql.query('UPDATE api_keys SET expires_at = $2, rotated_to = $3 WHERE id = $1', [
        id,
        rotated.previous.expiresAt,
        rotated.previous.rotatedTo,
      ]);
      return rotated;
    });
  }

  async webhookSecret(now: Date): Promise<WebhookSecret> {
    const current = currentSecret(scratch({ webhookSecrets: await this.secrets() }));
    if (current) return current;
    return this.db.transaction(async (sql) => {
      const state = scratch({ webhookSecrets: await lockSecrets(sql) });
      const ensured = ensureSecret(state, now);
      await writeSecrets(sql, state.webhookSecrets);
      return ensured;
    });
  }

  async webhookSecretView(now: Date): Promise<SecretView> {
    const current = await this.webhookSecret(now);
    return secretView(current, scratch({ webhookSecrets: await this.secrets() }), now);
  }

  async signingSecrets(now: Date): Promise<string[]> {
    return signingSecrets(scratch({ webhookSecrets: await this.secrets() }), now);
  }

  rotateWebhookSecret(now: Date, overlapHours: number): Promise<SecretView> {
    return this.db.transaction(async (sql) => {
      const state = scratch({ webhookSecrets: await lockSecrets(sql) });
      const fresh = rotateSecret(state, now, overlapHours);
      await writeSecrets(sql, state.webhookSecrets);
      return secretView(fresh, state, now);
    });
  }

  async shopFloor(): Promise<ShopFloor> {
    const { rows } = await this.db.query<ShopFloorRow>('SELECT * FROM shop_floor');
    const row = rows[0]!;
    return {
      pinHash: row.pin_hash,
      guiKeyId: row.gui_key_id,
      eraseOnNewCustomer: row.erase_on_new_customer,
      autoCapture: row.auto_capture,
      pinThrottle:
        row.pin_failures === 0 && row.pin_blocked_until === null
          ? null
          : { failures: row.pin_failures, blockedUntil: row.pin_blocked_until?.toISOString() ?? null },
    };
  }

  async setPin(hash: string): Promise<void> {
    await this.db.query('UPDATE shop_floor SET pin_hash = $1', [hash]);
  }

  async setChoices(choices: ShopFloorChoices): Promise<void> {
    await this.db.query(
      `UPDATE shop_floor SET erase_on_new_customer = coalesce($1, erase_on_new_customer), auto_capture = coalesce($2, auto_capture)`,
      [choices.eraseOnNewCustomer ?? null, choices.autoCapture ?? null],
    );
  }

  pinFailed(now: Date, waitMs: (failures: number) => number): Promise<PinThrottleState> {
    return this.db.transaction(async (sql) => {
      const { rows } = await sql.query<ShopFloorRow>('SELECT pin_failures FROM shop_floor FOR UPDATE');
      const failures = rows[0]!.pin_failures + 1;
      const wait = waitMs(failures);
      const blockedUntil = wait > 0 ? new Date(now.getTime() + wait) : null;
      await sql.query('UPDATE shop_floor SET pin_failures = $1, pin_blocked_until = $2', [failures, blockedUntil]);
      return { failures, blockedUntil: blockedUntil?.toISOString() ?? null };
    });
  }

  async pinSucceeded(): Promise<void> {
    await this.db.query('UPDATE shop_floor SET pin_failures = 0, pin_blocked_until = NULL WHERE pin_failures > 0');
  }

  startSession(input: NewSession, now: Date): Promise<LiveSession> {
    return this.db.transaction(async (sql) => {
      checkSessionTimes(input.expiresAt, now);
      // Sign-ins that make the GUI's key or set the PIN take the shop floor's row first: one GUI key, however many.
      const floor = input.keyId === null || input.newPinHash !== undefined ? await lockShopFloor(sql) : null;
      const taken = await sql.query('SELECT 1 FROM gui_sessions WHERE hash = $1', [input.hash]);
      if (taken.rowCount !== 0) throw sessionTokenInUse();
      const key = input.keyId === null ? await ensureGuiKey(sql, floor!, now) : checkSessionKey(await findKey(sql, input.keyId), now);
      await sql.query('DELETE FROM gui_sessions WHERE expires_at <= $1', [now]);
      const session: GuiSession = {
        id: newId('ses', now.getTime()),
        hash: input.hash,
        keyId: key.id,
        via: input.via,
        createdAt: now.toISOString(),
        expiresAt: input.expiresAt.toISOString(),
      };
      await sql.query('INSERT INTO gui_sessions (id, hash, key_id, via, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)', [
        session.id,
        session.hash,
        session.keyId,
        session.via,
        now,
        input.expiresAt,
      ]);
      if (input.newPinHash !== undefined) await sql.query('UPDATE shop_floor SET pin_hash = $1', [input.newPinHash]);
      return { session, key };
    });
  }

  async liveSession(hash: string, now: Date): Promise<LiveSession | undefined> {
    const { rows } = await this.db.query<SessionRow & { key: Record<string, unknown> }>(
      `SELECT s.*, to_jsonb(k) AS key FROM gui_sessions s JOIN api_keys k ON k.id = s.key_id WHERE s.hash = $1 AND s.expires_at > $2`,
      [hash, now],
    );
    if (!rows[0]) return undefined;
    const key = keyOf(keyRowFromJson(rows[0].key));
    return isKeyActive(key, now) ? { session: sessionOf(rows[0]), key } : undefined;
  }

  async endSession(id: string): Promise<boolean> {
    return (await this.db.query('DELETE FROM gui_sessions WHERE id = $1', [id])).rowCount === 1;
  }

  async endSessionsOf(keyId: string): Promise<number> {
    return (await this.db.query('DELETE FROM gui_sessions WHERE key_id = $1', [keyId])).rowCount ?? 0;
  }

  addGarment(garment: CatalogueGarment): Promise<CatalogueGarment> {
    return this.db.transaction(async (sql) => {
      const added = withoutEmptyCodes(structuredClone(garment));
      await lockCatalogue(sql);
      if ((await sql.query('SELECT 1 FROM garments WHERE id = $1', [added.id])).rowCount !== 0) throw garmentIdTaken(added.id);
      const codes = newCodes(added);
      checkCodesUnique(await holdersOf(sql, codes), added.id, codes);
      await sql.query('INSERT INTO garments (id, record) VALUES ($1, $2)', [added.id, added]);
      return added;
    });
  }

  updateGarment(id: string, change: (garment: CatalogueGarment) => void): Promise<{ before: CatalogueGarment; after: CatalogueGarment }> {
    return this.db.transaction(async (sql) => {
      await lockCatalogue(sql);
      const { rows } = await sql.query<{ record: CatalogueGarment }>('SELECT record FROM garments WHERE id = $1', [id]);
      const before = rows[0]?.record;
      if (!before) throw garmentNotFound(id);
      const after = structuredClone(before);
      change(after);
      checkChangedGarment(after, before);
      const codes = newCodes(after, before);
      checkCodesUnique(await holdersOf(sql, codes), id, codes);
      await sql.query('UPDATE garments SET record = $2 WHERE id = $1', [id, after]);
      return { before, after };
    });
  }

  async removeGarment(id: string): Promise<CatalogueGarment> {
    const { rows } = await this.db.query<{ record: CatalogueGarment }>('DELETE FROM garments WHERE id = $1 RETURNING record', [id]);
    if (!rows[0]) throw garmentNotFound(id);
    return rows[0].record;
  }

  async garments(): Promise<CatalogueGarment[]> {
    const { rows } = await this.db.query<{ record: CatalogueGarment }>('SELECT record FROM garments ORDER BY created_at DESC, id DESC');
    return rows.map((row) => row.record);
  }

  async garment(id: string): Promise<CatalogueGarment | undefined> {
    const { rows } = await this.db.query<{ record: CatalogueGarment }>('SELECT record FROM garments WHERE id = $1', [id]);
    return rows[0]?.record;
  }

  createShare(genId: string, hash: string, expiresAt: Date, now: Date): Promise<ShareLink> {
    return this.db.transaction(async (sql) => {
      await sql.query('DELETE FROM gui_shares WHERE expires_at <= $1', [now]);
      await sql.query(
        `INSERT INTO gui_shares (gen_id, hash, expires_at) VALUES ($1, $2, $3)
         ON CONFLICT (gen_id) DO UPDATE SET hash = EXCLUDED.hash, expires_at = EXCLUDED.expires_at`,
        [genId, hash, expiresAt],
      );
      return { genId, hash, expiresAt: expiresAt.toISOString() };
    });
  }

  async share(genId: string, now: Date): Promise<ShareLink | undefined> {
    const { rows } = await this.db.query<ShareRow>('SELECT * FROM gui_shares WHERE gen_id = $1 AND expires_at > $2', [genId, now]);
    return rows[0] && { genId: rows[0].gen_id, hash: rows[0].hash, expiresAt: rows[0].expires_at.toISOString() };
  }

  async removeShare(genId: string): Promise<boolean> {
    return (await this.db.query('DELETE FROM gui_shares WHERE gen_id = $1', [genId])).rowCount === 1;
  }

  async close(): Promise<void> {
    if (this.owned) await this.db.close();
  }

  /** The secrets, the previous one first (as lowdb keeps them). */
  private async secrets(): Promise<WebhookSecret[]> {
    return secretsOf((await this.db.query<SecretRow>('SELECT * FROM webhook_secrets ORDER BY expires_at NULLS LAST')).rows);
  }
}

/** A state holding only the rows a feature's function decides on. */
function scratch(part: Partial<State>): State {
  return { ...emptyState(), ...part };
}

function keyOf(row: KeyRow): ApiKeyRecord {
  const record: ApiKeyRecord = {
    id: row.id,
    name: row.name,
    scope: row.scope,
    hash: row.hash,
    prefix: row.prefix,
    createdAt: row.created_at.toISOString(),
    lineageId: row.lineage_id,
  };
  if (row.revoked_at) record.revokedAt = row.revoked_at.toISOString();
  if (row.expires_at) record.expiresAt = row.expires_at.toISOString();
  if (row.rotated_to) record.rotatedTo = row.rotated_to;
  return record;
}

/** A key row read through to_jsonb: its times are strings there. */
function keyRowFromJson(json: Record<string, unknown>): KeyRow {
  const time = (value: unknown) => (typeof value === 'string' ? new Date(value) : null);
  return {
    ...(json as unknown as KeyRow),
    created_at: time(json.created_at)!,
    revoked_at: time(json.revoked_at),
    expires_at: time(json.expires_at),
  };
}

function sessionOf(row: SessionRow): GuiSession {
  return {
    id: row.id,
    hash: row.hash,
    keyId: row.key_id,
    via: row.via,
    createdAt: row.created_at.toISOString(),
    expiresAt: row.expires_at.toISOString(),
  };
}

async function findKey(sql: Sql, id: string): Promise<ApiKeyRecord | undefined> {
  const { rows } = await sql.query<KeyRow>('SELECT * FROM api_keys WHERE id = $1', [id]);
  return rows[0] && keyOf(rows[0]);
}

async function insertKey(sql: Sql, record: ApiKeyRecord): Promise<void> {
  await sql.query(
    `INSERT INTO api_keys (id, name, scope, hash, prefix, created_at, revoked_at, expires_at, rotated_to, lineage_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [
      record.id,
      record.name,
      record.scope,
      record.hash,
      record.prefix,
      record.createdAt,
      record.revokedAt ?? null,
      record.expiresAt ?? null,
      record.rotatedTo ?? null,
      record.lineageId,
    ],
  );
}

/** keys/'s createKey, written; a key given that is already stored is refused (409). */
async function insertNewKey(sql: Sql, name: string, scope: KeyScope, now: Date, key?: string): Promise<CreatedKey> {
  if (key !== undefined && (await sql.query('SELECT 1 FROM api_keys WHERE hash = $1', [hashKey(key)])).rowCount !== 0)
    throw keyAlreadyStored();
  const created = createKey(scratch({}), name, scope, now, key === undefined ? {} : { key });
  await insertKey(sql, created.record);
  return created;
}

async function lockShopFloor(sql: Sql): Promise<ShopFloorRow> {
  const { rows } = await sql.query<ShopFloorRow>('SELECT * FROM shop_floor FOR UPDATE');
  return rows[0]!;
}

/** The GUI's own admin key (the shop floor's row locked by the caller): made when missing, revoked or retiring. */
async function ensureGuiKey(sql: Sql, floor: ShopFloorRow, now: Date): Promise<ApiKeyRecord> {
  const existing = floor.gui_key_id === null ? undefined : await findKey(sql, floor.gui_key_id);
  if (guiKeyUsable(existing, now)) return existing;
  const { record } = await insertNewKey(sql, GUI_KEY_NAME, 'admin', now);
  await sql.query('UPDATE shop_floor SET gui_key_id = $1', [record.id]);
  floor.gui_key_id = record.id;
  return record;
}

function secretsOf(rows: SecretRow[]): WebhookSecret[] {
  return rows.map((row) => ({
    secret: row.secret,
    createdAt: row.created_at.toISOString(),
    ...(row.expires_at ? { expiresAt: row.expires_at.toISOString() } : {}),
  }));
}

/** The secrets, with writers of them held off until commit (readers go on): previous first, as lowdb keeps them. */
async function lockSecrets(sql: Sql): Promise<WebhookSecret[]> {
  await sql.query('LOCK TABLE webhook_secrets IN EXCLUSIVE MODE');
  return secretsOf((await sql.query<SecretRow>('SELECT * FROM webhook_secrets ORDER BY expires_at NULLS LAST')).rows);
}

/** Replaces the secrets with those a feature's function left (the table locked by the caller). */
async function writeSecrets(sql: Sql, secrets: readonly WebhookSecret[]): Promise<void> {
  await sql.query('DELETE FROM webhook_secrets');
  for (const secret of secrets)
    await sql.query('INSERT INTO webhook_secrets (secret, created_at, expires_at) VALUES ($1, $2, $3)', [
      secret.secret,
      secret.createdAt,
      secret.expiresAt ?? null,
    ]);
}

/**
 * Catalogue changes one at a time (readers go on): a SKU or barcode is checked and written with no other change in
 * between, so the refusal names the garment that has it; the unique indexes hold it regardless.
 */
async function lockCatalogue(sql: Sql): Promise<void> {
  await sql.query('LOCK TABLE garments IN SHARE ROW EXCLUSIVE MODE');
}

/**
 * The garments that have a SKU or barcode, for checkCodesUnique (JavaScript's case folding, as on one PC: the
 * database's lower() folds only ASCII under the C locale). Only the fields it reads, under the catalogue's lock.
 */
async function holdersOf(sql: Sql, codes: { sku?: string; barcode?: string }): Promise<CodeHolder[]> {
  if (!codes.sku && !codes.barcode) return [];
  const { rows } = await sql.query<{ id: string; name: string; sku: string | null; barcode: string | null }>(
    `SELECT id, record ->> 'name' AS name, sku, barcode FROM garments WHERE sku IS NOT NULL OR barcode IS NOT NULL ORDER BY created_at, id`,
  );
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    ...(row.sku ? { sku: row.sku } : {}),
    ...(row.barcode ? { barcode: row.barcode } : {}),
  }));
}
