/**
 * API keys: `fr_live_` + 32 base62 characters + a 6-character base62 CRC32
 * checksum (so typos and truncations are refused without a lookup). A key is
 * shown once; only its SHA-256 is stored.
 */
import { createHash, randomInt } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { ApiError } from '../kernel/errors.ts';
import { newId } from '../kernel/ids.ts';
import type { ApiKeyRecord, KeyScope, State } from '../store/schema.ts';

const PREFIX = 'fr_live_';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KEY_PATTERN = /^fr_live_[0-9A-Za-z]{32}[0-9A-Za-z]{6}$/;
const NAME_MAX = 100;

function base62(value: number, width: number): string {
  let out = '';
  for (let i = 0; i < width; i++) {
    out = BASE62[value % 62]! + out;
    value = Math.floor(value / 62);
  }
  return out;
}

function checksum(body: string): string {
  return base62(crc32(body), 6);
}

/** Makes a new random key. */
export function generateKey(): string {
  let random = '';
  for (let i = 0; i < 32; i++) random += BASE62[randomInt(62)];
  const body = PREFIX + random;
  return body + checksum(body);
}

/** Whether `key` has the right shape and checksum (no lookup). */
export function isWellFormedKey(key: string): boolean {
  return KEY_PATTERN.test(key) && checksum(key.slice(0, -6)) === key.slice(-6);
}

/** The stored form of a key. */
export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** A key as the API shows it (never the hash). */
export interface PublicKey {
  id: string;
  name: string;
  scope: KeyScope;
  prefix: string;
  createdAt: string;
  revokedAt?: string;
  expiresAt?: string;
}

/** The public view of a key record. */
export function publicKey(record: ApiKeyRecord): PublicKey {
  const view: PublicKey = { id: record.id, name: record.name, scope: record.scope, prefix: record.prefix, createdAt: record.createdAt };
  if (record.revokedAt) view.revokedAt = record.revokedAt;
  if (record.expiresAt) view.expiresAt = record.expiresAt;
  return view;
}

/** Checks a key's name and scope as given by a person or a request; 422 otherwise. */
export function checkKeyFields(name: unknown, scope: unknown): { name: string; scope: KeyScope } {
  const errors = [];
  if (typeof name !== 'string' || name.trim() === '' || name.length > NAME_MAX || /[\u0000-\u001f\u007f]/.test(name)) {
    errors.push({ field: 'name', message: `a name of 1 to ${NAME_MAX} printable characters is required` });
  }
  if (scope !== 'admin' && scope !== 'standard') errors.push({ field: 'scope', message: 'must be "admin" or "standard"' });
  if (errors.length > 0) throw new ApiError('validation_failed', errors.map((e) => `${e.field}: ${e.message}`).join('; '), { errors });
  return { name: (name as string).trim(), scope: scope as KeyScope };
}

/** Adds a key to the state; returns the record and the key, which is never stored. */
export function createKey(
  state: State,
  name: string,
  scope: KeyScope,
  now: Date,
  options: { lineageId?: string; key?: string } = {},
): { record: ApiKeyRecord; key: string } {
  const key = options.key ?? generateKey();
  const id = newId('key', now.getTime());
  const record: ApiKeyRecord = {
    id,
    name,
    scope,
    hash: hashKey(key),
    prefix: key.slice(0, PREFIX.length + 4),
    createdAt: now.toISOString(),
    lineageId: options.lineageId ?? id,
  };
  state.keys.push(record);
  return { record, key };
}

/** Whether a key record may authenticate at `now`. */
export function isKeyActive(record: ApiKeyRecord, now: Date): boolean {
  if (record.revokedAt) return false;
  return record.expiresAt === undefined || now.getTime() < Date.parse(record.expiresAt);
}

/** The active key record for a presented key, if any. */
export function findActiveKey(state: State, key: string, now: Date): ApiKeyRecord | undefined {
  if (!isWellFormedKey(key)) return undefined;
  const hash = hashKey(key);
  const record = state.keys.find((candidate) => candidate.hash === hash);
  return record && isKeyActive(record, now) ? record : undefined;
}

/**
 * Revokes a key at once. Refuses to revoke an admin key when no other admin
 * key would remain for good (keys in their rotation grace do not count: they
 * stop working soon), since that would lock everyone out.
 */
export function revokeKey(state: State, id: string, now: Date): ApiKeyRecord {
  const record = state.keys.find((candidate) => candidate.id === id);
  if (!record) throw new ApiError('not_found', `There is no API key ${id}.`);
  if (record.revokedAt) return record;
  const lastingAdmins = state.keys.filter(
    (other) => other.id !== id && other.scope === 'admin' && isKeyActive(other, now) && other.expiresAt === undefined,
  );
  if (record.scope === 'admin' && isKeyActive(record, now) && lastingAdmins.length === 0) {
    throw new ApiError('conflict', 'No other admin key would remain; create another admin key before revoking this one.');
  }
  record.revokedAt = now.toISOString();
  return record;
}

/** Replaces a key with a new one; the old one keeps working for `graceSeconds`. */
export function rotateKey(
  state: State,
  id: string,
  now: Date,
  graceSeconds: number,
): { record: ApiKeyRecord; key: string; previous: ApiKeyRecord } {
  const previous = state.keys.find((candidate) => candidate.id === id);
  if (!previous) throw new ApiError('not_found', `There is no API key ${id}.`);
  if (!isKeyActive(previous, now)) throw new ApiError('conflict', `The API key ${id} is revoked or expired and cannot be rotated.`);
  const created = createKey(state, previous.name, previous.scope, now, { lineageId: previous.lineageId });
  const graceEnd = new Date(now.getTime() + graceSeconds * 1000).toISOString();
  if (previous.expiresAt === undefined || Date.parse(previous.expiresAt) > Date.parse(graceEnd)) previous.expiresAt = graceEnd;
  previous.rotatedTo = created.record.id;
  return { ...created, previous };
}
