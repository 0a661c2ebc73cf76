/**
 * A try-on by keyboard alone, counted: from the Try on screen, "New customer", a photo file, a catalogue garment,
 * Start, and the take-home QR code, in under 12 key presses (the file dialog itself is the operating system's and
 * is answered by the test). Focus moves on with the work; nothing needs the mouse.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FileChooser, Page } from 'playwright-core';
import { composeEngine, startTestAppliance } from '../helpers/appliance.ts';
import { browserMissing, launchBrowser, onEveryShopScreen, signInWithKey } from './browser.ts';
import { addCatalogueGarment, personJpeg } from './media.ts';

const skip = browserMissing() ?? false;

/** The focused element's accessible text (its label, or its own text). */
function focused(page: Page): Promise<string> {
  return page.evaluate(() => {
    const element = document.activeElement as HTMLElement | null;
    return (element?.getAttribute('aria-label') ?? element?.innerText ?? '').trim();
  });
}

test('a keyboard-only try-on from New customer to the QR code takes under 12 key presses', { skip, timeout: 180_000 }, async (t) => {
  const ta = await startTestAppliance(t, { engines: [composeEngine()] });
  await addCatalogueGarment(ta, { name: 'Blue tee', category: 'auto', sizes: ['S', 'M', 'L'] });
  const browser = await launchBrowser(t);
  await onEveryShopScreen(t, browser, 'keyboard-try-on', async (page, screen) => {
    // Listening from the start: Playwright turns on catching the file dialog when the first listener is added, and
    // that must be done before the key press that opens it (under load, a listener added with the press came late).
    const chooser = new Promise<FileChooser>((resolve) => page.once('filechooser', resolve));
    await signInWithKey(page, ta.url, ta.adminKey);
    await page.locator('.garment-tile').first().waitFor();

    let presses = 0;
    const press = async (key: string): Promise<void> => {
      presses++;
      await page.keyboard.press(key);
    };
    /** Tabs forward to the control named `name` (each Tab counted). */
    const tabTo = async (name: string): Promise<void> => {
      for (let i = 0; i < 20 && (await focused(page)) !== name; i++) await press('Tab');
      assert.equal(await focused(page), name, `Tab reaches "${name}"`);
    };

    const started = performance.now();
    await tabTo('New customer');
    await press('Enter');
    await page.waitForFunction(() => document.activeElement?.id === 'start-camera');
    await tabTo('Choose a photo file');
    await press('Enter');
    await (await chooser).setFiles({ name: 'customer.jpg', mimeType: 'image/jpeg', buffer: await personJpeg(600, 800) });
    await page.waitForFunction(() => document.activeElement?.classList.contains('garment-tile'));
    assert.match(await focused(page), /Blue tee/, 'after the photo, focus is on the first garment');
    await press('Enter');
    await page.waitForFunction(() => document.activeElement?.id === 'start-try-on');
    await press('Enter');
    await page.locator('#take-home-button').waitFor();
    await tabTo('Take it home (QR code)');
    await press('Enter');
    await page.locator('#qr').waitFor();
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `keyboard-only try-on at ${screen.width} px: ${presses} key presses, ${seconds.toFixed(1)} s from New customer to the QR code`,
    );
    assert.ok(presses < 12, `${presses} key presses`);
  });
});
