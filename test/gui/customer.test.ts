/**
 * The customer at the counter survives a look at another screen: the photo, the garment, the choices and the
 * try-on in progress are all there on coming back, and the try-on's result arrives. A garment's size defaults
 * to the customer's usual size, or the nearest one the garment comes in.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { composeEngine, startTestAppliance } from '../helpers/appliance.ts';
import { browserMissing, launchBrowser, onEveryShopScreen, signInWithKey } from './browser.ts';
import { addCatalogueGarment, garmentJpeg, personJpeg } from './media.ts';

const skip = browserMissing() ?? false;

test('leaving the Try on screen or reloading keeps the customer and the try-on in progress', { skip, timeout: 300_000 }, async (t) => {
  const ta = await startTestAppliance(t, { engines: [composeEngine({ delayMs: 3000 })] });
  await addCatalogueGarment(ta, { name: 'Linen shirt', category: 'top', sizes: ['S', 'M', 'L'] });
  const browser = await launchBrowser(t);
  let tryOns = 0;
  await onEveryShopScreen(t, browser, 'customer-kept', async (page) => {
    await signInWithKey(page, ta.url, ta.adminKey);

    await page.getByLabel('Customer’s usual size').selectOption('XL');
    await page.locator('#selfie-file').setInputFiles({ name: 'me.jpg', mimeType: 'image/jpeg', buffer: await personJpeg(600, 800) });
    await page.locator('[data-garment]').first().click();
    assert.equal(await page.getByLabel('Garment size').inputValue(), 'L', 'XL is not in stock: the nearest, L, not the smallest');
    await page.getByRole('button', { name: 'untucked', exact: true }).click();

    const visit = async (screen: string) => {
      await page.getByRole('link', { name: screen }).click();
      await page.waitForFunction((label) => document.querySelector('nav [aria-current="page"]')?.textContent === label, screen);
      await page.getByRole('link', { name: 'Try on' }).click();
      await page.locator('#start-try-on').waitFor();
    };
    await visit('History');
    // The catalogue is listed again on coming back (fetched): wait for it, then see which garment is chosen.
    await page.locator('[data-garment]').first().waitFor();
    assert.equal(await page.locator('#selfie-preview').count(), 1, 'the photo is still there');
    assert.equal(await page.locator('[data-garment][aria-pressed="true"]').count(), 1, 'so is the garment');
    assert.equal(await page.getByLabel('Garment size').inputValue(), 'L');
    assert.equal(await page.getByLabel('Customer’s usual size').inputValue(), 'XL');
    assert.equal(await page.getByRole('button', { name: 'untucked', exact: true }).getAttribute('aria-pressed'), 'true');

    await page.getByRole('button', { name: 'Start the try-on' }).click();
    await page.locator('#stage').waitFor();
    await visit('Usage');
    await page.locator('#result-image').waitFor();
    await page.waitForFunction(() => (document.querySelector<HTMLImageElement>('#result-image')?.naturalWidth ?? 0) > 0);
    // A reload (or a restart of the page) keeps the try-on: its result comes back, without the photo.
    await page.reload();
    await page.locator('#result-image').waitFor();
    await page.waitForFunction(() => (document.querySelector<HTMLImageElement>('#result-image')?.naturalWidth ?? 0) > 0);
    tryOns++;
    const list = (await (await ta.call('GET', '/api/v1/try-on')).json()) as { data: Array<{ status: string }> };
    assert.deepEqual(
      list.data.map((tryOn) => tryOn.status),
      Array<string>(tryOns).fill('complete'),
      'one try-on per screen size, finished and shown',
    );
  });
});

test(
  'New customer clears the screen in one tap, and erases the last customer’s photos when the shop chose that',
  { skip, timeout: 300_000 },
  async (t) => {
    const ta = await startTestAppliance(t, { engines: [composeEngine()] });
    const browser = await launchBrowser(t);
    await onEveryShopScreen(t, browser, 'new-customer', async (page) => {
      // The shop's choice is the appliance's: each screen size starts from the default (photos kept).
      const reset = await fetch(`${ta.url}/gui/api/settings`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${ta.adminKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ eraseOnNewCustomer: false, autoCapture: false }),
      });
      assert.equal(reset.status, 204);
      await signInWithKey(page, ta.url, ta.adminKey);
      const customerTriesOn = async () => {
        await page.locator('#selfie-file').setInputFiles({ name: 'me.jpg', mimeType: 'image/jpeg', buffer: await personJpeg(600, 800) });
        await page.locator('#garment-file').setInputFiles({ name: 'shirt.jpg', mimeType: 'image/jpeg', buffer: await garmentJpeg() });
        await page.getByRole('button', { name: 'open', exact: true }).click();
        await page.getByLabel('Customer’s usual size').selectOption('L');
        await page.getByRole('button', { name: 'Start the try-on' }).click();
        await page.locator('#result-image').waitFor();
        const list = (await (await ta.call('GET', '/api/v1/try-on?limit=1')).json()) as { data: Array<{ genId: string }> };
        return list.data[0]!.genId;
      };
      const cleared = async () => {
        await page.locator('#start-hint', { hasText: 'Still needed: a customer photo and a garment.' }).waitFor();
        assert.equal(await page.locator('#selfie-preview').count(), 0);
        assert.equal(await page.locator('#result').isHidden(), true);
        assert.equal(await page.getByLabel('Customer’s usual size').inputValue(), 'M');
        assert.equal(await page.getByRole('button', { name: 'open', exact: true }).getAttribute('aria-pressed'), 'false');
      };

      const first = await customerTriesOn();
      await page.getByRole('button', { name: 'New customer' }).click();
      await cleared();
      assert.equal((await ta.call('GET', `/api/v1/try-on/${first}/image`)).status, 200, 'by default the photos stay (History)');

      await page.getByRole('link', { name: 'Settings' }).click();
      await page.locator('#erase-on-new-customer').check();
      await page.getByText('New customer now erases').waitFor();
      await page.getByRole('link', { name: 'Try on' }).click();
      const second = await customerTriesOn();
      await page.getByRole('button', { name: 'New customer' }).click();
      await cleared();
      await page.getByText('the last one’s photos are erased').waitFor();
      const erased = (await (await ta.call('GET', `/api/v1/try-on/${second}`)).json()) as { erased: boolean };
      assert.equal(erased.erased, true);
    });
  },
);
