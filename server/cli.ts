/**
 * The command-line tool (`npx fittingroom …`). Key commands open the data
 * directory directly, so they refuse to run while an appliance holds it (use
 * the HTTP API then), or with --database the shared database, which they may
 * use while the shop runs.
 */
import { parseArgs } from 'node:util';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { defaultDataDir, loadConfig } from './config.ts';
import { builtinEngineSpecs } from './engines/builtin.ts';
import type { EngineSpec } from './engines/types.ts';
import { DatabaseNewerError } from './state/postgres/migrations.ts';
import { redactUrl } from './kernel/redact.ts';
import { migrateShop, ShopMoveMismatch, ShopMoveRefused, type ShopMoveReport } from './state/migrate-shop.ts';
import type { AccountStore } from './state/accounts.ts';
import { LowdbAccounts } from './state/lowdb-accounts.ts';
import { PgAccounts } from './state/postgres/accounts.ts';
import { startWorker } from './worker.ts';
import { ApiError } from './kernel/errors.ts';
import { stopOnSignals } from './kernel/shutdown.ts';
import { checkKeyFields, publicKey } from './keys/api-keys.ts';
import { DataDirLockedError, DataDirMovedError, Store } from './store/db.ts';
import { parseCredits, parseExpiry, readIssuerKey, writeIssuerKey } from './vouchers/issuer.ts';
import { generateIssuerKey, mintVoucher, type MintOptions } from './vouchers/voucher.ts';

const USAGE = `usage:
  fittingroom serve [--port 8787] [--host 127.0.0.1] [--data-dir DIR] [--engine-workers N]
  fittingroom serve --database postgres://… [--images-dir DIR] [--port 8787] [--host 127.0.0.1]
      (or FITTINGROOM_DATABASE_URL; one of several API processes on a shared database, running its engines too)
  fittingroom worker --database postgres://… [--images-dir DIR] [--engine-workers N]
      (or FITTINGROOM_DATABASE_URL; a GPU worker: engines, no HTTP API)
  fittingroom migrate --data-dir DIR --database postgres://… [--images-dir DIR]
      (moves a stopped shop into a new, empty database, once; its totals verified before commit)
  fittingroom keys create --name NAME [--scope standard|admin] [--data-dir DIR | --database postgres://…]
  fittingroom keys list [--data-dir DIR | --database postgres://…] [--json]
  fittingroom keys revoke KEY_ID [--data-dir DIR | --database postgres://…]
  fittingroom vouchers keygen [--out issuer.key]
  fittingroom vouchers mint --credits N --key issuer.key (--install-id ID | --any-installation)
                           [--expires 2027-01-31 | --no-expiry] [--id ID]
      (a voucher expires a year after minting unless told otherwise)
  fittingroom vouchers install-id [--data-dir DIR | --database postgres://…]`;

