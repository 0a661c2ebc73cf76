/**
 * The shapes of the GUI's private routes (/gui/api), shared with renderer/
 * as type-only imports so that the two cannot disagree.
 */
import type { CatalogueGarment } from '../store/schema.ts';

/** A catalogue garment as the GUI sees it. */
export interface GarmentView {
  id: string;
  name: string;
  category: CatalogueGarment['category'];
  sizes: string[];
  sku: string | null;
  barcode: string | null;
  /** The photo try-ons use. */
  imageUrl: string;
  /** Every photo of the garment, the one try-ons use first (its `imageUrl`). */
  photoUrls: string[];
  createdAt: string;
}

/** PATCH /gui/api/garments/:id: the fields to change (a new photo too); "" clears the SKU or barcode. */
export interface GarmentChanges {
  name?: string;
  category?: CatalogueGarment['category'];
  sizes?: string[];
  sku?: string;
  barcode?: string;
  /** A new photo for try-ons, as base64 or a data URL (it replaces the one they use). */
  image?: string;
  /** Makes photo n of `photoUrls` (1 or more) the one try-ons use; the one they used takes its place. */
  mainPhoto?: number;
}

/** GET /gui/api/session. */
export interface SessionInfo {
  signedIn: boolean;
  /** Whether a staff PIN has been set. */
  pinSet: boolean;
  /** Whether the appliance was started by the Electron shell (which can sign its window in). */
  shell: boolean;
  version: string;
  via?: 'key' | 'pin' | 'shell';
  keyId?: string;
  keyName?: string;
  expiresAt?: string;
  csrfToken?: string;
}

/** POST /gui/api/session. */
export type SignIn = { method: 'key'; key: string; newPin?: string } | { method: 'pin'; pin: string } | { method: 'shell'; token: string };

/** GET /gui/api/settings. */
export interface GuiSettings {
  version: string;
  retentionDays: number;
  eraseInputsWhenDone: boolean;
  pinSet: boolean;
  sessionKeyId: string;
  guiKeyId: string | null;
  /** "New customer" erases the previous customer's photos (their try-ons' images), not only the screen. */
  eraseOnNewCustomer: boolean;
  /** The camera takes the photo by itself, after its 3-2-1, once the framing guide has said OK twice running. */
  autoCapture: boolean;
}

/** PUT /gui/api/settings: the shop's choices (admin only); each is optional, at least one is given. */
export interface GuiChoices {
  eraseOnNewCustomer?: boolean;
  autoCapture?: boolean;
}

/** What the framing guide tells the person in front of the camera (left and right are the person's own). */
export type FramingAdviceCode = 'no-person' | 'several-people' | 'step-back' | 'come-closer' | 'move-left' | 'move-right' | 'ok';

/** POST /gui/api/framing. */
export interface FramingAdvice {
  advice: FramingAdviceCode;
  /** The advice in plain words, for the customer and staff. */
  message: string;
  /** The body's landmarks' bounds in the frame as sent (not mirrored), 0..1. */
  box?: { x: number; y: number; width: number; height: number };
}
