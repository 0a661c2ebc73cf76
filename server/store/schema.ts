/**
 * The shape of the appliance's state (one JSON document, written by db.ts).
 * Images never live here: records point at files under the data directory.
 */
import type { Fit, GarmentCategory, GenerationErrorCode, ImageFormat } from '../kernel/vocabulary.ts';

export type { Fit };

export const SCHEMA_VERSION = 4;

export type KeyScope = 'admin' | 'standard';

/** An API key as stored: only its hash, never the key itself. */
export interface ApiKeyRecord {
  id: string;
  name: string;
  scope: KeyScope;
  /** SHA-256 of the whole key, hex. */
  hash: string;
  /** The first characters of the key, for people to recognise it. */
  prefix: string;
  createdAt: string;
  revokedAt?: string;
  /** Set on a key that was rotated: it keeps working until then. */
  expiresAt?: string;
  rotatedTo?: string;
  /** Shared by a key and the keys rotated from it: idempotency keys are scoped to it. */
  lineageId: string;
}

export type LedgerEntryType = 'trial' | 'redeem' | 'reserve' | 'capture' | 'release' | 'expire' | 'adjust';
export type CreditLot = 'trial' | 'paid';

/** One append-only ledger entry; balances are derived from these alone. */
export interface LedgerEntry {
  id: string;
  seq: number;
  type: LedgerEntryType;
  /** Credits moved; positive except for a negative `adjust`. */
  amount: number;
  lot: CreditLot;
  at: string;
  genId?: string;
  /** On `trial` entries: when those credits expire. */
  expiresAt?: string;
  note?: string;
}

export type GenerationStatus = 'pending' | 'complete' | 'failed' | 'canceled';
/** The persisted part of a pending generation's progress. */
export type PersistedStage = 'queued' | 'running';

/** An image file under the data directory. */
export interface StoredImage {
  /** Relative to the data directory. */
  file: string;
  format: ImageFormat;
  width: number;
  height: number;
}

/** The request a generation was submitted with, minus the image bytes. */
export interface GenerationParams {
  size: string;
  personSize: string;
  fit: Fit;
  occasion?: string;
  styling: string[];
  categories: GarmentCategory[];
  seed?: number;
  outputFormat: ImageFormat;
  webhookUrl?: string;
}

export interface GenerationRecord {
  id: string;
  keyId: string;
  engine: string;
  status: GenerationStatus;
  stage: PersistedStage;
  params: GenerationParams;
  inputs: { selfie: StoredImage; items: StoredImage[] } | null;
  result: StoredImage | null;
  attempts: number;
  credit: 'reserved' | 'captured' | 'released';
  createdAt: string;
  startedAt?: string;
  completedAt?: string;
  expiresAt: string;
  error?: { code: GenerationErrorCode; message: string };
  erased: boolean;
  /** With a webhook: the absolute status URL given at submit, for the webhook body. */
  statusUrl?: string;
  /** The webhook event written when the generation became terminal. */
  webhookEventId?: string;
}

/** A remembered reply to a request that carried an Idempotency-Key. */
export interface IdempotencyRecord {
  scope: string;
  key: string;
  fingerprint: string;
  status: number;
  headers: Record<string, string>;
  body: string;
  createdAt: string;
  expiresAt: string;
}

/**
 * Balances carried over from ledger entries that were moved to the archive
 * (every reservation among them resolved), so that the state's ledger can
 * start after them.
 */
export interface LedgerBase {
  /** The seq of the last archived entry. */
  throughSeq: number;
  lots: Record<CreditLot, { available: number; reserved: number }>;
  spent: number;
  trialExpiresAt: string | null;
}

/** A webhook signing secret (`whsec_` + base64); during a rotation the old one has `expiresAt`. */
export interface WebhookSecret {
  secret: string;
  createdAt: string;
  expiresAt?: string;
}

export type WebhookEventType = 'try_on.completed' | 'try_on.failed' | 'try_on.canceled';

/** One delivery attempt of a webhook event. */
export interface WebhookAttempt {
  at: string;
  /** The receiver's HTTP status, when it answered. */
  status?: number;
  /** Why the attempt failed without a status (timeout, refused address, …). */
  error?: string;
  durationMs: number;
}

/** A webhook event in the outbox, written in the same mutation that makes its generation terminal. */
export interface WebhookEvent {
  /** `evt_…`, the `webhook-id` on every attempt. */
  id: string;
  genId: string;
  type: WebhookEventType;
  url: string;
  /** The exact body sent on every attempt. */
  body: string;
  createdAt: string;
  state: 'pending' | 'delivered' | 'failed' | 'gone';
  attempts: WebhookAttempt[];
  /** When the next attempt is due; null once the event is settled. */
  nextAttemptAt: string | null;
  /** The index in `attempts` where the current retry schedule began (a redelivery starts a new one). */
  scheduleFrom?: number;
}

