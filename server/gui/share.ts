/**
 * Taking the picture home: a link the customer's phone on the shop's network opens to download one try-on's
 * picture, with no key, shown at the counter as a QR code. The link names the try-on and carries a random
 * secret; only the secret's SHA-256 is kept (AccountStore.createShare). It lives an hour at most, and never past the
 * try-on's picture: an erased or expired picture is gone for the link too.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import qrcode from 'qrcode-generator';
import type { AccountStore } from '../state/accounts.ts';

/** How long a link works: the customer scans it at the counter. */
export const SHARE_LIFETIME_MS = 60 * 60_000;

const TOKEN = /^(gen_[0-9A-Z]{26})\.([A-Za-z0-9_-]{43})$/;

function hashOf(secret: string): Buffer {
  return createHash('sha256').update(secret).digest();
}

/** A new link: its token (for the URL, never stored), the hash the store keeps, and when it stops working. */
export interface NewShareLink {
  token: string;
  hash: string;
  expiresAt: Date;
}

/** Makes a link for a try-on whose picture lasts until `pictureExpiresAt`: an hour at most, never past the picture. */
export function newShareLink(genId: string, pictureExpiresAt: string, now: Date): NewShareLink {
  const secret = randomBytes(32).toString('base64url');
  const expiresAt = new Date(Math.min(now.getTime() + SHARE_LIFETIME_MS, Date.parse(pictureExpiresAt)));
  return { token: `${genId}.${secret}`, hash: hashOf(secret).toString('base64'), expiresAt };
}

/** The try-on a token opens, or null (malformed, unknown, replaced by a newer link, or expired at `now`). */
export async function sharedTryOn(accounts: AccountStore, token: string, now: Date): Promise<string | null> {
  const match = TOKEN.exec(token);
  if (!match) return null;
  const [, genId, secret] = match as unknown as [string, string, string];
  const share = await accounts.share(genId, now);
  if (!share) return null;
  const stored = Buffer.from(share.hash, 'base64');
  const given = hashOf(secret);
  return stored.length === given.length && timingSafeEqual(given, stored) ? genId : null;
}

/** The QR code of a URL as an SVG document (black on white, with the quiet zone around it). */
export function qrSvg(url: string): string {
  const qr = qrcode(0, 'M');
  qr.addData(url);
  qr.make();
  return qr.createSvgTag({ cellSize: 4, margin: 4, scalable: true });
}