async function withStore<T>(dataDir: string, fn: (store: Store) => Promise<T>): Promise<T> {
  const store = await Store.open(dataDir);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

/**
 * The shop's account store: a data directory's (locked while it is used, so not while the appliance runs), or with
 * `--database` (or FITTINGROOM_DATABASE_URL) a shared database's, which may be used while API processes run.
 */
async function withAccounts<T>(
  values: { 'data-dir'?: string | undefined; database?: string | undefined },
  fn: (accounts: AccountStore) => Promise<T>,
): Promise<T> {
  const database = values.database ?? (process.env.FITTINGROOM_DATABASE_URL || undefined);
  if (database === undefined) {
    const dataDir = resolve(values['data-dir'] ?? process.env.FITTINGROOM_DATA_DIR ?? defaultDataDir());
    return withStore(dataDir, (store) => fn(new LowdbAccounts(store)));
  }
  if (values['data-dir'] !== undefined) throw new UsageError('give --data-dir or --database, not both');
  const accounts = await PgAccounts.open(database, { maxConnections: 1 });
  try {
    return await fn(accounts);
  } finally {
    await accounts.close();
  }
}

async function keys(command: string | undefined, args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      scope: { type: 'string' },
      'data-dir': { type: 'string' },
      database: { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  const now = new Date();
  switch (command) {
    case 'create': {
      const { name, scope } = checkKeyFields(values.name, values.scope ?? 'standard');
      const { record, key } = await withAccounts(values, (accounts) => accounts.createKey(name, scope, now));
      console.log(`Created ${record.scope} key ${record.id} ("${record.name}"). It is shown only now:\n\n  ${key}\n`);
      return;
    }
    case 'list': {
      const list = (await withAccounts(values, (accounts) => accounts.keys())).map(publicKey);
      if (values.json) {
        console.log(JSON.stringify(list, null, 2));
        return;
      }
      if (list.length === 0) console.log('No keys yet: start the appliance once, or run "fittingroom keys create".');
      for (const key of list) {
        const state = key.revokedAt ? `revoked ${key.revokedAt}` : key.expiresAt ? `expires ${key.expiresAt}` : 'active';
        console.log(`${key.id}  ${key.scope.padEnd(8)}  ${key.prefix}…  ${state}  ${key.name}`);
      }
      return;
    }
    case 'revoke': {
      const id = positionals[0];
      if (!id) throw new UsageError('keys revoke needs a key id (see "fittingroom keys list")');
      await withAccounts(values, (accounts) => accounts.revokeKey(id, now));
      console.log(`Revoked ${id}; it stops working at once.`);
      return;
    }
    default:
      throw new UsageError(`unknown keys command "${command ?? ''}"`);
  }
}

/** How long a minted voucher is valid when the issuer names no date. */
const DEFAULT_VOUCHER_DAYS = 365;

/** `vouchers …`: issuer keys and vouchers (no data directory needed but for install-id). */
async function vouchers(command: string | undefined, args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      out: { type: 'string' },
      key: { type: 'string' },
      credits: { type: 'string' },
      'install-id': { type: 'string' },
      'any-installation': { type: 'boolean' },
      expires: { type: 'string' },
      'no-expiry': { type: 'boolean' },
      id: { type: 'string' },
      'data-dir': { type: 'string' },
      database: { type: 'string' },
    },
  });
  switch (command) {
    case 'keygen': {
      const path = resolve(values.out ?? 'issuer.key');
      const issuer = generateIssuerKey();
      await writeIssuerKey(path, issuer.privateKeyPem);
      console.error(`Wrote the issuer's private key to ${path} (mode 0600): keep it secret, it mints credits.`);
      console.error(
        `Key id ${issuer.keyId}. Appliances that accept its vouchers run with --trusted-issuers (or FITTINGROOM_TRUSTED_ISSUERS) set to:`,
      );
      console.log(issuer.publicKey);
      return;
    }
    case 'mint': {
      if (values.credits === undefined || values.key === undefined) throw new UsageError('vouchers mint needs --credits and --key');
      // A voucher is cash: bound to the one shop it was sold to, and not valid forever, unless the issuer says so.
      if ((values['install-id'] === undefined) === (values['any-installation'] !== true))
        throw new UsageError('vouchers mint needs either --install-id ID (see "fittingroom vouchers install-id") or --any-installation');
      if (values.expires !== undefined && values['no-expiry'])
        throw new UsageError('vouchers mint takes --expires or --no-expiry, not both');
      const now = new Date();
      const options: MintOptions = { credits: parseCredits(values.credits), issuedAt: now };
      if (values.expires !== undefined) options.expiresAt = parseExpiry(values.expires, now);
      else if (!values['no-expiry']) options.expiresAt = new Date(now.getTime() + DEFAULT_VOUCHER_DAYS * 86_400_000);
      if (values['install-id'] !== undefined) options.installId = values['install-id'];
      if (values.id !== undefined) options.id = values.id;
      const voucher = mintVoucher(await readIssuerKey(resolve(values.key)), options);
      const bound = options.installId ? `installation ${options.installId}` : 'any installation';
      const until = options.expiresAt ? `until ${options.expiresAt.toISOString()}` : 'without expiry';
      console.error(`A voucher for ${options.credits} credits, for ${bound}, valid ${until}:`);
      console.log(voucher);
      return;
    }
    case 'install-id': {
      if (values.database !== undefined || process.env.FITTINGROOM_DATABASE_URL) {
        const installation = await withAccounts(values, (accounts) => accounts.installation());
        if (!installation) throw new Error('the database holds no shop yet: start `fittingroom serve --database …` once');
        console.log(installation.id);
        return;
      }
      const dataDir = resolve(values['data-dir'] ?? process.env.FITTINGROOM_DATA_DIR ?? defaultDataDir());
      if (!existsSync(join(dataDir, 'state.json'))) throw new Error(`${dataDir} holds no appliance yet: start it once`);
      // Read only, so it works while the appliance runs.
      const store = await Store.open(dataDir, { lock: false });
      const installation = store.state.installation;
      await store.close();
      if (!installation) throw new Error(`${dataDir} holds no installation yet: start the appliance once`);
      console.log(installation.id);
      return;
    }
    default:
      throw new UsageError(`unknown vouchers command "${command ?? ''}"`);
  }
}

