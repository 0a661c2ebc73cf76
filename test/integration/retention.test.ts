import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { sweep } from '../../server/jobs/retention.ts';
import { startTestAppliance, tempDataDir } from '../helpers/appliance.ts';
import { submission } from '../helpers/inputs.ts';

test('images expire after 7 days and idempotency replies after 24 h; the records stay', async (t) => {
  let now = Date.now();
  const app = await startTestAppliance(t, { clock: () => new Date(now) });
  const body = await submission();
  const accepted = await app.call('POST', '/api/v1/try-on', { body, headers: { 'idempotency-key': 'once' } });
  const { genId } = (await accepted.json()) as { genId: string };
  const done = (await (await app.call('GET', `/api/v1/try-on/${genId}?wait=20`)).json()) as { expiresAt: string };
  assert.equal(Date.parse(done.expiresAt) - Date.parse(app.appliance.store.state.generations[genId]!.createdAt), 7 * 86_400_000);

  now += 25 * 3_600_000;
  assert.equal((await sweep(app.appliance.store, new Date(now), app.appliance.archive)).idempotencyForgotten, 1);
  const again = await app.call('POST', '/api/v1/try-on', { body, headers: { 'idempotency-key': 'once' } });
  assert.equal(again.status, 202);
  assert.equal(again.headers.get('idempotent-replayed'), null, 'a key past its 24 h executes anew');
  const second = ((await again.json()) as { genId: string }).genId;
  await app.call('GET', `/api/v1/try-on/${second}?wait=20`);

  now += 6 * 86_400_000;
  const report = await sweep(app.appliance.store, new Date(now), app.appliance.archive);
  assert.equal(report.imagesExpired, 1, 'only the first is older than 7 days');
  assert.ok(!existsSync(join(app.dataDir, 'images', genId)));
  assert.ok(existsSync(join(app.dataDir, 'images', second)));
  const expired = (await (await app.call('GET', `/api/v1/try-on/${genId}`)).json()) as Record<string, unknown>;
  assert.deepEqual([expired.status, expired.erased, expired.creditCharged, expired.image], ['complete', true, true, undefined]);
});

test('image folders that no record references are removed at start-up', async (t) => {
  const dataDir = await tempDataDir();
  const orphan = join(dataDir, 'images', 'gen_01M00000000000000000000000');
  await mkdir(orphan, { recursive: true });
  await writeFile(join(orphan, 'selfie.jpg'), 'left by a crash between writing files and committing');
  const app = await startTestAppliance(t, { dataDir });
  assert.ok(!existsSync(orphan));
  assert.equal((await app.call('GET', '/api/v1/health', { key: null })).status, 200);
});

test('temporary files a crash left beside a kept image are removed at start-up, the image kept', async (t) => {
  const dataDir = await tempDataDir();
  const first = await startTestAppliance(t, { dataDir });
  const { genId } = (await (await first.call('POST', '/api/v1/try-on', { body: await submission() })).json()) as { genId: string };
  await first.call('GET', `/api/v1/try-on/${genId}?wait=20`);
  await first.appliance.close();
  const left = join(dataDir, 'images', genId, '.result.png.0123456789ab.tmp');
  await writeFile(left, 'half an image');
  const again = await startTestAppliance(t, { dataDir });
  assert.ok(!existsSync(left));
  assert.equal((await again.call('GET', `/api/v1/try-on/${genId}/image`, { key: first.adminKey })).status, 200);
});

test('inputs can be erased as soon as a generation is terminal', async (t) => {
  const app = await startTestAppliance(t, { config: { eraseInputsWhenDone: true } });
  const { genId } = (await (await app.call('POST', '/api/v1/try-on', { body: await submission() })).json()) as { genId: string };
  const status = (await (await app.call('GET', `/api/v1/try-on/${genId}?wait=20`)).json()) as Record<string, unknown>;
  assert.equal(status.status, 'complete');
  assert.ok(typeof status.image === 'string');
  const record = app.appliance.store.state.generations[genId]!;
  assert.equal(record.inputs, null);
  assert.ok(!existsSync(join(app.dataDir, 'images', genId, 'selfie.jpg')));
  assert.ok(existsSync(join(app.dataDir, record.result!.file)));
});
