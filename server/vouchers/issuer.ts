/** The issuer's side of vouchers, used by the command-line tool: key files and mint options. */
import { createPrivateKey, type KeyObject } from 'node:crypto';
import { chmod, open, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { parseInstant } from '../credits/usage.ts';
import { fsyncDir } from '../kernel/durable-fs.ts';
import { MAX_VOUCHER_CREDITS } from './voucher.ts';

/** Writes a private key file (mode 0600), durably; refuses to overwrite one, since a lost issuer key cannot be recovered. */
export async function writeIssuerKey(path: string, privateKeyPem: string): Promise<void> {
  let handle;
  try {
    handle = await open(path, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST')
      throw new Error(`${path} exists; choose another --out (an issuer key is never overwritten)`);
    throw error;
  }
  try {
    await handle.writeFile(privateKeyPem);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await chmod(path, 0o600);
  await fsyncDir(dirname(path));
}

/** Reads an issuer's Ed25519 private key (PKCS#8 PEM). */
export async function readIssuerKey(path: string): Promise<KeyObject> {
  const text = await readFile(path, 'utf8');
  let key: KeyObject;
  try {
    key = createPrivateKey(text);
  } catch {
    throw new Error(`${path} is not a PEM private key (make one with "fittingroom vouchers keygen")`);
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new Error(`${path} is not an Ed25519 key`);
  return key;
}

/** Parses --credits: an integer from 1 to 1,000,000. */
export function parseCredits(text: string): number {
  const credits = /^[0-9]{1,7}$/.test(text) ? Number(text) : Number.NaN;
  if (!(credits >= 1 && credits <= MAX_VOUCHER_CREDITS))
    throw new Error(`--credits must be an integer from 1 to ${MAX_VOUCHER_CREDITS}, got "${text}"`);
  return credits;
}

/**
 * Parses --expires: a date (the voucher is valid through that UTC day) or an
 * ISO 8601 date-time with a zone. It must lie in the future.
 */
export function parseExpiry(text: string, now: Date): Date {
  const instant = parseInstant(text);
  if (!instant) throw new Error(`--expires must be a date (2027-01-31) or an ISO 8601 date-time, got "${text}"`);
  const expiresAt = /^\d{4}-\d{2}-\d{2}$/.test(text) ? new Date(instant.getTime() + 86_400_000) : instant;
  if (expiresAt.getTime() <= now.getTime()) throw new Error(`--expires ${text} is already past`);
  return expiresAt;
}
