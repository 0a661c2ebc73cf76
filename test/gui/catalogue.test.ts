/**
 * The catalogue as staff use it: a scanned barcode (typed, then Enter, as a USB scanner does) picks the garment on
 * the Try on screen; a garment is edited in the Catalogue's own form, and gets a second photo for try-ons.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startTestAppliance } from '../helpers/appliance.ts';
import { accessibilityProblems, browserMissing, launchBrowser, onEveryShopScreen, screenshot, signInWithKey } from './browser.ts';
import { addCatalogueGarment, garmentJpeg } from './media.ts';

const skip = browserMissing() ?? false;

test('a scanned barcode picks its garment; a garment is edited in the catalogue', { skip, timeout: 180_000 }, async (t) => {
  const ta = await startTestAppliance(t);
  const browser = await launchBrowser(t);
  await onEveryShopScreen(t, browser, 'catalogue', async (page, { width }) => {
    // Each screen size gets its own garments: the catalogue is the appliance's, shared by all the runs.
    const blue = `Blue tee ${width}`;
    const jeansBarcode = `50${width}0000001`;
    for (const [name, barcode] of [
      [blue, `40${width}0000001`],
      [`Black jeans ${width}`, jeansBarcode],
    ] as const)
      await addCatalogueGarment(ta, { name, category: 'auto', sizes: ['M'], barcode });
    await signInWithKey(page, ta.url, ta.adminKey);

    const search = page.getByLabel('Search the catalogue');
    await search.pressSequentially(jeansBarcode);
    await search.press('Enter');
    await page.locator('.picked', { hasText: `Black jeans ${width}` }).waitFor();
    assert.equal(await page.locator('[data-garment][aria-pressed="true"]').count(), 1, 'one garment picked');
    assert.equal(await search.inputValue(), '', 'the search is cleared for the next scan');

    await page.getByRole('link', { name: 'Catalogue' }).click();
    await page.getByRole('button', { name: `Edit ${blue}` }).click();
    assert.equal(await page.getByLabel('Name').inputValue(), blue);
    assert.deepEqual(await accessibilityProblems(page), [], 'axe-core on the edit form');
    await page.getByLabel('Name').fill(`Navy tee ${width}`);
    await page.getByLabel(/^SKU/).fill(`TEE-NAVY-${width}`);
    await page.getByRole('button', { name: 'Save the changes' }).click();
    await page.locator('.garment-card', { hasText: `Navy tee ${width}` }).waitFor();
    await screenshot(page, `catalogue-edited-${width}`);
    await page.getByLabel('Search the catalogue').fill(`tee-navy-${width}`);
    assert.equal(await page.locator('.garment-card').count(), 1, 'found by its SKU');

    // A second photo, which then becomes the one try-ons use.
    await page.getByRole('button', { name: `Edit Navy tee ${width}` }).click();
    await page.locator('#add-photo-file').setInputFiles({ name: 'back.jpg', mimeType: 'image/jpeg', buffer: await garmentJpeg() });
    await page.locator('.photo-choice').nth(1).waitFor();
    const second = await page.locator('.photo-choice img').nth(1).getAttribute('src');
    await page.getByRole('button', { name: 'Use for try-ons' }).click();
    // Addresses say which photo file they show (?v=…): the first place now shows the file the second showed.
    const version = new URL(second!, ta.url).searchParams.get('v');
    await page.waitForFunction((v) => document.querySelector('.photo-choice img')?.getAttribute('src')?.endsWith(`?v=${v}`), version);
    assert.deepEqual(await accessibilityProblems(page), [], 'axe-core on the photos of a garment');
    assert.equal(await page.locator('.photo-choice').count(), 2);
  });
});
