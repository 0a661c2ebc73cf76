/**
 * `serve --database` (issue 16): two real API processes on one throwaway PostgreSQL database, each running the test
 * engine as a member of the fleet. The shop is installed once; a try-on submitted to one process is waited for,
 * listed, fetched and erased through the other (the wait ends on the other node's settle notice); the fleet shows
 * in GET /api/v1/engines; a GUI session started on one process signs in on the other.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import pg from 'pg';
import { defaultConfig } from '../../server/config.ts';
import { startSharedAppliance } from '../../server/shared-appliance.ts';
import { PgState } from '../../server/state/postgres/gateway.ts';
import { composeEngine } from '../helpers/appliance.ts';
import { checkAgainstOpenApi } from '../helpers/openapi-check.ts';
import { submission } from '../helpers/inputs.ts';
import { clusterForFile } from '../helpers/pg-cluster.ts';
import { startServerProcess, type ServerProcess } from '../helpers/server-process.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const CLI = resolve(import.meta.dirname, '../../server/cli.ts');
const { skip, newDatabase } = clusterForFile('serve');

test('two API processes on one database serve one shop', { skip }, async (t) => {
  const url = await newDatabase();
  const servers: ServerProcess[] = [];
  t.after(() => Promise.all(servers.map((server) => server.kill('SIGTERM'))));
  const engine = composeEngine({ id: 'compose', delayMs: 300 });
  const start = async () => {
    // A data directory that does not exist yet, as on a new machine: the installer makes it for the first key.
    const server = await startServerProcess(join(await tempDir('fr-serve-'), 'new'), [engine], ['--database', url]);
    servers.push(server);
    return server;
  };
  const [a, b] = await Promise.all([start(), start()]);
  const keys = [a!.key, b!.key].filter((key) => key !== '');
  assert.equal(keys.length, 1, 'exactly one process installed the shop and has the first admin key');
  const key = keys[0]!;
  // Every reply of the API on a database is held to the OpenAPI document, as on one PC.
  const call = async (server: ServerProcess, path: string, init: RequestInit = {}) => {
    const response = await fetch(`${server.url}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(init.headers as Record<string, string>) },
    });
    const body = Buffer.from(await response.clone().arrayBuffer());
    const type = response.headers.get('content-type');
    checkAgainstOpenApi(init.method ?? 'GET', response.url, response.status, type, type?.startsWith('image/') ? '' : body.toString());
    return response;
  };

  const state = await PgState.open(url);
  t.after(() => state.close());
  const trial = (await state.account(new Date())).creditsRemaining;
  assert.ok(trial > 0, 'the trial was granted');
  assert.equal((await state.ledgerPage(null, 100)).entries.filter((entry) => entry.type === 'trial').length, 1, 'once');

  // The fleet, read when asked: both processes run the engine, each announced once it was ready.
  const engines = (await (await call(b!, '/api/v1/engines')).json()) as { id: string; ready: boolean; workers: { id: string }[] }[];
  const compose = engines.find((e) => e.id === 'compose')!;
  assert.equal(compose.ready, true);
  assert.equal(compose.workers.length, 2, 'both API processes are workers of the fleet');

  // Submitted on A, waited for on B: B hears the settle of whichever node ran it.
  const submitted = await call(a!, '/api/v1/try-on', {
    method: 'POST',
    body: JSON.stringify(await submission({ engine: 'compose', outputFormat: 'png' })),
  });
  assert.equal(submitted.status, 202);
  const { genId, creditsRemaining } = (await submitted.json()) as { genId: string; creditsRemaining: number };
  assert.equal(creditsRemaining, trial - 1);
  const began = Date.now();
  const waited = await call(b!, `/api/v1/try-on/${genId}?wait=20`);
  const view = (await waited.json()) as { status: string; creditCharged: boolean; imageUrl: string };
  assert.equal(view.status, 'complete', JSON.stringify(view));
  assert.ok(Date.now() - began < 15_000, 'the wait ended on the settle, not at its bound');
  assert.equal(view.creditCharged, true);

  const image = await call(b!, `/api/v1/try-on/${genId}/image`);
  assert.equal(image.status, 200);
  assert.equal(image.headers.get('content-type'), 'image/png');
  const bytes = Buffer.from(await image.arrayBuffer());
  assert.deepEqual([...bytes.subarray(1, 4)], [...Buffer.from('PNG')]);
  const listed = (await (await call(a!, '/api/v1/try-on?limit=5')).json()) as { data: { genId: string }[] };
  assert.deepEqual(
    listed.data.map((item) => item.genId),
    [genId],
  );
  const health = (await (await fetch(`${a!.url}/api/v1/health`)).json()) as { status: string; queueDepth: number };
  assert.deepEqual([health.status, health.queueDepth], ['ok', 0]);

  // Erased on B, gone on A; the record stays, marked erased.
  assert.equal((await call(b!, `/api/v1/try-on/${genId}`, { method: 'DELETE' })).status, 204);
  assert.equal((await call(a!, `/api/v1/try-on/${genId}/image`)).status, 404);
  assert.equal(((await (await call(a!, `/api/v1/try-on/${genId}`)).json()) as { erased?: boolean }).erased, true);

  // The command line manages the keys of a running shop on its database.
  const cli = (...args: string[]) =>
    spawnSync(process.execPath, ['--import', 'tsx', CLI, ...args, '--database', url], { encoding: 'utf8' });
  const created = cli('keys', 'create', '--name', 'ops laptop', '--scope', 'admin');
  assert.equal(created.status, 0, created.stderr);
  const ops = /\n {2}(fr_\S+)\n/.exec(created.stdout)?.[1];
  assert.ok(ops, created.stdout);
  assert.equal((await fetch(`${b!.url}/api/v1/keys`, { headers: { authorization: `Bearer ${ops}` } })).status, 200);
  const listed2 = JSON.parse(cli('keys', 'list', '--json').stdout) as { id: string; name: string }[];
  const opsId = listed2.find((k) => k.name === 'ops laptop')!.id;
  assert.equal(cli('keys', 'revoke', opsId).status, 0);
  assert.equal((await fetch(`${a!.url}/api/v1/keys`, { headers: { authorization: `Bearer ${ops}` } })).status, 401);
  const installId = cli('vouchers', 'install-id');
  assert.equal(installId.stdout.trim(), (await state.db.query<{ id: string }>('SELECT id FROM installation')).rows[0]!.id);

  // A key made on A works on B; a GUI session started on B signs in on A.
  const made = await call(a!, '/api/v1/keys', { method: 'POST', body: JSON.stringify({ name: 'kiosk', scope: 'standard' }) });
  assert.equal(made.status, 201);
  const kiosk = ((await made.json()) as { key: string }).key;
  const asKiosk = await fetch(`${b!.url}/api/v1/account`, { headers: { authorization: `Bearer ${kiosk}` } });
  assert.equal(asKiosk.status, 200);
  const signIn = await fetch(`${b!.url}/gui/api/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: b!.url },
    body: JSON.stringify({ method: 'key', key }),
  });
  assert.equal(signIn.status, 200, await signIn.clone().text());
  const cookie = signIn.headers.get('set-cookie')!.split(';')[0]!;
  const session = await fetch(`${a!.url}/gui/api/session`, { headers: { cookie } });
  assert.equal(((await session.json()) as { signedIn?: boolean }).signedIn, true);
});

test('a wait whose settle notice was lost (the listening connection down) ends once the connection is back', { skip }, async (t) => {
  const url = await newDatabase();
  const config = defaultConfig({ port: 0, dataDir: await tempDir('fr-serve-gap-'), builtinEngines: false, database: url });
  const appliance = await startSharedAppliance({
    config,
    database: url,
    engines: [composeEngine({ id: 'compose', delayMs: 1500 })],
    log: () => {},
  });
  t.after(() => appliance.close());
  const state = await PgState.open(url, { maxConnections: 2 });
  t.after(() => state.close());
  const key = appliance.firstAdminKey!;
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const submitted = await fetch(`${appliance.url}/api/v1/try-on`, {
    method: 'POST',
    headers,
    body: JSON.stringify(await submission({ engine: 'compose' })),
  });
  const { genId } = (await submitted.json()) as { genId: string };
  let answered = false;
  const waited = fetch(`${appliance.url}/api/v1/try-on/${genId}?wait=30`, { headers }).then(async (response) => {
    answered = true;
    return (await response.json()) as { status: string };
  });

  // The listener is cut off and cannot come back while the try-on ends: its settle notice is lost.
  const database = (await state.db.query<{ name: string }>('SELECT current_database() AS name')).rows[0]!.name;
  // A database's own connections cannot close it to new ones: that is done from the cluster's postgres database.
  const admin = new pg.Client({ connectionString: url.replace(`/${database}?`, '/postgres?') });
  await admin.connect();
  t.after(() => admin.end());
  await admin.query(`ALTER DATABASE "${database}" ALLOW_CONNECTIONS false`);
  const cut = await state.db.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'fittingroom-listen'`);
  assert.equal(cut.rowCount, 1, 'one listening connection');
  const began = Date.now();
  while ((await state.generation(genId))!.status === 'pending') {
    assert.ok(Date.now() - began < 15_000, 'the try-on ends while the listener is away');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.equal(answered, false, 'the wait did not hear of the settle');

  // Back: the listener reconnects, reports the gap, and the appliance reads the waited-for try-on again.
  await admin.query(`ALTER DATABASE "${database}" ALLOW_CONNECTIONS true`);
  const reopened = Date.now();
  assert.equal((await waited).status, 'complete');
  assert.ok(Date.now() - reopened < 10_000, 'answered after the reconnect, not at the bound of the wait');
});
