import assert from 'node:assert/strict';
import { createPrivateKey, sign } from 'node:crypto';
import { test } from 'node:test';
import {
  generateIssuerKey,
  MAX_VOUCHER_LENGTH,
  mintVoucher,
  parseVoucher,
  trustedIssuers,
  verifyVoucher,
  VoucherError,
  type VoucherProblem,
} from '../../server/vouchers/voucher.ts';

const issuer = generateIssuerKey();
const other = generateIssuerKey();
const now = new Date('2026-06-01T12:00:00Z');
const context = { issuers: trustedIssuers([issuer.publicKey]), now, installId: 'inst_HERE' };

function refused(text: string, problem: VoucherProblem, pattern: RegExp, ctx = context): void {
  assert.throws(
    () => verifyVoucher(text, ctx),
    (error: unknown) => {
      assert.ok(error instanceof VoucherError, String(error));
      assert.equal(error.problem, problem, error.message);
      assert.match(error.message, pattern);
      return true;
    },
  );
}

/** A voucher whose payload bytes are chosen freely and signed properly by `issuer`. */
function signedRaw(payload: string): string {
  const bytes = Buffer.from(payload, 'utf8');
  const good = mintVoucher(issuer.privateKeyPem, { credits: 1 });
  const keyId = good.split('.')[1]!;
  const signature = sign(null, bytes, createPrivateKey(issuer.privateKeyPem));
  return ['frv1', keyId, bytes.toString('base64url'), signature.toString('base64url')].join('.');
}

test('a minted voucher verifies and carries its payload', () => {
  const text = mintVoucher(issuer.privateKeyPem, { credits: 5000, issuedAt: now, expiresAt: new Date('2027-01-01T00:00:00Z') });
  assert.match(text, /^frv1\.[A-Za-z0-9_-]{11}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{86}$/);
  assert.ok(text.length < 300, `${text.length} characters`);
  const payload = verifyVoucher(text, context);
  assert.equal(payload.credits, 5000);
  assert.match(payload.id, /^vch_[0-9A-Z]{26}$/);
  assert.equal(payload.issuedAt, now.toISOString());
  assert.equal(payload.expiresAt, '2027-01-01T00:00:00.000Z');
  assert.equal(payload.installId, undefined);
  assert.equal(verifyVoucher(` ${text}\n`, context).id, payload.id, 'surrounding white space from a copy is ignored');
});

test('each minted voucher has its own id', () => {
  const a = verifyVoucher(mintVoucher(issuer.privateKeyPem, { credits: 1000 }), context);
  const b = verifyVoucher(mintVoucher(issuer.privateKeyPem, { credits: 1000 }), context);
  assert.notEqual(a.id, b.id);
});

test('a voucher bound to this installation verifies; bound to another it is refused, naming both', () => {
  assert.equal(verifyVoucher(mintVoucher(issuer.privateKeyPem, { credits: 10, installId: 'inst_HERE' }), context).installId, 'inst_HERE');
  refused(
    mintVoucher(issuer.privateKeyPem, { credits: 10, installId: 'inst_ELSEWHERE' }),
    'other_installation',
    /inst_ELSEWHERE.*inst_HERE/,
  );
});

test('an expired voucher is refused from its expiry on', () => {
  const text = mintVoucher(issuer.privateKeyPem, { credits: 10, expiresAt: now });
  refused(text, 'expired', /expired at 2026-06-01T12:00:00.000Z/);
  assert.ok(verifyVoucher(text, { ...context, now: new Date(now.getTime() - 1) }));
});

test('a tampered payload is refused', () => {
  const [prefix, keyId, payload, signature] = mintVoucher(issuer.privateKeyPem, { credits: 1000 }).split('.') as [
    string,
    string,
    string,
    string,
  ];
  const json = Buffer.from(payload, 'base64url').toString('utf8').replace('"credits":1000', '"credits":100000');
  const forged = [prefix, keyId, Buffer.from(json).toString('base64url'), signature].join('.');
  refused(forged, 'bad_signature', /signature does not match/);
});

test('a tampered signature is refused', () => {
  const text = mintVoucher(issuer.privateKeyPem, { credits: 1000 });
  const signature = Buffer.from(text.split('.')[3]!, 'base64url');
  signature[10]! ^= 1;
  refused(text.replace(/[^.]+$/, signature.toString('base64url')), 'bad_signature', /altered/);
});

test('a voucher from an issuer this appliance does not trust is refused', () => {
  refused(mintVoucher(other.privateKeyPem, { credits: 1000 }), 'untrusted', /does not trust/);
  refused(mintVoucher(issuer.privateKeyPem, { credits: 1000 }), 'untrusted', /trusts no voucher issuer/, { ...context, issuers: [] });
});

