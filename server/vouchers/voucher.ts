/**
 * Vouchers: credit packs signed offline with Ed25519 (contract 2.8).
 *
 * Text format, copy-pasteable and URL-safe:
 *
 *     frv1.<keyId>.<base64url(payload JSON)>.<base64url(signature)>
 *
 * The signature covers exactly the payload bytes as encoded. `keyId` names
 * the issuer key (the first 8 bytes of the SHA-256 of its DER public key) so
 * that a voucher from an untrusted issuer can be told from a tampered one; it
 * is a hint only, since the signature must still verify under that key.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { newId } from '../kernel/ids.ts';

const PREFIX = 'frv1';
/** Longer texts are refused before anything is decoded. */
export const MAX_VOUCHER_LENGTH = 2048;
export const MAX_VOUCHER_CREDITS = 1_000_000;
const ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
const INSTALL_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
const BASE64URL = /^[A-Za-z0-9_-]+$/;
const FIELDS = new Set(['id', 'credits', 'issuedAt', 'expiresAt', 'installId']);

/** What a voucher grants; signed by the issuer. */
export interface VoucherPayload {
  id: string;
  credits: number;
  issuedAt: string;
  expiresAt?: string;
  /** The installation (`state.installation.id`) the voucher is bound to; any installation when absent. */
  installId?: string;
}

export type VoucherProblem = 'malformed' | 'untrusted' | 'bad_signature' | 'invalid_payload' | 'expired' | 'other_installation';

/** Why a voucher was refused; `message` says it in words. */
export class VoucherError extends Error {
  readonly problem: VoucherProblem;

  constructor(problem: VoucherProblem, message: string) {
    super(message);
    this.name = 'VoucherError';
    this.problem = problem;
  }
}

/** An issuer public key that this appliance trusts. */
export interface TrustedIssuer {
  keyId: string;
  key: KeyObject;
}

/** The key id of an Ed25519 public key: base64url of the first 8 bytes of SHA-256 over its DER SPKI. */
export function keyIdOf(publicKey: KeyObject): string {
  const der = publicKey.export({ format: 'der', type: 'spki' });
  return createHash('sha256').update(der).digest().subarray(0, 8).toString('base64url');
}

/** Parses trusted issuer keys (base64 of the DER SPKI, as `vouchers keygen` prints); throws naming the bad one. */
export function trustedIssuers(keys: readonly string[]): TrustedIssuer[] {
  return keys.map((text, i) => {
    let key: KeyObject;
    try {
      if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text)) throw new Error('not base64');
      key = createPublicKey({ key: Buffer.from(text, 'base64'), format: 'der', type: 'spki' });
    } catch {
      throw new Error(`trusted issuer key ${i + 1} is not a base64 DER public key (see "fittingroom vouchers keygen")`);
    }
    if (key.asymmetricKeyType !== 'ed25519') throw new Error(`trusted issuer key ${i + 1} is not an Ed25519 key`);
    return { keyId: keyIdOf(key), key };
  });
}

/** A new issuer key pair: the private key as PKCS#8 PEM, the public key as base64 of its DER SPKI. */
export function generateIssuerKey(): { privateKeyPem: string; publicKey: string; keyId: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    privateKeyPem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    publicKey: publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
    keyId: keyIdOf(publicKey),
  };
}

/** What a new voucher grants; id and issuedAt are filled in when absent. */
export interface MintOptions {
  credits: number;
  id?: string;
  issuedAt?: Date;
  expiresAt?: Date;
  installId?: string;
}

/** Signs a voucher with an issuer's private key (PKCS#8 PEM or a KeyObject). */
export function mintVoucher(privateKey: string | KeyObject, options: MintOptions): string {
  const key = typeof privateKey === 'string' ? createPrivateKey(privateKey) : privateKey;
  if (key.asymmetricKeyType !== 'ed25519') throw new Error('the issuer key is not an Ed25519 private key');
  const issuedAt = options.issuedAt ?? new Date();
  const payload: VoucherPayload = {
    id: options.id ?? newId('vch', issuedAt.getTime()),
    credits: options.credits,
    issuedAt: issuedAt.toISOString(),
  };
  if (options.expiresAt) payload.expiresAt = options.expiresAt.toISOString();
  if (options.installId !== undefined) payload.installId = options.installId;
  const problem = payloadProblem({ ...payload });
  if (problem) throw new Error(`cannot mint this voucher: ${problem}`);
  const bytes = Buffer.from(JSON.stringify(payload), 'utf8');
  const signature = sign(null, bytes, key);
  return [PREFIX, keyIdOf(createPublicKey(key)), bytes.toString('base64url'), signature.toString('base64url')].join('.');
}

/** The parts of a voucher text, decoded but not verified. */
export interface VoucherParts {
  keyId: string;
  payloadBytes: Buffer;
  signature: Buffer;
}