/** Runs engines for a shared database until SIGINT or SIGTERM, which give back what it runs. */
async function worker(args: string[]): Promise<void> {
  let config;
  try {
    config = loadConfig(args);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (!config.database) throw new UsageError('a worker needs --database postgres://… (or FITTINGROOM_DATABASE_URL)');
  const extra = process.env.FITTINGROOM_ENGINES ? (JSON.parse(process.env.FITTINGROOM_ENGINES) as EngineSpec[]) : [];
  const running = await startWorker({
    config,
    database: config.database,
    engines: [...(config.builtinEngines ? builtinEngineSpecs() : []), ...extra],
  }).catch((error: unknown) => {
    throw error instanceof DatabaseNewerError ? new CommandError(error.message) : error;
  });
  const where = config.imagesDir ? `images in ${config.imagesDir}` : 'images in the database';
  console.log(`fittingroom worker ${running.id}: running ${running.engines.join(', ') || 'no engine (none is ready here)'}; ${where}`);
  process.send?.({ type: 'ready', id: running.id, engines: running.engines });
  stopOnSignals('fittingroom worker', 'giving back running try-ons', () => running.close());
}

/** `migrate`: a stopped shop's data directory into a new PostgreSQL database, verified, once. */
async function migrate(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { 'data-dir': { type: 'string' }, database: { type: 'string' }, 'images-dir': { type: 'string' } },
  });
  const dataDir = resolve(values['data-dir'] ?? process.env.FITTINGROOM_DATA_DIR ?? defaultDataDir());
  const database = values.database ?? process.env.FITTINGROOM_DATABASE_URL;
  if (!database) throw new UsageError('migrate needs --database postgres://… (or FITTINGROOM_DATABASE_URL)');
  const imagesDir = values['images-dir'] ?? process.env.FITTINGROOM_IMAGES_DIR ?? null;
  console.log(`Moving the shop in ${dataDir} into ${redactUrl(database)}…`);
  const report = await migrateShop({ dataDir, database, imagesDir, log: (line) => console.log(line) }).catch((error: unknown) => {
    throw error instanceof ShopMoveRefused || error instanceof ShopMoveMismatch || error instanceof DatabaseNewerError
      ? new CommandError(error.message)
      : error;
  });
  console.log(describeMove(report));
}

const count = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;

