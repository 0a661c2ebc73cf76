/**
 * The shop-floor GUI end to end in Debian's Chromium: first sign-in with the
 * admin key (choosing a PIN), a catalogue garment, the customer's photo taken
 * through getUserMedia from Chromium's fake camera, a try-on with live
 * progress and the result, the usage screen against GET /api/v1/usage, erase,
 * sign-out and sign-in with the PIN. Screenshots of every screen go to
 * test-output/gui/.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import type { Page } from 'playwright-core';
import type { Account, TryOn, Usage } from '../../client/index.ts';
import { FRAMING_MESSAGES } from '../../server/gui/framing.ts';
import { composeEngine, startTestAppliance } from '../helpers/appliance.ts';
import {
  SCREENSHOTS,
  accessibilityProblems,
  browserMissing,
  launchBrowser,
  lookAt,
  onEveryShopScreen,
  screenshot,
  scrollComesToRest,
  signInWithKey,
} from './browser.ts';
import { garmentJpeg, hasFixtures, personJpeg, wellFramedPersonJpeg, writeFakeCamera } from './media.ts';

const STEP_TIMEOUT = 60_000;
const skip = browserMissing() ?? false;

async function scratch(t: TestContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'fittingroom-gui-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function openScreen(page: Page, name: string): Promise<void> {
  await page.getByRole('link', { name }).click();
  await page.waitForFunction((label) => document.querySelector('nav [aria-current="page"]')?.textContent === label, name);
}

test(
  'sign in, add a garment, take the photo with the camera, try on, check usage, erase, sign in with the PIN',
  { skip, timeout: 300_000 },
  async (t) => {
    const dir = await scratch(t);
    const camera = await writeFakeCamera(dir);
    const ta = await startTestAppliance(t, { engines: [composeEngine({ delayMs: 2500 })] });
    const browser = await launchBrowser(t, { fakeCamera: camera });
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, reducedMotion: 'reduce' });
    const page = await context.newPage();
    page.setDefaultTimeout(STEP_TIMEOUT);
    const pageErrors: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));
    const framingRequests: string[] = [];
    page.on('request', (request) => {
      if (request.url().endsWith('/gui/api/framing')) framingRequests.push(request.method());
    });

    // First sign-in: the admin key, choosing the staff PIN.
    await page.goto(`${ta.url}/`);
    await page.getByLabel('Admin key (fr_live_…)').waitFor();
    await lookAt(page, '01-sign-in-first');
    await page.getByLabel('Admin key (fr_live_…)').fill(ta.adminKey);
    await page.getByLabel(/Choose a staff PIN/).fill('2468');
    await page.getByRole('button', { name: 'Sign in with the key' }).click();
    await page.getByRole('navigation', { name: 'Screens' }).waitFor();
    const cookies = await context.cookies();
    const session = cookies.find((cookie) => cookie.name === 'fr_session');
    assert.ok(session, 'a session cookie is set');
    assert.equal(session.httpOnly, true);
    assert.equal(session.sameSite, 'Strict');

    // Catalogue: add a garment with its photo and sizes.
    await openScreen(page, 'Catalogue');
    await page.getByLabel('Name').fill('Red tee');
    await page.getByLabel('Category').selectOption('top');
    await page.locator('[data-size="M"]').click();
    await page.locator('[data-size="L"]').click();
    await page.getByLabel(/^Photo/).setInputFiles({ name: 'tee.jpg', mimeType: 'image/jpeg', buffer: await garmentJpeg() });
    await page.getByRole('button', { name: 'Add to the catalogue' }).click();
    await page.locator('#catalogue-grid article', { hasText: 'Red tee' }).waitFor();
    await page.waitForFunction(() =>
      [...document.querySelectorAll<HTMLImageElement>('#catalogue-grid img')].every((img) => img.complete && img.naturalWidth > 0),
    );
    await lookAt(page, '02-catalogue');
    await page.getByLabel('Search the catalogue').fill('jeans');
    assert.equal(await page.locator('#catalogue-grid article').count(), 0, 'the search hides garments that do not match');
    await page.getByLabel('Search the catalogue').fill('red');
    assert.equal(await page.locator('#catalogue-grid article').count(), 1);

    // Try on: the camera with its framing guide, then the photo.
    await openScreen(page, 'Try on');
    await page.getByRole('button', { name: 'Use the camera' }).click();
    await page.waitForFunction(() => (document.querySelector('video')?.videoWidth ?? 0) > 0);
    // The live framing advice replaces the written instructions once the appliance has seen a frame.
    await page.waitForFunction(() => document.querySelector<HTMLElement>('.guide-text')?.dataset.advice !== 'none');
    const advice = await page.locator('.guide-text').innerText();
    assert.ok(Object.values(FRAMING_MESSAGES).includes(advice), `"${advice}" is one of the framing messages`);
    await lookAt(page, '03-try-on-camera');
    await page.getByRole('button', { name: 'Take the photo' }).click();
    // The advice stays live through the 3-2-1 countdown; the camera and its frames stop with the photo.
    await page.waitForFunction(() => {
      const img = document.querySelector<HTMLImageElement>('#selfie-preview');
      return img !== null && img.complete && img.naturalWidth > 0;
    });
    const framingCalls = framingRequests.length;
    assert.ok(framingCalls >= 1);
    const photo = await page
      .locator('#selfie-preview')
      .evaluate((img: HTMLImageElement) => ({ width: img.naturalWidth, height: img.naturalHeight }));
    assert.deepEqual(photo, { width: 480, height: 640 }, 'the photo is the camera frame at its own resolution');
    assert.equal(await page.locator('video').count(), 0, 'the camera is off after the photo');

    await page.locator('[data-garment]', { hasText: 'Red tee' }).click();
    assert.equal(await page.locator('[data-garment][aria-pressed="true"]').count(), 1);
    await page.getByLabel('Garment size').selectOption('L');
    await page.getByLabel('Customer’s usual size').selectOption('M');
    await page.getByRole('button', { name: 'slim', exact: true }).click();
    await page.getByRole('button', { name: 'tucked', exact: true }).click();
    await lookAt(page, '04-try-on-ready');
    await page.getByRole('button', { name: 'Start the try-on' }).click();
    await page.locator('#stage').waitFor();
    await lookAt(page, '05-try-on-progress');
    await page.locator('#result-image').waitFor();
    await page.waitForFunction(() => {
      const img = document.querySelector<HTMLImageElement>('#result-image');
      return img !== null && img.complete && img.naturalWidth > 0;
    });
    // Shown once, large, in view with the focus on it, saying which engine made it.
    assert.equal(await page.locator('#result img').count(), 2, 'one before/after picture, not the result twice');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'result-title');
    assert.match(await page.locator('#result-engine').innerText(), /^Made by Test compose engine \(test-compose\)\./);
    // Dragging on the picture moves the line between before and after.
    const box = (await page.locator('#compare').boundingBox())!;
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.2, box.y + box.height / 2, { steps: 4 });
    await page.mouse.up();
    const split = Number(await page.locator('.compare-slider').inputValue());
    assert.ok(split >= 15 && split <= 25, `the line follows the drag (at ${split} %)`);
    await page.locator('#result').scrollIntoViewIfNeeded();
    await lookAt(page, '06-try-on-result');
    // The customer takes the picture home: a QR code for a link that downloads it with no key.
    await page.getByRole('button', { name: 'Take it home (QR code)' }).click();
    await page.locator('#qr').waitFor();
    const link = new URL(await page.locator('#take-home .mono').innerText());
    const taken = await fetch(`${ta.url}${link.pathname}`);
    assert.equal(taken.status, 200);
    assert.equal(taken.headers.get('content-type'), 'image/jpeg');
    await page.locator('#take-home').scrollIntoViewIfNeeded();
    await page.screenshot({ path: `${SCREENSHOTS}/06b-try-on-take-home.png` });
    assert.deepEqual(await accessibilityProblems(page), [], 'axe-core on the take-home QR code');
    // Seconds later: no frames went out once the camera stopped (one already on its way may still have been counted).
    assert.ok(framingRequests.length <= framingCalls + 1, `${framingRequests.length - framingCalls} framing calls after the photo`);

    const list = (await (await ta.call('GET', '/api/v1/try-on')).json()) as { data: TryOn[] };
    assert.equal(list.data.length, 1);
    const genId = list.data[0]!.genId;
    assert.equal(list.data[0]!.status, 'complete');
    assert.equal(await page.locator('#save').getAttribute('href'), `/api/v1/try-on/${genId}/image`);
    const slider = page.getByLabel('Before and after');
    await slider.focus();
    await page.keyboard.press('ArrowRight');
    assert.equal(Number(await slider.inputValue()), split + 1, 'the before/after slider moves with the keyboard');

    // Usage: the screen's numbers are the API's.
    await openScreen(page, 'Usage');
    await page.locator('#usage-totals').waitFor();
    await page.locator('#ledger-table').waitFor();
    await lookAt(page, '07-usage');
    const account = (await (await ta.call('GET', '/api/v1/account')).json()) as Account;
    assert.equal(await page.locator('#credits-remaining .stat-value').innerText(), String(account.creditsRemaining));
    assert.equal(await page.locator('#credits-reserved .stat-value').innerText(), String(account.creditsReserved));
    assert.equal(await page.locator('#trial .stat-value').innerText(), String(account.trialCreditsRemaining));
    const today = new Date();
    const to = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() + 1));
    const from = new Date(to.getTime() - 14 * 86_400_000);
    const usage = (await (
      await ta.call('GET', `/api/v1/usage?from=${from.toISOString().slice(0, 10)}&to=${to.toISOString().slice(0, 10)}&granularity=day`)
    ).json()) as Usage;
    assert.equal(usage.totals.submitted, 1);
    assert.equal(
      await page.locator('#usage-totals').innerText(),
      `${usage.totals.submitted} try-on started, ${usage.totals.completed} done, ${usage.totals.failed} failed, ${usage.totals.canceled} canceled; ${usage.totals.creditsUsed} credit used.`,
    );
    assert.equal(await page.locator('svg.chart rect').count(), 2, 'one bar in each chart: the completed try-on and its credit');

    // History shows it with its thumbnail.
    await openScreen(page, 'History');
    await page.locator(`[data-gen="${genId}"] img.thumb`).waitFor();
    await page.waitForFunction(() =>
      [...document.querySelectorAll<HTMLImageElement>('img.thumb')].every((img) => img.complete && img.naturalWidth > 0),
    );
    assert.match(await page.locator(`[data-gen="${genId}"]`).innerText(), /Done/);
    await lookAt(page, '08-history');

    // Settings: engines with device and readiness; a new key is shown once.
    await openScreen(page, 'Settings');
    await page.locator('[data-engine="test-compose"]').waitFor();
    assert.match(await page.locator('[data-engine="test-compose"]').innerText(), /Ready/);
    await page.getByLabel('New key name').fill('Till 2');
    await page.getByRole('button', { name: 'Create key' }).click();
    const shown = await page.locator('#new-key-value').inputValue();
    assert.match(shown, /^fr_live_/);
    assert.equal((await ta.call('GET', '/api/v1/account', { key: shown })).status, 200, 'the key shown once works');
    await lookAt(page, '09-settings');

    // Erase: from History, the customer's photos go and the record says so.
    await openScreen(page, 'History');
    await page.locator(`[data-gen="${genId}"]`).getByRole('button', { name: 'Erase photos' }).click();
    await page.locator(`[data-gen="${genId}"]`, { hasText: 'photos erased' }).waitFor();
    const erased = (await (await ta.call('GET', `/api/v1/try-on/${genId}`)).json()) as TryOn;
    assert.equal(erased.erased, true);
    assert.equal((await ta.call('GET', `/api/v1/try-on/${genId}/image`)).status, 404);

    // Sign out; sign in again with the PIN chosen at first sign-in.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('PIN', { exact: true }).waitFor();
    await lookAt(page, '10-sign-in-pin');
    await page.getByLabel('PIN', { exact: true }).fill('1111');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('alert').filter({ hasText: 'That PIN is not right.' }).waitFor();
    await page.getByLabel('PIN', { exact: true }).fill('2468');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('navigation', { name: 'Screens' }).waitFor();
    assert.deepEqual(pageErrors, []);
  },
);

test(
  'on every shop screen: the camera guide, the result large and in view, dragged on the picture, taken home, erased in one tap',
  { skip, timeout: 300_000 },
  async (t) => {
    const dir = await scratch(t);
    const camera = await writeFakeCamera(dir, 480, 640, wellFramedPersonJpeg);
    const ta = await startTestAppliance(t, { engines: [composeEngine()] });
    const browser = await launchBrowser(t, { fakeCamera: camera });
    await onEveryShopScreen(t, browser, 'try-on-flow', async (page, { width, height }) => {
      await signInWithKey(page, ta.url, ta.adminKey);
      await screenshot(page, `11-try-on-empty-${width}`);

      // A customer standing well in the camera's view: the advice says so, above the body, and the shutter stands out.
      await page.getByRole('button', { name: 'Use the camera' }).click();
      await page.waitForFunction(() => document.querySelector<HTMLElement>('.guide-text')?.dataset.advice !== 'none');
      if (hasFixtures) {
        await page.waitForFunction(() => document.querySelector('#take-photo')?.classList.contains('ready'));
        assert.equal(await page.locator('.guide-text').innerText(), FRAMING_MESSAGES.ok);
      } else {
        assert.ok(Object.values(FRAMING_MESSAGES).includes(await page.locator('.guide-text').innerText()));
      }
      await screenshot(page, `11-try-on-camera-${width}`);
      await page.getByRole('link', { name: 'History' }).click();
      // The screen changes after the click's handler runs: wait for the video to go (or time out, failing the test).
      await page
        .waitForFunction(() => document.querySelectorAll('video').length === 0)
        .catch((error: Error) => assert.fail(`leaving the screen stops the camera: ${error.message}`));
      await page.getByRole('link', { name: 'Try on' }).click();

      // A file for the photo and an uploaded garment photo.
      await page.locator('#selfie-file').setInputFiles({ name: 'me.jpg', mimeType: 'image/jpeg', buffer: await personJpeg(600, 800) });
      await page.locator('#garment-file').setInputFiles({ name: 'shirt.jpg', mimeType: 'image/jpeg', buffer: await garmentJpeg() });
      await page.getByRole('button', { name: 'Start the try-on' }).click();
      await page.locator('#result-image').waitFor();
      await page.waitForFunction(() => (document.querySelector<HTMLImageElement>('#result-image')?.naturalWidth ?? 0) > 0);

      // The result: focused, scrolled into view, large, and the before/after line follows a drag on the picture.
      await page.waitForFunction(() => document.activeElement?.id === 'result-title');
      await scrollComesToRest(page);
      const picture = (await page.locator('#compare').boundingBox())!;
      assert.ok(picture.y >= 0 && picture.y < height, `the picture starts on screen (at ${Math.round(picture.y)} px)`);
      assert.ok(picture.width >= Math.min(0.8 * width, 600), `the picture is large (${Math.round(picture.width)} px wide)`);
      await page.mouse.move(picture.x + picture.width / 2, picture.y + Math.min(picture.height, height - picture.y) / 2);
      await page.mouse.down();
      await page.mouse.move(picture.x + picture.width * 0.8, picture.y + Math.min(picture.height, height - picture.y) / 2, { steps: 4 });
      await page.mouse.up();
      const split = Number(await page.locator('.compare-slider').inputValue());
      assert.ok(split >= 75 && split <= 85, `the line follows the drag (at ${split} %)`);
      await page.getByRole('button', { name: 'Take it home (QR code)' }).click();
      await page.locator('#qr').waitFor();
      assert.deepEqual(await accessibilityProblems(page), [], 'axe-core on the result and its QR code');
      await screenshot(page, `12-try-on-result-${width}`);
      const [record] = ((await (await ta.call('GET', '/api/v1/try-on?limit=1')).json()) as { data: TryOn[] }).data;
      assert.equal(record?.status, 'complete');

      await page.getByRole('button', { name: 'Erase the customer’s photos' }).click();
      await page.getByText('The customer’s photos are erased.').waitFor();
      assert.equal(await page.locator('#selfie-preview').count(), 0, 'the photo is gone from the screen');
      assert.equal(await page.locator('.picked-list').count(), 0, 'the uploaded garment photo is gone too');
      assert.equal(await page.locator('#result').isHidden(), true);
      const after = (await (await ta.call('GET', `/api/v1/try-on/${record!.genId}`)).json()) as TryOn;
      assert.equal(after.erased, true);
    });
  },
);

test('without an engine the GUI says so in plain words', { skip, timeout: 180_000 }, async (t) => {
  const ta = await startTestAppliance(t, { engines: [] });
  const browser = await launchBrowser(t);
  await onEveryShopScreen(t, browser, '13-no-engine', async (page) => {
    await signInWithKey(page, ta.url, ta.adminKey);
    await page.getByText('No try-on engine is ready yet').waitFor();
    await page.locator('#selfie-file').setInputFiles({ name: 'me.jpg', mimeType: 'image/jpeg', buffer: await personJpeg() });
    await page.locator('#garment-file').setInputFiles({ name: 'shirt.jpg', mimeType: 'image/jpeg', buffer: await garmentJpeg() });
    // Everything is chosen, yet the hint under Start does not call it ready.
    await page.locator('#start-hint', { hasText: 'but no try-on engine is ready' }).waitFor();
    await page.getByRole('button', { name: 'Start the try-on' }).click();
    const message = await page.locator('#result-error').innerText();
    assert.match(message, /No try-on engine is ready on this appliance yet/);
    const account = (await (await ta.call('GET', '/api/v1/account')).json()) as Account;
    assert.equal(account.creditsReserved, 0, 'nothing was reserved');
  });
});
