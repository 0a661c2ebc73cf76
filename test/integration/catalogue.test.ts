/**
 * The catalogue's garments are edited in place (name, category, sizes, SKU, barcode, photo) and found by SKU or
 * barcode; a SKU or barcode belongs to one garment; a refused edit changes nothing, and a replaced photo's old
 * file goes once the change is durable.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { GarmentView } from '../../server/gui/contract.ts';
import type { State } from '../../server/store/schema.ts';
import { startTestApp, type TestAppliance } from '../helpers/appliance.ts';
import { validJpeg } from '../helpers/hostile-images.ts';

async function gui(app: TestAppliance, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${app.url}/gui/api${path}`, {
    method,
    headers: { authorization: `Bearer ${app.adminKey}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

async function add(app: TestAppliance, fields: Record<string, unknown>): Promise<Response> {
  return gui(app, 'POST', '/garments', {
    category: 'auto',
    sizes: ['M'],
    image: (await validJpeg(300, 400)).toString('base64'),
    ...fields,
  });
}

const garmentsOf = (app: TestAppliance): State['gui']['garments'] => structuredClone(app.appliance.store.state.gui.garments);

test('a garment is edited in place: name, category, sizes, SKU and barcode; "" removes a code', async (t) => {
  const app = await startTestApp(t);
  const response = await add(app, { name: 'Blue tee', sku: 'TEE-001', barcode: '4006381333931' });
  const created = (await response.json()) as GarmentView;
  assert.equal(response.status, 201, JSON.stringify(created));
  assert.deepEqual([created.sku, created.barcode], ['TEE-001', '4006381333931']);

  const edited = await gui(app, 'PATCH', `/garments/${created.id}`, { name: 'Navy tee', category: 'top', sizes: ['S', 'l'], barcode: '' });
  assert.equal(edited.status, 200);
  const view = (await edited.json()) as GarmentView;
  assert.deepEqual([view.name, view.category, view.sizes, view.sku, view.barcode], ['Navy tee', 'top', ['S', 'L'], 'TEE-001', null]);
  const listed = (await (await gui(app, 'GET', '/garments')).json()) as GarmentView[];
  assert.deepEqual(listed, [view], 'the list shows the edit');
  assert.equal((await gui(app, 'PATCH', '/garments/gar_01M00000000000000000000000', { name: 'x' })).status, 404);
});

test('a SKU or barcode belongs to one garment; refused edits and additions change nothing', async (t) => {
  const app = await startTestApp(t);
  const first = (await (await add(app, { name: 'Tee', sku: 'TEE-001', barcode: '111' })).json()) as GarmentView;
  const second = (await (await add(app, { name: 'Jeans', sku: 'JNS-001' })).json()) as GarmentView;
  const before = garmentsOf(app);
  for (const [method, path, body] of [
    ['POST', '/garments', { name: 'Copy', sku: 'tee-001' }],
    ['PATCH', `/garments/${second.id}`, { barcode: '111' }],
    ['PATCH', `/garments/${second.id}`, { name: 'Ok', colour: 'blue' }],
    ['PATCH', `/garments/${second.id}`, {}],
    ['PATCH', `/garments/${second.id}`, { sizes: ['M', 'XXXXL'] }],
    ['PATCH', `/garments/${second.id}`, { sku: 'a\u0007b' }],
    ['PATCH', `/garments/${second.id}`, { sku: 'x'.repeat(65) }],
  ] as const) {
    const response = method === 'POST' ? await add(app, body) : await gui(app, method, path, body);
    assert.equal(response.status, 422, `${method} ${JSON.stringify(body)}`);
    assert.equal(response.headers.get('content-type'), 'application/problem+json; charset=utf-8');
  }
  assert.deepEqual(garmentsOf(app), before, 'nothing changed');
  // Its own code again is no clash.
  assert.equal((await gui(app, 'PATCH', `/garments/${first.id}`, { sku: 'TEE-001' })).status, 200);
});

test('a new photo replaces the old one, whose file goes; a refused photo keeps it', async (t) => {
  const app = await startTestApp(t);
  const created = (await (await add(app, { name: 'Tee' })).json()) as GarmentView;
  const oldFile = join(app.dataDir, app.appliance.store.state.gui.garments[created.id]!.image.file);
  assert.equal((await gui(app, 'PATCH', `/garments/${created.id}`, { image: 'not an image' })).status, 415, 'not an image');
  assert.ok(existsSync(oldFile), 'a refused photo leaves the old one');

  const photo = await validJpeg(320, 420);
  const edited = await gui(app, 'PATCH', `/garments/${created.id}`, { image: photo.toString('base64') });
  assert.equal(edited.status, 200);
  const record = app.appliance.store.state.gui.garments[created.id]!;
  assert.deepEqual([record.image.width, record.image.height], [320, 420]);
  assert.ok(existsSync(join(app.dataDir, record.image.file)));
  assert.ok(!existsSync(oldFile), 'the old photo is gone');
  const served = await fetch(`${app.url}${created.imageUrl}`, { headers: { authorization: `Bearer ${app.adminKey}` } });
  assert.equal(served.status, 200);
});

test('a garment has up to six photos: more are added, any becomes the one try-ons use, extra ones are removed', async (t) => {
  const app = await startTestApp(t);
  const created = (await (await add(app, { name: 'Tee' })).json()) as GarmentView;
  const back = await validJpeg(300, 420);
  const added = await gui(app, 'POST', `/garments/${created.id}/photos`, { image: back.toString('base64') });
  assert.equal(added.status, 201);
  const two = (await added.json()) as GarmentView;
  assert.equal(two.photoUrls.length, 2);
  const size = async (url: string): Promise<string> => {
    const response = await fetch(`${app.url}${url}`, { headers: { authorization: `Bearer ${app.adminKey}` } });
    assert.equal(response.status, 200, url);
    return String((await response.arrayBuffer()).byteLength);
  };
  const [front, second] = [await size(two.photoUrls[0]!), await size(two.photoUrls[1]!)];

  // The back becomes the photo try-ons use; the front takes its place.
  const swapped = (await (await gui(app, 'PATCH', `/garments/${created.id}`, { mainPhoto: 1 })).json()) as GarmentView;
  assert.equal(await size(swapped.imageUrl), second);
  assert.equal(await size(swapped.photoUrls[1]!), front);
  assert.equal((await gui(app, 'PATCH', `/garments/${created.id}`, { mainPhoto: 2 })).status, 422, 'no photo 2');

  // The photo try-ons use cannot be removed; another can, and its file goes.
  const record = app.appliance.store.state.gui.garments[created.id]!;
  const frontFile = join(app.dataDir, record.morePhotos![0]!.file);
  assert.equal((await gui(app, 'DELETE', `/garments/${created.id}/photos/0`)).status, 409);
  const removed = await gui(app, 'DELETE', `/garments/${created.id}/photos/1`);
  assert.equal(removed.status, 200);
  assert.equal(((await removed.json()) as GarmentView).photoUrls.length, 1);
  assert.ok(!existsSync(frontFile), 'the removed photo’s file is gone');

  for (let k = 1; k < 6; k++)
    assert.equal((await gui(app, 'POST', `/garments/${created.id}/photos`, { image: back.toString('base64') })).status, 201);
  const before = garmentsOf(app);
  assert.equal((await gui(app, 'POST', `/garments/${created.id}/photos`, { image: back.toString('base64') })).status, 409, 'a seventh');
  assert.deepEqual(garmentsOf(app), before);
  const files = [
    app.appliance.store.state.gui.garments[created.id]!.image,
    ...app.appliance.store.state.gui.garments[created.id]!.morePhotos!,
  ];
  assert.equal((await gui(app, 'DELETE', `/garments/${created.id}`)).status, 204);
  assert.ok(
    files.every((photo) => !existsSync(join(app.dataDir, photo.file))),
    'removing the garment removes all its photos',
  );
});
