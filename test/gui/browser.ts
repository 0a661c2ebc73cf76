/**
 * Debian's Chromium driven by playwright-core for the GUI tests: headless, no
 * network beyond loopback, the camera faked from a .y4m file, and a folder
 * for screenshots (test-output/gui/, git-ignored) that people look at.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { chromium, type Browser, type BrowserContextOptions, type Page } from 'playwright-core';

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

/** The shop floor's screens, in CSS pixels: a phone, the upright tablet, the tablet on its side, a desktop. */
export const SHOP_SCREENS = [
  { width: 390, height: 844 },
  { width: 768, height: 1024 },
  { width: 1024, height: 768 },
  { width: 1920, height: 1080 },
] as const;
export type ShopScreen = (typeof SHOP_SCREENS)[number];

/**
 * Runs `flow` on every shop screen, each a subtest in a fresh browser context (its own session, its own storage).
 * After each run the page must not scroll sideways, and a screenshot is saved as <name>-<width>.png.
 */
export async function onEveryShopScreen(
  t: TestContext,
  browser: Browser,
  name: string,
  flow: (page: Page, screen: ShopScreen) => Promise<void>,
  options: BrowserContextOptions = {},
): Promise<void> {
  for (const screen of SHOP_SCREENS) {
    await t.test(`at ${screen.width}×${screen.height}`, async () => {
      const context = await browser.newContext({ ...options, viewport: screen });
      try {
        const page = await context.newPage();
        page.setDefaultTimeout(60_000);
        await flow(page, screen);
        const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
        assert.equal(scrollWidth, screen.width, `${name} at ${screen.width} px scrolls sideways`);
        await screenshot(page, `${name}-${screen.width}`);
      } finally {
        await context.close();
      }
    });
  }
}

/** Saves a full-page screenshot as test-output/gui/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOTS, { recursive: true });
  // From the top: a full-page shot of a scrolled page paints the sticky header mid-page.
  await scrollComesToRest(page);
  await page.evaluate(() => window.scrollTo({ top: 0, left: 0, behavior: 'instant' }));
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/**
 * Waits until any smooth scroll the page started (to a result, say) has come to rest: three frames in a row
 * at the same place. Whatever is measured on screen before then is measured mid-flight.
 */
export async function scrollComesToRest(page: Page): Promise<void> {
  // A string, so that the bundler's helpers (it names functions) do not travel into the page.
  await page.evaluate(`new Promise((resolve) => {
    let last = -1;
    let still = 0;
    const frame = () => {
      still = window.scrollY === last ? still + 1 : 0;
      last = window.scrollY;
      if (still >= 3) resolve();
      else requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
  })`);
}

/** axe-core's rules for WCAG 2.2 A and AA, and its best practices. */
const AXE_RULES = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'];
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** What axe-core finds wrong with the page as it is now, one line per rule broken (empty when nothing). */
export async function accessibilityProblems(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, which the page's strict CSP does not govern.
  if (!(await page.evaluate('typeof window.axe !== "undefined"'))) await page.evaluate(AXE_SOURCE);
  return (await page.evaluate(`axe.run(document, { runOnly: ${JSON.stringify(AXE_RULES)} }).then((result) =>
    result.violations.map((v) => v.id + ' (' + v.impact + '): ' + v.help + ' at ' + v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')))`)) as string[];
}

/** Saves a screenshot (see screenshot) and asserts that axe-core finds nothing wrong with the page. */
export async function lookAt(page: Page, name: string): Promise<void> {
  await screenshot(page, name);
  const problems = await accessibilityProblems(page);
  if (problems.length > 0) throw new Error(`axe-core on ${name}:\n${problems.join('\n')}`);
}

/** Opens the GUI and signs in with an admin key; resolves once the screens' navigation shows. */
export async function signInWithKey(page: Page, url: string, adminKey: string): Promise<void> {
  await page.goto(`${url}/`);
  await page.getByLabel('Admin key (fr_live_…)').fill(adminKey);
  await page.getByRole('button', { name: 'Sign in with the key' }).click();
  await page.getByRole('navigation', { name: 'Screens' }).waitFor();
}
