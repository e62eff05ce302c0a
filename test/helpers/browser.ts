/**
 * Headless Chromium for the web console's tests: Debian's `chromium`
 * package driven by playwright-core (which downloads no browser). Tests that
 * need it skip, saying so, where the binary is absent.
 */
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { track, untrack } from './tracked.js';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const HAS_CHROMIUM = existsSync(CHROMIUM_PATH);
export const SKIP_MESSAGE = `web console browser tests SKIPPED: no Chromium at ${CHROMIUM_PATH} (apt-get install -y chromium, or set CHROMIUM_PATH)`;

/** Screenshots land here (gitignored). */
export const SCREENSHOT_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'browser', 'screenshots');

export async function launchBrowser(): Promise<Browser> {
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  return track(browser, 'headless chromium');
}

export async function closeBrowser(browser: Browser | undefined): Promise<void> {
  if (!browser) return;
  await browser.close();
  untrack(browser);
}

/** Saves a full-page screenshot as test/browser/screenshots/<name>.png; returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}
