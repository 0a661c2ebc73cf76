/**
 * The shop floor holds tablets upright and phones too: at every width from 360 px no screen scrolls sideways,
 * Sign out and every screen's link are on screen, the links keep their dark bar behind them, and axe-core (WCAG 2.2
 * AA and its best practices) finds nothing wrong with any screen.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startTestAppliance } from '../helpers/appliance.ts';
import { accessibilityProblems, browserMissing, launchBrowser, screenshot, signInWithKey } from './browser.ts';

const skip = browserMissing() ?? false;
const WIDTHS = [
  [360, 740],
  [390, 844],
  [768, 1024],
  [1024, 768],
  [1920, 1080],
] as const;
const SCREENS = ['Try on', 'Catalogue', 'History', 'Usage', 'Settings'];

test(
  'no screen scrolls sideways at any width from 360 px; Sign out and the screen links stay on screen',
  { skip, timeout: 300_000 },
  async (t) => {
    const ta = await startTestAppliance(t);
    const browser = await launchBrowser(t);
    for (const [width, height] of WIDTHS) {
      const context = await browser.newContext({ viewport: { width, height } });
      const page = await context.newPage();
      await signInWithKey(page, ta.url, ta.adminKey);
      for (const name of SCREENS) {
        await page.getByRole('link', { name }).click();
        await page.waitForFunction((label) => document.querySelector('nav [aria-current="page"]')?.textContent === label, name);
        await page.locator('main#screen > *').first().waitFor();
        // A string, so that the bundler's helpers (it names functions) do not travel into the page.
        const layout = (await page.evaluate(`(() => {
        const width = document.documentElement.clientWidth;
        const inView = (element) => {
          const box = element && element.getBoundingClientRect();
          return !!box && box.left >= 0 && box.right <= width && box.width > 0;
        };
        const bar = document.querySelector('.topbar').getBoundingClientRect();
        const links = [...document.querySelectorAll('nav a')];
        return {
          scrollWidth: document.documentElement.scrollWidth,
          signOut: inView([...document.querySelectorAll('header button')].find((button) => button.textContent === 'Sign out')),
          links: links.every(inView),
          linksOnBar: links.every((link) => link.getBoundingClientRect().top >= bar.top && link.getBoundingClientRect().bottom <= bar.bottom),
        };
      })()`)) as { scrollWidth: number; signOut: boolean; links: boolean; linksOnBar: boolean };
        const where = `${name} at ${width}×${height}`;
        assert.equal(layout.scrollWidth, width, `${where} scrolls sideways`);
        assert.ok(layout.signOut, `${where}: Sign out is off screen`);
        assert.ok(layout.links, `${where}: a screen link is off screen`);
        assert.ok(layout.linksOnBar, `${where}: a screen link is off its dark bar`);
        assert.deepEqual(await accessibilityProblems(page), [], `axe-core on ${where}`);
      }
      await screenshot(page, `layout-${width}-settings`);
      await context.close();
    }
  },
);
