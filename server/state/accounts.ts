/**
 * The account store: who may act on the appliance and the shop's own records, next to the credits and try-ons of
 * the state gateway (types.ts). API keys (only their hashes; rotation with a grace period, one successor per key,
 * one lineage), the installation id (set once), webhook signing secrets (rotation keeps the old one signing for
 * an overlap), the shop floor's GUI (sessions, the staff PIN and its throttle, the GUI's own admin key, the shop's
 * choices), the garment catalogue (SKU and barcode unique, case-insensitively) and take-home links.
 *
 * Two stores answer it, as for the gateway: `LowdbAccounts` (one PC: the features' functions inside one
 * `Store.mutate`) and `PgAccounts` (PostgreSQL: one transaction each, migration 4 holding the invariants).
 * `test/unit/account-contract.test.ts` runs one suite against both.
 *
 * Each operation is atomic and takes the time it happens at where time matters. A refusal is the `ApiError` the
 * lowdb code gives (404 `not_found`, 409 `conflict`, 422 `validation_failed`, 401/403 for a session's key) and
 * changes nothing. Secrets never reach the store: keys, session tokens and take-home links arrive as hashes (a
 * new key's secret is made here and returned once), so the GUI's cookie, CSRF and link formats stay in `gui/`.
 * What is returned is a copy: changing it changes nothing stored.
 */
import { ApiError, validationError, type FieldError } from '../kernel/errors.ts';
import { hashKey, isKeyActive, isWellFormedKey } from '../keys/api-keys.ts';
import type { ApiKeyRecord, CatalogueGarment, GuiSession, KeyScope, WebhookSecret } from '../store/schema.ts';
import type { SecretView } from '../webhooks/secrets.ts';

/** The installation, which vouchers are bound to. */
export interface Installation {
  id: string;
  createdAt: string;
}

/** A new key: its record and the key itself, which is never stored. */
export interface CreatedKey {
  record: ApiKeyRecord;
  key: string;
}

/** A rotation: the successor (with its key) and the previous key as it now is. */
export interface RotatedKey extends CreatedKey {
  previous: ApiKeyRecord;
}

/** Wrong PINs since the last right one, and until when sign-in by PIN waits (ISO). */
export interface PinThrottleState {
  failures: number;
  blockedUntil: string | null;
}

/** What the shop floor's GUI keeps besides sessions and the catalogue. */
export interface ShopFloor {
  /** scrypt hash of the staff PIN; null until one is set. */
  pinHash: string | null;
  /** The admin key that PIN and shell sessions act as; null until first needed. */
  guiKeyId: string | null;
  eraseOnNewCustomer: boolean;
  autoCapture: boolean;
  /** null: no wrong PIN since the last right one. */
  pinThrottle: PinThrottleState | null;
}

/** The shop's choices for the shop floor; each one given is set. */
export interface ShopFloorChoices {
  eraseOnNewCustomer?: boolean;
  autoCapture?: boolean;
}

/** A GUI sign-in to record. */
export interface NewSession {
  /** SHA-256 of the cookie token, hex. */
  hash: string;
  via: GuiSession['via'];
  /** The admin key signed in with; null for the GUI's own key (PIN and shell), made when missing or retired. */
  keyId: string | null;
  expiresAt: Date;
  /** A PIN chosen at this sign-in (key sign-ins only), set in the same change. */
  newPinHash?: string;
}

/** A session and the key it acts as, both live. */
export interface LiveSession {
  session: GuiSession;
  key: ApiKeyRecord;
}

/** A take-home link: the SHA-256 (base64) of its secret, one per try-on. */
export interface ShareLink {
  genId: string;
  hash: string;
  expiresAt: string;
}

export interface AccountStore {
  /** The installation, or null before the first start. */
  installation(): Promise<Installation | null>;
  /**
   * Sets the installation id and stores `firstAdminKey` as the first admin key, once ever: a later or concurrent
   * call changes nothing and returns the installation that won (`created: false`). The trial credits are the
   * gateway's `grantTrial`, itself once ever, so a caller grants it after this whatever `created` says.
   */
  install(now: Date, firstAdminKey: string): Promise<{ installation: Installation; created: boolean }>;

