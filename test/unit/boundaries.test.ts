/**
 * Process boundaries and single-owner imports, checked on the source:
 * server/ never reaches into electron, main/, renderer/ or test/; renderer/
 * imports only its own modules and type-only contracts; main/ never reaches
 * into server/ or renderer/; only store/db.ts imports lowdb at run time.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { test } from 'node:test';

const ROOT = join(import.meta.dirname, '..', '..');

interface Import {
  spec: string;
  typeOnly: boolean;
}

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)));
}

function importsOf(file: string): Import[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const found: Import[] = [];
  for (const m of text.matchAll(/^\s*(import|export)(\s+type)?\b[^'"]*?\bfrom\s+['"]([^'"]+)['"]/gm))
    found.push({ spec: m[3]!, typeOnly: Boolean(m[2]) });
  for (const m of text.matchAll(/^\s*import\s+['"]([^'"]+)['"]/gm)) found.push({ spec: m[1]!, typeOnly: false });
  for (const m of text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) found.push({ spec: m[1]!, typeOnly: false });
  return found;
}

test('server/ never imports electron, main/, renderer/ or test/', () => {
  for (const file of sources('server')) {
    for (const { spec } of importsOf(file)) {
      assert.ok(!/^electron(\/|$)/.test(spec), `${file} imports ${spec}`);
      if (spec.startsWith('.')) {
        const target = relative(ROOT, join(ROOT, dirname(file), spec));
        assert.ok(target.startsWith('server/') || target === 'package.json', `${file} imports ${spec} (outside server/)`);
      }
    }
  }
});

test('only server/store/db.ts imports lowdb at run time', () => {
  const importers = sources('server').filter((file) =>
    importsOf(file).some(({ spec, typeOnly }) => !typeOnly && (spec === 'lowdb' || spec.startsWith('lowdb/'))),
  );
  assert.deepEqual(importers, ['server/store/db.ts']);
});

test('only server/onnx/ort.ts imports onnxruntime-node; only the ONNX writer imports onnx-proto', () => {
  const importersOf = (pkg: string): string[] =>
    sources('server').filter((file) => importsOf(file).some(({ spec, typeOnly }) => !typeOnly && spec === pkg));
  assert.deepEqual(importersOf('onnxruntime-node'), ['server/onnx/ort.ts']);
  assert.deepEqual(importersOf('onnx-proto'), ['server/onnx/writer.ts']);
});

const RENDERER_CONTRACTS = ['client/index.ts', 'server/gui/contract.ts', 'main/ipc-contract.ts'];
/** Modules the GUI bundles as they are: they import nothing. */
const RENDERER_SHARED = ['server/kernel/vocabulary.ts'];

test('renderer/ imports only its own modules, the vocabulary, and only types from the client, the GUI contract and the shell bridge', () => {
  const files = sources('renderer');
  assert.ok(files.length > 5, 'the scanner found the renderer');
  for (const file of files) {
    for (const { spec, typeOnly } of importsOf(file)) {
      assert.ok(spec.startsWith('.'), `${file} imports the package ${spec}: the GUI is bundled from its own code only`);
      const target = relative(ROOT, join(ROOT, dirname(file), spec));
      if (target.startsWith('renderer/') || RENDERER_SHARED.includes(target)) continue;
      assert.ok(typeOnly && RENDERER_CONTRACTS.includes(target), `${file} imports ${spec}: only type-only contracts may cross`);
    }
  }
});

test('what the GUI bundles from server/ imports nothing', () => {
  for (const file of RENDERER_SHARED) assert.deepEqual(importsOf(file), [], `${file} must import nothing`);
});

test('main/ never imports server/ or renderer/ (it starts the server as a process)', () => {
  for (const file of sources('main')) {
    for (const { spec } of importsOf(file)) {
      if (!spec.startsWith('.')) continue;
      const target = relative(ROOT, join(ROOT, dirname(file), spec));
      assert.ok(target.startsWith('main/'), `${file} imports ${spec} (outside main/)`);
    }
  }
});