function describeMove(report: ShopMoveReport): string {
  const t = report.totals;
  const lot = (name: 'trial' | 'paid') =>
    `available ${t.lots[name].available}, reserved ${t.lots[name].reserved}, spent ${t.lots[name].spent}`;
  const lines = [
    `Moved the shop ${report.installationId} in ${(report.durationMs / 1000).toFixed(2)} s; images in ${report.images}.`,
    'Copied, and verified in the database before the commit:',
    `  API keys          ${t.keys}`,
    `  ledger entries    ${t.ledgerEntries} (last seq ${t.lastSeq})`,
    `  try-ons           ${Object.entries(t.generations)
      .map(([status, n]) => `${n} ${status}`)
      .join(', ')}` + (report.requeued > 0 ? ` (${report.requeued} running when the appliance stopped: queued again)` : ''),
    `  images            ${t.images} (${(t.imageBytes / 1e6).toFixed(1)} MB)`,
    `  vouchers          ${t.vouchers} (${t.voucherCredits} credits)`,
    `  catalogue         ${count(t.garments, 'garment')}, ${count(t.cataloguePhotos, 'photo')}`,
    `  webhooks          ${count(t.webhookEvents, 'event')}, ${count(t.webhookSecrets, 'signing secret')}`,
    `  Idempotency-Key replies ${t.idempotencyReplies}, take-home links ${t.shares}`,
    `  trial lot         ${lot('trial')}; expires ${t.trialExpiresAt ?? 'never granted'}`,
    `  paid lot          ${lot('paid')}`,
    `  account           ${t.account.creditsRemaining} credits remaining (${t.account.trialCreditsRemaining} trial), ${t.account.creditsReserved} reserved`,
    `  digests           ${Object.entries(t.digests)
      .map(([table, digest]) => `${table} ${digest}`)
      .join(', ')}`,
  ];
  if (report.skippedEntries.length > 0)
    lines.push(`Not copied: ${report.skippedEntries.length} ledger entry(ies) of 0 credits (${report.skippedEntries.join(', ')}).`);
  if (report.sessionsDropped > 0) lines.push(`Not copied: ${report.sessionsDropped} GUI session(s); staff sign in again.`);
  if (report.missingImages.length > 0)
    lines.push(
      `${report.missingImages.length} image(s) that records name were not on disk, and are not in the copy either: ` +
        report.missingImages.slice(0, 5).join(', ') +
        (report.missingImages.length > 5 ? ', …' : ''),
    );
  if (report.journalOnlyVouchers.length > 0)
    lines.push(
      `Warning: the voucher journal knows ${report.journalOnlyVouchers.length} redemption(s) the state did not ` +
        `(${report.journalOnlyVouchers.slice(0, 3).join(', ')}): the database cannot refuse them by itself.`,
    );
  lines.push(`${report.dataDir} is marked as moved; do not start an appliance on it again.`);
  return lines.join('\n');
}

class UsageError extends Error {}
class CommandError extends Error {}

async function main(argv: string[]): Promise<void> {
  const [group, command, ...rest] = argv;
  if (group === 'serve') {
    process.argv = [process.argv[0]!, process.argv[1]!, ...argv.slice(1)];
    await import('./index.ts');
    return;
  }
  if (group === 'worker') return worker(argv.slice(1));
  if (group === 'migrate') return migrate(argv.slice(1));
  if (group === 'keys') return keys(command, rest);
  if (group === 'vouchers') {
    return vouchers(command, rest).catch((error: unknown) => {
      // Everything a vouchers command refuses (a bad option, a key file that exists) is told in one line.
      throw error instanceof Error && !(error instanceof UsageError) && !(error instanceof TypeError)
        ? new CommandError(error.message)
        : error;
    });
  }
  if (group === undefined || group === 'help' || group === '--help') {
    console.log(USAGE);
    return;
  }
  throw new UsageError(`unknown command "${group}"`);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError) console.error(`fittingroom: ${error.message}\n${USAGE}`);
  else if (
    error instanceof ApiError ||
    error instanceof DataDirLockedError ||
    error instanceof DataDirMovedError ||
    error instanceof CommandError
  )
    console.error(`fittingroom: ${error.message}`);
  else if (error instanceof TypeError && (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS'))
    console.error(`fittingroom: ${error.message}\n${USAGE}`);
  else console.error('fittingroom:', error);
  process.exitCode = 1;
});
