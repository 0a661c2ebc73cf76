/**
 * The offline command-line tool (`npx fittingroom …`). Key commands open the
 * data directory directly, so they refuse to run while an appliance holds it
 * (use the HTTP API then).
 */
import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import { defaultDataDir } from './config.ts';
import { ApiError } from './api/errors.ts';
import { checkKeyFields, createKey, publicKey, revokeKey } from './keys/api-keys.ts';
import { DataDirLockedError, Store } from './store/db.ts';

const USAGE = `usage:
  fittingroom serve [--port 8787] [--host 127.0.0.1] [--data-dir DIR]
  fittingroom keys create --name NAME [--scope standard|admin] [--data-dir DIR]
  fittingroom keys list [--data-dir DIR] [--json]
  fittingroom keys revoke KEY_ID [--data-dir DIR]`;

async function withStore<T>(dataDir: string, fn: (store: Store) => Promise<T>): Promise<T> {
  const store = await Store.open(dataDir);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

async function keys(command: string | undefined, args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { name: { type: 'string' }, scope: { type: 'string' }, 'data-dir': { type: 'string' }, json: { type: 'boolean' } },
  });
  const dataDir = resolve(values['data-dir'] ?? process.env.FITTINGROOM_DATA_DIR ?? defaultDataDir());
  const now = new Date();
  switch (command) {
    case 'create': {
      const { name, scope } = checkKeyFields(values.name, values.scope ?? 'standard');
      const { record, key } = await withStore(dataDir, (store) => store.mutate((state) => createKey(state, name, scope, now)));
      console.log(`Created ${record.scope} key ${record.id} ("${record.name}"). It is shown only now:\n\n  ${key}\n`);
      return;
    }
    case 'list': {
      const list = await withStore(dataDir, async (store) => store.state.keys.map(publicKey));
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
      await withStore(dataDir, (store) => store.mutate((state) => revokeKey(state, id, now)));
      console.log(`Revoked ${id}; it stops working at once.`);
      return;
    }
    default:
      throw new UsageError(`unknown keys command "${command ?? ''}"`);
  }
}

class UsageError extends Error {}

async function main(argv: string[]): Promise<void> {
  const [group, command, ...rest] = argv;
  if (group === 'serve') {
    process.argv = [process.argv[0]!, process.argv[1]!, ...argv.slice(1)];
    await import('./index.ts');
    return;
  }
  if (group === 'keys') return keys(command, rest);
  if (group === undefined || group === 'help' || group === '--help') {
    console.log(USAGE);
    return;
  }
  throw new UsageError(`unknown command "${group}"`);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError) console.error(`fittingroom: ${error.message}\n${USAGE}`);
  else if (error instanceof ApiError || error instanceof DataDirLockedError) console.error(`fittingroom: ${error.message}`);
  else if (error instanceof TypeError && (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS'))
    console.error(`fittingroom: ${error.message}\n${USAGE}`);
  else console.error('fittingroom:', error);
  process.exitCode = 1;
});