/** A voucher that was redeemed (each id redeems once). */
export interface RedeemedVoucher {
  id: string;
  credits: number;
  redeemedAt: string;
  keyId: string;
}

/** A garment of the shop's catalogue, kept for the GUI; its photo is a file under `catalogue/`. */
export interface CatalogueGarment {
  id: string;
  name: string;
  /** `auto`: the engine decides from the photo at each try-on. */
  category: GarmentCategory;
  sizes: string[];
  /** The shop's own stock code and the barcode on the label, each unique in the catalogue (for search and scanners). */
  sku?: string;
  barcode?: string;
  /** The photo try-ons use. */
  image: StoredImage;
  /** More photos of the same garment (the back, a detail, worn by a model); any can become the one try-ons use. */
  morePhotos?: StoredImage[];
  createdAt: string;
}

/** A garment's photos, the one try-ons use first. */
export function photosOf(garment: CatalogueGarment): StoredImage[] {
  return [garment.image, ...(garment.morePhotos ?? [])];
}

/** A signed-in GUI session; only the SHA-256 of its cookie token is stored. */
export interface GuiSession {
  id: string;
  /** SHA-256 of the cookie token, hex. */
  hash: string;
  /** The key the session acts as: the admin key it signed in with, or the GUI's own key. */
  keyId: string;
  via: 'key' | 'pin' | 'shell';
  createdAt: string;
  expiresAt: string;
}

/** What the shop-floor GUI keeps. */
export interface GuiState {
  /** scrypt hash of the staff PIN (`scrypt$<salt b64>$<hash b64>`); null until one is set. */
  pinHash: string | null;
  /** The admin key that PIN and shell sessions act as; created on first need, its secret never kept. */
  keyId: string | null;
  sessions: Record<string, GuiSession>;
  garments: Record<string, CatalogueGarment>;
  /** The shop chose that "New customer" erases the previous customer's photos. */
  eraseOnNewCustomer?: boolean;
  /** The shop chose that the camera takes the photo by itself (after its countdown) once the guide says OK. */
  autoCapture?: boolean;
  /** Download links shown as QR codes, by try-on: the SHA-256 of the link's secret (see gui/share.ts). */
  shares?: Record<string, { hash: string; expiresAt: string }>;
  /** Wrong PINs since the last right one, and until when sign-in by PIN waits (ISO); absent means none. */
  pinThrottle?: { failures: number; blockedUntil: string | null };
}

export interface State {
  version: number;
  installation: { id: string; createdAt: string } | null;
  keys: ApiKeyRecord[];
  /** Entries after `ledgerBase.throughSeq`; older ones are in the archive. */
  ledger: LedgerEntry[];
  ledgerBase: LedgerBase | null;
  generations: Record<string, GenerationRecord>;
  /** Keyed by `${scope}\n${key}`. */
  idempotency: Record<string, IdempotencyRecord>;
  webhookSecrets: WebhookSecret[];
  /** The webhook outbox, keyed by event id. */
  webhookEvents: Record<string, WebhookEvent>;
  /** Redeemed vouchers, keyed by voucher id. */
  vouchers: Record<string, RedeemedVoucher>;
  gui: GuiState;
}

/** The GUI's part of a new state. */
export function emptyGuiState(): GuiState {
  return { pinHash: null, keyId: null, sessions: {}, garments: {} };
}

/** The state of a data directory that has never been started. */
export function emptyState(): State {
  return {
    version: SCHEMA_VERSION,
    installation: null,
    keys: [],
    ledger: [],
    ledgerBase: null,
    generations: {},
    idempotency: {},
    webhookSecrets: [],
    webhookEvents: {},
    vouchers: {},
    gui: emptyGuiState(),
  };
}

/**
 * Brings a state read from disk up to SCHEMA_VERSION. Each migration takes the
 * previous version's document; a newer document than this code knows is refused.
 */
export function migrate(raw: unknown): State {
  if (raw === null || typeof raw !== 'object') throw new Error('the state file is not a JSON object');
  const doc = raw as { version?: unknown };
  // v1 → v2: the ledger may start after archived entries.
  if (doc.version === 1) Object.assign(doc, { version: 2, ledgerBase: null });
  // v2 → v3: webhooks and vouchers.
  if (doc.version === 2) Object.assign(doc, { version: 3, webhookSecrets: [], webhookEvents: {}, vouchers: {} });
  // v3 → v4: the shop-floor GUI's PIN, sessions and catalogue.
  if (doc.version === 3) Object.assign(doc, { version: 4, gui: emptyGuiState() });
  if (doc.version === SCHEMA_VERSION) return raw as State;
  if (typeof doc.version === 'number' && doc.version > SCHEMA_VERSION) {
    throw new Error(`the state file has schema version ${doc.version}; this fittingroom understands up to ${SCHEMA_VERSION}`);
  }
  throw new Error(`the state file has an unknown schema version (${String(doc.version)})`);
}
