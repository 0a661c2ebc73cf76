/**
 * The camera's photo is what its preview shows: a 16:9 camera in the 3:4 preview is cropped to the preview's
 * view, at the camera's own resolution, after a 3-2-1 countdown over the preview. A phone's photo file is
 * shrunk before it is sent.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startTestAppliance } from '../helpers/appliance.ts';
import { browserMissing, launchBrowser, onEveryShopScreen, signInWithKey } from './browser.ts';
import sharp from 'sharp';
import { garmentJpeg, hasFixtures, personJpeg, wellFramedPersonJpeg, writeFakeCamera } from './media.ts';

const skip = browserMissing() ?? false;

test('a 16:9 camera gives a 3:4 photo, the preview’s own view, after a countdown', { skip, timeout: 300_000 }, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'fittingroom-camera-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const camera = await writeFakeCamera(dir, 640, 360);
  const ta = await startTestAppliance(t);
  const browser = await launchBrowser(t, { fakeCamera: camera });
  await onEveryShopScreen(t, browser, 'camera-photo', async (page) => {
    await signInWithKey(page, ta.url, ta.adminKey);
    await page.getByRole('button', { name: 'Use the camera' }).click();
    await page.waitForFunction(() => (document.querySelector('video')?.videoWidth ?? 0) > 0);
    const preview = await page.locator('.camera').boundingBox();
    await page.getByRole('button', { name: 'Take the photo' }).click();
    await page.locator('.countdown', { hasText: '3' }).waitFor();
    await page.locator('.countdown', { hasText: '1' }).waitFor();
    await page.waitForFunction(() => (document.querySelector<HTMLImageElement>('#selfie-preview')?.naturalWidth ?? 0) > 0);
    const photo = await page
      .locator('#selfie-preview')
      .evaluate((img: HTMLImageElement) => ({ width: img.naturalWidth, height: img.naturalHeight }));
    assert.equal(photo.height, 360, 'the camera’s own resolution');
    assert.ok(
      Math.abs(photo.width / photo.height - preview!.width / preview!.height) < 0.01,
      `${photo.width}×${photo.height} has the preview’s shape`,
    );
  });
});

test('a 12-megapixel photo file is shrunk in the browser before it is sent', { skip, timeout: 120_000 }, async (t) => {
  const ta = await startTestAppliance(t);
  const browser = await launchBrowser(t);
  const page = await browser.newPage({ viewport: { width: 1024, height: 768 } });
  page.setDefaultTimeout(30_000);
  const bodies: string[] = [];
  page.on('request', (request) => {
    if (request.method() === 'POST' && request.url().endsWith('/api/v1/try-on')) bodies.push(request.postData() ?? '');
  });
  await signInWithKey(page, ta.url, ta.adminKey);
  const big = await sharp(await personJpeg(600, 800))
    .resize(3000, 4000)
    .jpeg({ quality: 90 })
    .toBuffer();
  await page.locator('#selfie-file').setInputFiles({ name: 'phone.jpg', mimeType: 'image/jpeg', buffer: big });
  await page.locator('#garment-file').setInputFiles({ name: 'shirt.jpg', mimeType: 'image/jpeg', buffer: await garmentJpeg() });
  await page.getByRole('button', { name: 'Start the try-on' }).click();
  await page.locator('#result-image').waitFor();
  const sent = JSON.parse(bodies[0]!) as { selfie: string };
  const selfie = Buffer.from(sent.selfie.replace(/^data:[^,]+,/, ''), 'base64');
  const { width, height } = await sharp(selfie).metadata();
  assert.deepEqual([width, height], [1536, 2048], 'the long side is 2048 px, the shape kept');
});

test(
  'with auto-capture chosen in Settings the camera takes the photo by itself once the guide says OK',
  { skip: skip || (hasFixtures ? false : 'needs the shared fixtures’ well-framed person'), timeout: 300_000 },
  async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'fittingroom-camera-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const camera = await writeFakeCamera(dir, 480, 640, wellFramedPersonJpeg);
    const ta = await startTestAppliance(t);
    const chosen = await fetch(`${ta.url}/gui/api/settings`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${ta.adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ autoCapture: true }),
    });
    assert.equal(chosen.status, 204);
    const browser = await launchBrowser(t, { fakeCamera: camera });
    await onEveryShopScreen(t, browser, 'camera-auto', async (page) => {
      await signInWithKey(page, ta.url, ta.adminKey);
      await page.getByRole('button', { name: 'Use the camera' }).click();
      // Nobody presses the shutter: the countdown starts by itself, and the photo follows.
      await page.locator('.countdown', { hasText: '3' }).waitFor();
      await page.waitForFunction(() => (document.querySelector<HTMLImageElement>('#selfie-preview')?.naturalWidth ?? 0) > 0);
      assert.equal(await page.locator('video').count(), 0, 'the camera stops once the photo is taken');
    });
  },
);

test('the shop’s choices are checked whole: unknown or non-boolean settings change nothing', { skip, timeout: 60_000 }, async (t) => {
  const ta = await startTestAppliance(t);
  const put = (body: unknown) =>
    fetch(`${ta.url}/gui/api/settings`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${ta.adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  for (const body of [{}, { autoCapture: 'yes' }, { autoCapture: true, colour: 'red' }, { eraseOnNewCustomer: true, autoCapture: 1 }]) {
    const refused = await put(body);
    assert.equal(refused.status, 422, JSON.stringify(body));
    assert.equal(refused.headers.get('content-type'), 'application/problem+json; charset=utf-8');
  }
  const settings = (await (await fetch(`${ta.url}/gui/api/settings`, { headers: { authorization: `Bearer ${ta.adminKey}` } })).json()) as {
    autoCapture: boolean;
    eraseOnNewCustomer: boolean;
  };
  assert.deepEqual([settings.autoCapture, settings.eraseOnNewCustomer], [false, false], 'no refused call changed a setting');
  assert.equal((await put({ autoCapture: true, eraseOnNewCustomer: true })).status, 204);
});
