/**
 * Debian's Chromium driven by playwright-core for the GUI tests: headless, no
 * network beyond loopback, the camera faked from a .y4m file, and a folder
 * for screenshots (test-output/gui/, git-ignored) that people look at.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { TestContext } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SCREENSHOTS = resolve(import.meta.dirname, '../../test-output/gui');

/** Why the browser tests cannot run here, or null when they can. */
export function browserMissing(): string | null {
  return existsSync(CHROMIUM) ? null : `no Chromium at ${CHROMIUM} (apt-get install chromium, see .ci/run)`;
}

/** Starts Chromium for one test (closed after it), with a fake camera when given a clip. */
export async function launchBrowser(t: TestContext, options: { fakeCamera?: string } = {}): Promise<Browser> {
  const args = [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--disable-quic',
    '--no-first-run',
  ];
  if (options.fakeCamera) {
    args.push(
      '--use-fake-device-for-media-stream',
      `--use-file-for-fake-video-capture=${options.fakeCamera}`,
      '--use-fake-ui-for-media-stream',
    );
  }
  const browser = await chromium.launch({ executablePath: CHROMIUM, args });
  t.after(() => browser.close());
  return browser;
}

/** Saves a full-page screenshot as test-output/gui/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOTS, { recursive: true });
  // From the top: a full-page shot of a scrolled page paints the sticky header mid-page.
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** Opens the GUI and signs in with an admin key; resolves once the screens' navigation shows. */
export async function signInWithKey(page: Page, url: string, adminKey: string): Promise<void> {
  await page.goto(`${url}/`);
  await page.getByLabel('Admin key (fr_live_…)').fill(adminKey);
  await page.getByRole('button', { name: 'Sign in with the key' }).click();
  await page.getByRole('navigation', { name: 'Screens' }).waitFor();
}