function decodeBase64url(text: string, what: string): Buffer {
  const bytes = Buffer.from(text, 'base64url');
  // Buffer.from skips characters it does not know; only canonical text is accepted.
  if (!BASE64URL.test(text) || bytes.toString('base64url') !== text) {
    throw new VoucherError('malformed', `the voucher's ${what} is not base64url`);
  }
  return bytes;
}

/** Splits a voucher text into its parts; throws VoucherError('malformed') when it is not one. */
export function parseVoucher(text: string): VoucherParts {
  if (text.length > MAX_VOUCHER_LENGTH) {
    throw new VoucherError('malformed', `is not a voucher (longer than ${MAX_VOUCHER_LENGTH} characters)`);
  }
  const parts = text.trim().split('.');
  if (parts.length !== 4 || parts[0] !== PREFIX) {
    throw new VoucherError('malformed', `is not a voucher (expected ${PREFIX}.<key>.<payload>.<signature>)`);
  }
  const [, keyId, payload, signature] = parts as [string, string, string, string];
  if (!/^[A-Za-z0-9_-]{11}$/.test(keyId)) throw new VoucherError('malformed', "the voucher's issuer key id is malformed");
  const parsed = {
    keyId,
    payloadBytes: decodeBase64url(payload, 'payload'),
    signature: decodeBase64url(signature, 'signature'),
  };
  if (parsed.signature.length !== 64) throw new VoucherError('malformed', "the voucher's signature has the wrong length");
  return parsed;
}

function isTimestamp(value: unknown): value is string {
  return (
    typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/.test(value) && Number.isFinite(Date.parse(value))
  );
}

/** What is wrong with a payload's fields, or null. */
function payloadProblem(payload: Record<string, unknown>): string | null {
  const unknown = Object.keys(payload).filter((name) => !FIELDS.has(name));
  if (unknown.length > 0) return `unknown field ${unknown[0]}`;
  if (typeof payload.id !== 'string' || !ID_PATTERN.test(payload.id)) return 'the id must be 1 to 64 letters, digits, _ or -';
  const credits = payload.credits;
  if (typeof credits !== 'number' || !Number.isInteger(credits) || credits < 1 || credits > MAX_VOUCHER_CREDITS) {
    return `credits must be an integer from 1 to ${MAX_VOUCHER_CREDITS}`;
  }
  if (!isTimestamp(payload.issuedAt)) return 'issuedAt must be an ISO 8601 UTC timestamp';
  if (payload.expiresAt !== undefined && !isTimestamp(payload.expiresAt)) return 'expiresAt must be an ISO 8601 UTC timestamp';
  if (payload.installId !== undefined && (typeof payload.installId !== 'string' || !INSTALL_ID_PATTERN.test(payload.installId))) {
    return 'installId must be 1 to 64 letters, digits, _ or -';
  }
  return null;
}

/** What a voucher is checked against. */
export interface VerifyContext {
  issuers: readonly TrustedIssuer[];
  now: Date;
  /** This appliance's installation id. */
  installId: string;
}

/**
 * Checks a voucher offline: format, a signature by a trusted issuer over the
 * payload bytes, the payload's fields, expiry and installation. Returns the
 * payload, or throws a VoucherError that says why not.
 */
export function verifyVoucher(text: string, context: VerifyContext): VoucherPayload {
  const parts = parseVoucher(text);
  if (context.issuers.length === 0) {
    throw new VoucherError('untrusted', 'this appliance trusts no voucher issuer (start it with --trusted-issuers)');
  }
  const issuer = context.issuers.find((candidate) => candidate.keyId === parts.keyId);
  if (!issuer) throw new VoucherError('untrusted', `is signed by issuer key ${parts.keyId}, which this appliance does not trust`);
  if (!verify(null, parts.payloadBytes, issuer.key, parts.signature)) {
    throw new VoucherError('bad_signature', 'the signature does not match the voucher: it was altered or damaged');
  }
  let payload: unknown;
  try {
    payload = JSON.parse(parts.payloadBytes.toString('utf8'));
  } catch {
    throw new VoucherError('invalid_payload', 'the signed payload is not JSON');
  }
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) {
    throw new VoucherError('invalid_payload', 'the signed payload is not a JSON object');
  }
  const problem = payloadProblem(payload as Record<string, unknown>);
  if (problem) throw new VoucherError('invalid_payload', `the signed payload is invalid: ${problem}`);
  const voucher = payload as VoucherPayload;
  if (voucher.expiresAt !== undefined && context.now.getTime() >= Date.parse(voucher.expiresAt)) {
    throw new VoucherError('expired', `the voucher expired at ${voucher.expiresAt}`);
  }
  if (voucher.installId !== undefined && voucher.installId !== context.installId) {
    throw new VoucherError(
      'other_installation',
      `the voucher is bound to installation ${voucher.installId}; this installation is ${context.installId}`,
    );
  }
  return voucher;
}
