/**
 * The camera's photo is what its preview shows: a 16:9 camera in the 3:4 preview is cropped to the preview's
 * view, at the camera's own resolution, after a 3-2-1 countdown over the preview.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startTestAppliance } from '../helpers/appliance.ts';
import { browserMissing, launchBrowser, signInWithKey } from './browser.ts';
import { writeFakeCamera } from './media.ts';

const skip = browserMissing() ?? false;

test('a 16:9 camera gives a 3:4 photo, the preview’s own view, after a countdown', { skip, timeout: 120_000 }, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'fittingroom-camera-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const camera = await writeFakeCamera(dir, 640, 360);
  const ta = await startTestAppliance(t);
  const browser = await launchBrowser(t, { fakeCamera: camera });
  const page = await browser.newPage({ viewport: { width: 1024, height: 768 } });
  page.setDefaultTimeout(30_000);
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
