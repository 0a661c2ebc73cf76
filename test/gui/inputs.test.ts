/**
 * Inputs that would cost a credit for nothing: styling is either-or (tucked or untucked, open or closed), and a
 * new catalogue garment is detected from its photo (`auto`) unless staff choose what it is.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startTestAppliance } from '../helpers/appliance.ts';
import { browserMissing, launchBrowser, onEveryShopScreen, signInWithKey } from './browser.ts';

const skip = browserMissing() ?? false;

test('styling pairs exclude each other; a new garment defaults to auto', { skip, timeout: 120_000 }, async (t) => {
  const ta = await startTestAppliance(t);
  const browser = await launchBrowser(t);
  await onEveryShopScreen(t, browser, 'inputs', async (page) => {
    await signInWithKey(page, ta.url, ta.adminKey);
    const styling = page.getByRole('group', { name: 'Styling' });
    await styling.waitFor();
    const pressed = async () =>
      styling.locator('[aria-pressed="true"]').evaluateAll((buttons) => buttons.map((button) => button.textContent));
    for (const label of ['tucked', 'untucked', 'open', 'sleeves rolled', 'closed'])
      await styling.getByRole('button', { name: label, exact: true }).click();
    assert.deepEqual((await pressed()).sort(), ['closed', 'sleeves rolled', 'untucked']);

    await page.getByRole('link', { name: 'Catalogue' }).click();
    assert.equal(await page.locator('#garment-category').inputValue(), 'auto');
  });
});