test("another issuer's signature under a trusted key id is refused", () => {
  const theirs = mintVoucher(other.privateKeyPem, { credits: 1000 });
  const ourKeyId = mintVoucher(issuer.privateKeyPem, { credits: 1 }).split('.')[1]!;
  refused(theirs.replace(/^frv1\.[^.]+/, `frv1.${ourKeyId}`), 'bad_signature', /signature does not match/);
});

test('several trusted issuers: each one is accepted', () => {
  const both = { ...context, issuers: trustedIssuers([issuer.publicKey, other.publicKey]) };
  assert.ok(verifyVoucher(mintVoucher(issuer.privateKeyPem, { credits: 1 }), both));
  assert.ok(verifyVoucher(mintVoucher(other.privateKeyPem, { credits: 1 }), both));
});

test('malformed texts are refused as malformed', () => {
  const good = mintVoucher(issuer.privateKeyPem, { credits: 1000 });
  const [, keyId, payload, signature] = good.split('.') as [string, string, string, string];
  for (const text of [
    'hello',
    'frv1',
    'frv1...',
    `frv2.${keyId}.${payload}.${signature}`,
    `frv1.${keyId}.${payload}`,
    `frv1.${keyId}.${payload}.${signature}.x`,
    `frv1.short.${payload}.${signature}`,
    `frv1.${keyId}.${payload}=.${signature}`,
    `frv1.${keyId}.${payload.slice(0, 10)}+/${payload.slice(10)}.${signature}`,
    `frv1.${keyId}.${payload}.${signature.slice(0, 40)}`,
    `frv1.${keyId}.${payload}.${signature}A`,
    `frv1.${keyId}.${payload}.${signature.slice(0, -1)}_`, // non-canonical: trailing bits set
    `frv1.${keyId}.${payload}.${signature.slice(0, -1)}!`,
  ]) {
    refused(text, 'malformed', /./);
  }
});

test('huge input is refused before it is decoded', () => {
  refused(`frv1.${'A'.repeat(11)}.${'A'.repeat(MAX_VOUCHER_LENGTH)}.AA`, 'malformed', /longer than 2048/);
  refused('x'.repeat(10_000_000), 'malformed', /longer than/);
  assert.throws(() => parseVoucher('.'.repeat(100_000)), VoucherError);
});

test('a properly signed payload with invalid fields is still refused', () => {
  const valid = { id: 'vch_1', credits: 10, issuedAt: '2026-01-01T00:00:00.000Z' };
  for (const [payload, pattern] of [
    ['not json', /not JSON/],
    ['[1,2]', /not a JSON object/],
    [JSON.stringify({ ...valid, credits: 0 }), /credits/],
    [JSON.stringify({ ...valid, credits: 1.5 }), /credits/],
    [JSON.stringify({ ...valid, credits: 1_000_001 }), /credits/],
    [JSON.stringify({ ...valid, credits: '10' }), /credits/],
    [JSON.stringify({ ...valid, id: '' }), /id/],
    [JSON.stringify({ ...valid, id: 'a/b' }), /id/],
    [JSON.stringify({ ...valid, issuedAt: 'yesterday' }), /issuedAt/],
    [JSON.stringify({ ...valid, expiresAt: '2027-02-31' }), /expiresAt/],
    [JSON.stringify({ ...valid, installId: 7 }), /installId/],
    [JSON.stringify({ ...valid, bonus: 100 }), /unknown field bonus/],
  ] as const) {
    refused(signedRaw(payload), 'invalid_payload', pattern);
  }
  assert.equal(verifyVoucher(signedRaw(JSON.stringify(valid)), context).id, 'vch_1');
});

test('mint refuses what verify would refuse', () => {
  for (const credits of [0, -5, 2.5, 1_000_001, Number.NaN]) {
    assert.throws(() => mintVoucher(issuer.privateKeyPem, { credits }), /credits must be an integer from 1 to 1000000/);
  }
  assert.throws(() => mintVoucher(issuer.privateKeyPem, { credits: 1, installId: 'no spaces' }), /installId/);
  assert.ok(verifyVoucher(mintVoucher(issuer.privateKeyPem, { credits: 1_000_000 }), context));
});

test('trusted issuer keys must be base64 Ed25519 public keys', () => {
  assert.throws(() => trustedIssuers(['not a key']), /trusted issuer key 1 is not a base64 DER public key/);
  assert.throws(() => trustedIssuers([issuer.publicKey, 'AAAA']), /trusted issuer key 2/);
  assert.throws(() => trustedIssuers([issuer.privateKeyPem]), /trusted issuer key 1/);
  assert.equal(trustedIssuers([issuer.publicKey])[0]!.keyId, issuer.keyId);
});