  /** Makes a key (or stores the one given; 409 if it is already stored). */
  createKey(name: string, scope: KeyScope, now: Date, options?: { key?: string }): Promise<CreatedKey>;
  /** Every key ever made, oldest first, revoked ones too. */
  keys(): Promise<ApiKeyRecord[]>;
  key(id: string): Promise<ApiKeyRecord | undefined>;
  /** The key with this hash (`hashKey`), if it may authenticate at `now`. */
  activeKeyByHash(hash: string, now: Date): Promise<ApiKeyRecord | undefined>;
  /** Revokes a key at once (again: no change); 404 if unknown, 409 if no lasting admin key would remain. */
  revokeKey(id: string, now: Date): Promise<ApiKeyRecord>;
  /**
   * Replaces an active key with a new one of its lineage; the old one works for `graceSeconds` more. 404 if
   * unknown, 409 if revoked, expired or already rotated (a key has one successor, so concurrent rotations make one).
   */
  rotateKey(id: string, now: Date, graceSeconds: number): Promise<RotatedKey>;

  /** The current webhook signing secret, made now if there is none (once, however many ask at once). */
  webhookSecret(now: Date): Promise<WebhookSecret>;
  /** The current secret (made if there is none) and a previous one while it still signs. */
  webhookSecretView(now: Date): Promise<SecretView>;
  /** The secrets that sign at `now`, the current one first; none before one is made. */
  signingSecrets(now: Date): Promise<string[]>;
  /** A new current secret; the old one signs until now + `overlapHours`, and an older one stops now. */
  rotateWebhookSecret(now: Date, overlapHours: number): Promise<SecretView>;

  shopFloor(): Promise<ShopFloor>;
  setPin(hash: string): Promise<void>;
  setChoices(choices: ShopFloorChoices): Promise<void>;
  /** Counts a wrong PIN; `waitMs(failures)` says how long sign-in by PIN then waits (the GUI's policy). */
  pinFailed(now: Date, waitMs: (failures: number) => number): Promise<PinThrottleState>;
  /** Clears the count after a right PIN or an admin key sign-in. */
  pinSucceeded(): Promise<void>;

  /**
   * Records a sign-in, pruning expired sessions. The key must be a live admin key: 401 `unauthorized` if it is
   * unknown, revoked or expired, 403 `forbidden` if it is a standard key. 409 if the token hash is in use.
   */
  startSession(session: NewSession, now: Date): Promise<LiveSession>;
  /** The session with this token hash and its key, while both are live at `now`. */
  liveSession(hash: string, now: Date): Promise<LiveSession | undefined>;
  /** Ends one session; false if there was none. */
  endSession(id: string): Promise<boolean>;
  /** Ends every session acting as a key; how many ended. */
  endSessionsOf(keyId: string): Promise<number>;

  /** Adds a garment; 422 if another garment has its SKU or barcode (case-insensitively), 409 if its id is taken. */
  addGarment(garment: CatalogueGarment): Promise<CatalogueGarment>;
  /**
   * Changes a garment: `change` edits a copy (and may throw to refuse), which replaces it if its SKU and barcode
   * stay unique (422 otherwise). 404 if there is no such garment. Returns the garment before and after. `change`
   * must be synchronous and depend on nothing but the garment: a store may run it again (a retried transaction).
   */
  updateGarment(id: string, change: (garment: CatalogueGarment) => void): Promise<{ before: CatalogueGarment; after: CatalogueGarment }>;
  /** Removes a garment and returns it (its photos are the caller's); 404 if there is none. */
  removeGarment(id: string): Promise<CatalogueGarment>;
  /** The catalogue, newest first. */
  garments(): Promise<CatalogueGarment[]>;
  garment(id: string): Promise<CatalogueGarment | undefined>;

  /** Records the link of a try-on, replacing an older one of it; expired links are forgotten. */
  createShare(genId: string, hash: string, expiresAt: Date, now: Date): Promise<ShareLink>;
  /** The link of a try-on while it is valid at `now`. */
  share(genId: string, now: Date): Promise<ShareLink | undefined>;
  /** Forgets a try-on's link (erasure); false if there was none. */
  removeShare(genId: string): Promise<boolean>;

  close(): Promise<void>;
}

/*
 * The rules both stores share, the GUI's records' among them: server/gui/ (a floor above) keeps what the browser
 * sees (cookies, CSRF, link formats, the catalogue's fields) and leaves these rules to the stores.
 */

/** The name of the GUI's own admin key, which PIN and shell sessions act as. */
export const GUI_KEY_NAME = 'shop-floor GUI (PIN and app sign-in)';

