import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { type Browser, chromium, type Locator, type Page } from 'playwright-core';

/** Debian's Chromium (`.ci/run` installs it); playwright-core never downloads a browser. */
export const CHROMIUM = '/usr/bin/chromium';

/** Where browser tests leave a screenshot of each page they check. */
export const SCREENSHOT_DIR = path.join(import.meta.dirname, '../../../.tmp/screenshots');

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install chromium`);
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/**
 * Chromium's word that a request died because the host's network interfaces changed: the Incus
 * tests beside add and remove them all the time, which says nothing of the page (its queries are
 * asked again; what a request's failure does to the page is still seen).
 */
const HOST_NETWORK_CHANGED = 'net::ERR_NETWORK_CHANGED';

/** Collects the page's console errors and uncaught exceptions, for a test to assert none. */
export function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    if (message.text().includes(HOST_NETWORK_CHANGED)) return;
    errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(error.message));
  return errors;
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`) });
}

/** A desktop-sized page in a new Chromium, with its console errors collected. */
export async function openPage(): Promise<{ browser: Browser; page: Page; errors: string[] }> {
  const browser = await launchChromium();
  const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  return { browser, page, errors: watchErrors(page) };
}

/**
 * Clicks what makes a popup close itself (a consent that ends on a page calling `window.close`).
 * The close is awaited from before the click, so an early close is never missed, and a click
 * cut short by that close is not an error.
 */
export async function clickAndAwaitClose(popup: Page, target: Locator): Promise<void> {
  const closed = popup.waitForEvent('close', { timeout: 20_000 });
  await target.click({ timeout: 20_000 }).catch((error: unknown) => {
    if (popup.isClosed()) return;
    closed.catch(() => {}); // the click's error is the one to report
    throw error;
  });
  await closed;
}

/** Signs up through the dashboard's form and waits for the Agents page it lands on. */
export async function signUpInBrowser(
  page: Page,
  baseUrl: string,
  user: { name: string; email: string; password: string },
): Promise<void> {
  await page.goto(`${baseUrl}/dashboard/sign-up`);
  await page.getByLabel('Name', { exact: true }).fill(user.name);
  await page.getByLabel('E-mail').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign up' }).click();
  await page.getByRole('heading', { name: 'Agents' }).waitFor();
}

/** Signs in through the dashboard's form and waits for the Agents page it lands on. */
export async function signInInBrowser(
  page: Page,
  baseUrl: string,
  user: { email: string; password: string },
): Promise<void> {
  await page.goto(`${baseUrl}/dashboard/sign-in`);
  await page.getByLabel('E-mail').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Agents' }).waitFor();
}
