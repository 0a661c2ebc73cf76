import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { startTestAppliance, tempDataDir } from '../helpers/appliance.ts';

const ROOT = resolve(import.meta.dirname, '..', '..');
const run = promisify(execFile);

/** Runs `fittingroom …` from the repository root; resolves with stdout, or rejects with the exit code and stderr. */
function fittingroom(...args: string[]): Promise<{ stdout: string; stderr: string }> {
  return run(process.execPath, ['bin/fittingroom.js', ...args], { cwd: ROOT, timeout: 60_000 });
}

async function refused(args: string[], pattern: RegExp): Promise<void> {
  await assert.rejects(fittingroom(...args), (error: { code?: number; stderr?: string }) => {
    assert.equal(error.code, 1);
    assert.match(error.stderr ?? '', pattern);
    return true;
  });
}

test('vouchers keygen and mint: a minted voucher redeems on an appliance that trusts the key', async (t) => {
  const dir = await tempDataDir();
  const keyFile = join(dir, 'issuer.key');
  const keygen = await fittingroom('vouchers', 'keygen', '--out', keyFile);
  const publicKey = keygen.stdout.trim();
  assert.match(publicKey, /^MCowBQYDK2VwAyEA[A-Za-z0-9+/]{43}=$/, 'base64 of an Ed25519 DER SPKI');
  assert.match(keygen.stderr, /keep it secret/);
  assert.equal((await stat(keyFile)).mode & 0o777, 0o600);
  await refused(['vouchers', 'keygen', '--out', keyFile], /exists/);

  const app = await startTestAppliance(t, { config: { trustedIssuerKeys: [publicKey] } });
  const installId = (await fittingroom('vouchers', 'install-id', '--data-dir', app.dataDir)).stdout.trim();
  assert.equal(installId, app.appliance.store.state.installation!.id, 'install-id reads while the appliance runs');

  const mint = async (...extra: string[]) => (await fittingroom('vouchers', 'mint', '--key', keyFile, ...extra)).stdout.trim();
  const anywhere = await mint('--credits', '1000', '--any-installation');
  const here = await mint('--credits', '5000', '--install-id', installId, '--expires', '2099-12-31');
  const elsewhere = await mint('--credits', '1000', '--install-id', 'inst_01AAAAAAAAAAAAAAAAAAAAAAAA');
  for (const voucher of [anywhere, here, elsewhere]) assert.match(voucher, /^frv1\.[\w-]+\.[\w-]+\.[\w-]+$/);

  const redeem = (voucher: string) => app.call('POST', '/api/v1/credits/redeem', { body: { voucher } });
  const first = await redeem(anywhere);
  assert.equal(first.status, 200);
  assert.equal(((await first.json()) as { creditsRemaining: number }).creditsRemaining, 1025);
  const second = await redeem(here);
  assert.equal(second.status, 200);
  assert.deepEqual(await second.json().then((body) => (body as { creditsAdded: number }).creditsAdded), 5000);
  const third = await redeem(elsewhere);
  assert.equal(third.status, 422);
  assert.match(((await third.json()) as { detail: string }).detail, /bound to installation inst_01A/);
  assert.equal((await redeem(anywhere)).status, 409);
  const [, , payload] = here.split('.');
  const expiresAt = Date.parse((JSON.parse(Buffer.from(payload!, 'base64url').toString()) as { expiresAt: string }).expiresAt);
  assert.ok(expiresAt > Date.parse('2099-12-31'), 'an --expires date is kept');
  const defaulted = JSON.parse(Buffer.from(elsewhere.split('.')[2]!, 'base64url').toString()) as { expiresAt?: string };
  const days = (Date.parse(defaulted.expiresAt!) - Date.now()) / 86_400_000;
  assert.ok(days > 364 && days <= 365, `without --expires a voucher is valid a year (${days.toFixed(1)} days)`);
});

test('vouchers mint refuses bad options with a message and exit code 1', async () => {
  const dir = await tempDataDir();
  const keyFile = join(dir, 'issuer.key');
  await fittingroom('vouchers', 'keygen', '--out', keyFile);
  await refused(['vouchers', 'mint', '--key', keyFile], /needs --credits and --key/);
  await refused(['vouchers', 'mint', '--key', keyFile, '--credits', '10'], /needs either --install-id ID .* or --any-installation/);
  await refused(['vouchers', 'mint', '--key', keyFile, '--credits', '10', '--install-id', 'x', '--any-installation'], /needs either/);
  await refused(
    ['vouchers', 'mint', '--key', keyFile, '--credits', '10', '--any-installation', '--expires', '2099-01-01', '--no-expiry'],
    /not both/,
  );
  for (const credits of ['0', '-1', '1.5', '1000001', 'lots']) {
    await refused(
      ['vouchers', 'mint', '--key', keyFile, `--credits=${credits}`, '--any-installation'],
      /--credits must be an integer from 1 to 1000000/,
    );
  }
  await refused(['vouchers', 'mint', '--key', keyFile, '--credits', '10', '--any-installation', '--expires', '2020-01-01'], /already past/);
  await refused(
    ['vouchers', 'mint', '--key', keyFile, '--credits', '10', '--any-installation', '--expires', 'next week'],
    /--expires must be a date/,
  );
  await refused(['vouchers', 'mint', '--key', join(dir, 'missing.key'), '--credits', '10', '--any-installation'], /no such file/);
  await refused(
    ['vouchers', 'mint', '--key', join(ROOT, 'package.json'), '--credits', '10', '--any-installation'],
    /not a PEM private key/,
  );
  await refused(['vouchers', 'install-id', '--data-dir', join(dir, 'nothing')], /holds no appliance/);
  await refused(['vouchers', 'melt'], /unknown vouchers command/);
});