/** The name of the admin key made at the first start (as services.ts's firstStart). */
export const FIRST_KEY_NAME = 'first admin key';

/** Whether the GUI's key may go on acting for PIN and shell sessions: live, and not retiring after a rotation. */
export function guiKeyUsable(record: ApiKeyRecord | undefined, now: Date): record is ApiKeyRecord {
  return record !== undefined && isKeyActive(record, now) && record.expiresAt === undefined;
}

/** Refuses a key a session cannot act as (as POST /gui/api/session does): 401 if not live, 403 if not admin. */
export function checkSessionKey(record: ApiKeyRecord | undefined, now: Date): ApiKeyRecord {
  if (!record || !isKeyActive(record, now)) throw new ApiError('unauthorized', 'That admin key is unknown, revoked or expired.');
  if (record.scope !== 'admin') throw new ApiError('forbidden', 'Staff sign in with an admin key; this one is a standard key.');
  return record;
}

/** A session must end after it starts (a programming error otherwise, not a client's). */
export function checkSessionTimes(expiresAt: Date, now: Date): void {
  if (expiresAt.getTime() <= now.getTime()) throw new Error('a GUI session must end after it starts');
}

export function sessionTokenInUse(): ApiError {
  return new ApiError('conflict', 'A GUI session with this token already exists.');
}

/** A key that already has its successor: rotating it again would fork its lineage. */
export function alreadyRotated(record: ApiKeyRecord): ApiError {
  return new ApiError('conflict', `The API key ${record.id} was already rotated to ${record.rotatedTo}; rotate that one.`);
}

export function keyAlreadyStored(): ApiError {
  return new ApiError('conflict', 'That API key is already stored.');
}

/** A garment that is not in the catalogue (gui/catalogue.ts's findGarment answers it too). */
export function garmentNotFound(id: string): ApiError {
  return new ApiError('not_found', `There is no garment ${id} in the catalogue.`);
}

export function garmentIdTaken(id: string): ApiError {
  return new ApiError('conflict', `There is already a garment ${id} in the catalogue.`);
}

/** An empty SKU or barcode is none (the GUI's "" removes it). */
export function withoutEmptyCodes(garment: CatalogueGarment): CatalogueGarment {
  if (garment.sku === '') delete garment.sku;
  if (garment.barcode === '') delete garment.barcode;
  return garment;
}

/** The SKU and barcode `garment` newly has (all of them when `before` is undefined): those to check for uniqueness. */
export function newCodes(garment: CatalogueGarment, before?: CatalogueGarment): { sku?: string; barcode?: string } {
  const codes: { sku?: string; barcode?: string } = {};
  for (const field of ['sku', 'barcode'] as const) {
    const code = garment[field];
    if (code && code.toLowerCase() !== before?.[field]?.toLowerCase()) codes[field] = code;
  }
  return codes;
}

/** What checkCodesUnique reads of a garment. */
export type CodeHolder = Pick<CatalogueGarment, 'id' | 'name' | 'sku' | 'barcode'>;

/**
 * Refuses (422) a SKU or barcode that another garment has, case-insensitively: `others` are the candidates (any
 * garment; `id`'s own is skipped).
 */
export function checkCodesUnique(others: Iterable<CodeHolder>, id: string, codes: { sku?: string; barcode?: string }): void {
  const errors: FieldError[] = [];
  const candidates = [...others];
  for (const field of ['sku', 'barcode'] as const) {
    const code = codes[field];
    if (!code) continue;
    const other = candidates.find((garment) => garment.id !== id && garment[field]?.toLowerCase() === code.toLowerCase());
    if (other) errors.push({ field, message: `is already that of “${other.name}”` });
  }
  if (errors.length > 0) throw validationError(errors);
}

/** A garment as `updateGarment`'s change left it: the same garment, its empty codes removed. */
export function checkChangedGarment(after: CatalogueGarment, before: CatalogueGarment): CatalogueGarment {
  if (after.id !== before.id || after.createdAt !== before.createdAt) throw new Error('a garment change cannot change its id or createdAt');
  return withoutEmptyCodes(after);
}

/** The active key a presented bearer secret names, if any: a malformed secret is never looked up. */
export async function activeKeyFor(accounts: AccountStore, secret: string, now: Date): Promise<ApiKeyRecord | undefined> {
  return isWellFormedKey(secret) ? accounts.activeKeyByHash(hashKey(secret), now) : undefined;
}