test('the import scanner sees real imports', () => {
  assert.ok(importsOf('server/store/db.ts').some(({ spec }) => spec === 'lowdb'));
  assert.ok(importsOf('server/store/durable-json-adapter.ts').some(({ spec, typeOnly }) => spec === 'lowdb' && typeOnly));
  assert.ok(importsOf('server/http-app.ts').some(({ spec }) => spec === './api/routes/try-on.ts'));
  assert.ok(importsOf('renderer/views/try-on.ts').some(({ spec, typeOnly }) => spec === '../../client/index.ts' && typeOnly));
});

/**
 * server/'s floor plan, lowest first: a module may import its own floor's modules and those of the floors below,
 * never one above (type-only imports included, since a type ties a module to another's shape as much as a call).
 * A floor is a folder, or one of server/'s own files.
 */
const FLOORS = [
  'version.ts', // the package's version: nothing
  'kernel', // errors, the vocabulary, durable files, ids: imports nothing of server/
  'onnx', // the ONNX writer and hand-built graphs
  'store', // the state's schema, lowdb, the archive
  'vision', // person analysis and its models
  'engines', // the engine contract, host, warp and fashn
  'images', // decoding, checking and storing images
  'config.ts', // defaults, environment and flags (image limits)
  'credits',
  'keys',
  'idempotency',
  'webhooks', // the outbox is written with every terminal state, so jobs stand on it
  'jobs',
  'vouchers',
  'state', // the state gateway: lowdb.ts and postgres/, one contract (issue 16)
  'tryons', // the try-on service (submit, find, list, cancel, erase) and submit validation
  'gui', // the GUI's server side: sessions, catalogue, framing, the bundle
  'api', // HTTP: middleware (no feature imported: the GUI session is injected), routes, OpenAPI
  'http-app.ts', // createApp(deps): the Express app
  'services.ts', // the features wired into AppDeps around a store and an engine catalogue
  'appliance.ts', // the composition
  'shared-appliance.ts', // the composition on a shared database (issue 16)
  'worker.ts', // a GPU worker on a shared database: engines and the claim loop, no HTTP
  'index.ts', // the headless server's entry
  'cli.ts', // `fittingroom serve|keys|vouchers`: serve starts index.ts
];

function floorOf(file: string): string {
  const parts = file.split('/');
  assert.equal(parts[0], 'server');
  const floor = parts[1]!;
  assert.ok(FLOORS.includes(floor), `${file}: server/${floor} is on no floor of the plan; add it to FLOORS`);
  return floor;
}

test('server/ imports only down its floor plan (type-only imports too)', () => {
  const upward: string[] = [];
  for (const file of sources('server')) {
    const from = FLOORS.indexOf(floorOf(file));
    for (const { spec } of importsOf(file)) {
      if (!spec.startsWith('.')) continue;
      const target = relative(ROOT, join(ROOT, dirname(file), spec));
      if (!target.startsWith('server/')) continue;
      if (FLOORS.indexOf(floorOf(target)) > from) upward.push(`${file} imports ${target}`);
    }
  }
  assert.deepEqual(upward, []);
});

test('HTTP middleware imports no feature: only the kernel, the store and the keys it checks against', () => {
  const allowed = ['server/kernel/', 'server/store/', 'server/keys/', 'server/api/'];
  for (const file of sources('server/api/middleware')) {
    for (const { spec } of importsOf(file)) {
      if (!spec.startsWith('.')) continue;
      const target = relative(ROOT, join(ROOT, dirname(file), spec));
      assert.ok(
        allowed.some((prefix) => target.startsWith(prefix)),
        `${file} imports ${target}`,
      );
    }
  }
});

test('the HTTP layer reads no state document: its reads go through the stores of server/state/', () => {
  const direct: string[] = [];
  for (const file of [...sources('server/api'), 'server/http-app.ts']) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    for (const [n, line] of text.split('\n').entries())
      if (/\bstore\.state\b|\.state\.(gui|keys|generations|ledger)\b/.test(line)) direct.push(`${file}:${n + 1}`);
  }
  assert.deepEqual(direct, []);
});

test('only server/state/postgres/db.ts imports pg at run time', () => {
  const importers = sources('server').filter((file) =>
    importsOf(file).some(({ spec, typeOnly }) => !typeOnly && (spec === 'pg' || spec.startsWith('pg/'))),
  );
  assert.deepEqual(importers, ['server/state/postgres/db.ts']);
});
