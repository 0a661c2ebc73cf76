/**
 * Taking the picture home: a link the customer's phone on the shop's network opens to download one try-on's
 * picture, with no key, shown at the counter as a QR code. The link names the try-on and carries a random
 * secret; only the secret's SHA-256 is kept (`state.gui.shares`). It lives an hour at most, and never past the
 * try-on's picture: an erased or expired picture is gone for the link too.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import qrcode from 'qrcode-generator';
import type { State } from '../store/schema.ts';

/** How long a link works: the customer scans it at the counter. */
export const SHARE_LIFETIME_MS = 60 * 60_000;

const TOKEN = /^(gen_[0-9A-Z]{26})\.([A-Za-z0-9_-]{43})$/;

function hashOf(secret: string): Buffer {
  return createHash('sha256').update(secret).digest();
}

/** Makes a link's token for a try-on whose picture lasts until `pictureExpiresAt`; forgets expired links. */
export function createShare(state: State, genId: string, pictureExpiresAt: string, now: Date): { token: string; expiresAt: string } {
  const shares = (state.gui.shares ??= {});
  for (const [id, share] of Object.entries(shares)) if (Date.parse(share.expiresAt) <= now.getTime()) delete shares[id];
  const secret = randomBytes(32).toString('base64url');
  const expiresAt = new Date(Math.min(now.getTime() + SHARE_LIFETIME_MS, Date.parse(pictureExpiresAt))).toISOString();
  shares[genId] = { hash: hashOf(secret).toString('base64'), expiresAt };
  return { token: `${genId}.${secret}`, expiresAt };
}

/** The try-on a token opens, or null (malformed, unknown, replaced by a newer link, or expired). */
export function sharedTryOn(state: State, token: string, now: Date): string | null {
  const match = TOKEN.exec(token);
  if (!match) return null;
  const [, genId, secret] = match as unknown as [string, string, string];
  const share = state.gui.shares?.[genId];
  if (!share || Date.parse(share.expiresAt) <= now.getTime()) return null;
  return timingSafeEqual(hashOf(secret), Buffer.from(share.hash, 'base64')) ? genId : null;
}

/** The QR code of a URL as an SVG document (black on white, with the quiet zone around it). */
export function qrSvg(url: string): string {
  const qr = qrcode(0, 'M');
  qr.addData(url);
  qr.make();
  return qr.createSvgTag({ cellSize: 4, margin: 4, scalable: true });
}
