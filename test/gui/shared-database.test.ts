/**
 * The shop-floor GUI on a shared database (`serve --database`, issue 16): the same page over the PostgreSQL stores.
 * Staff sign in on one API process, pick a catalogue garment (its photo in the database), try it on, take the
 * picture home through a link that the other process serves, and erase the customer's photos.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defaultConfig } from '../../server/config.ts';
import { startSharedAppliance, type SharedAppliance } from '../../server/shared-appliance.ts';
import { composeEngine } from '../helpers/appliance.ts';
import { clusterForFile } from '../helpers/pg-cluster.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { browserMissing, launchBrowser, screenshot, signInWithKey } from './browser.ts';
import { addCatalogueGarment, personJpeg } from './media.ts';

const postgres = clusterForFile('gui');
const skip = browserMissing() ?? postgres.skip;

test(
  'on a shared database: sign in, try on a catalogue garment, take it home from the other process, erase',
  { skip, timeout: 180_000 },
  async (t) => {
    const url = await postgres.newDatabase();
    const start = async () => {
      const config = defaultConfig({ port: 0, dataDir: await tempDir('fr-gui-db-'), builtinEngines: false, database: url });
      const appliance = await startSharedAppliance({ config, database: url, engines: [composeEngine({ delayMs: 200 })], log: () => {} });
      t.after(() => appliance.close());
      return appliance;
    };
    const a: SharedAppliance = await start();
    const b: SharedAppliance = await start();
    const adminKey = (a.firstAdminKey ?? b.firstAdminKey)!;
    assert.ok(adminKey, 'one of the two installed the shop');
    await addCatalogueGarment({ url: a.url, adminKey }, { name: 'Navy tee', category: 'auto', sizes: ['M'], barcode: '4000000000017' });

    const browser = await launchBrowser(t);
    const page = await browser.newPage({ viewport: { width: 1024, height: 768 } });
    await signInWithKey(page, a.url, adminKey);
    await page.locator('#selfie-file').setInputFiles({ name: 'me.jpg', mimeType: 'image/jpeg', buffer: await personJpeg(600, 800) });
    await page.locator('[data-garment]', { hasText: 'Navy tee' }).click();
    await page.locator('.picked', { hasText: 'Navy tee' }).waitFor();
    const garmentPhoto = page.locator('[data-garment] img').first();
    await page.waitForFunction((img) => (img as HTMLImageElement).naturalWidth > 0, await garmentPhoto.elementHandle());
    await page.getByRole('button', { name: 'Start the try-on' }).click();
    await page.waitForFunction(() => (document.querySelector<HTMLImageElement>('#result-image')?.naturalWidth ?? 0) > 0);
    await page.getByRole('button', { name: 'Take it home (QR code)' }).click();
    await page.locator('#qr').waitFor();
    await screenshot(page, '40-shared-database-result-1024');

    // The link names process A; the same path on B shows the same picture (the link and the image are in the database).
    const path = new URL(await page.locator('#take-home p.mono').innerText()).pathname;
    assert.match(path, /^\/take\//);
    const taken = await fetch(`${b.url}${path}`);
    assert.equal(taken.status, 200);
    assert.match(taken.headers.get('content-type') ?? '', /^image\//);

    await page.getByRole('button', { name: 'Erase the customer’s photos' }).click();
    await page.getByText('The customer’s photos are erased.').waitFor();
    assert.equal((await fetch(`${b.url}${path}`)).status, 404, 'the link shows nothing once erased');
  },
);
