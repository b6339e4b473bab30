import { getPlainVm } from '@svc/contract';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import { violationLines } from './axe.js';
import { launchChromium, signInInBrowser, watchErrors } from './browser.js';
import { type DashboardServer, startDashboardServer } from './dashboard-server.js';
import { createPlainVm } from './plain-vm.js';
import type { TestClient } from './test-client.js';
import { waitFor } from './wait.js';

/** A dashboard server and Chromium, and pages signed in to that server. */
export interface DashboardInChromium {
  readonly server: DashboardServer;
  readonly browser: Browser;
  /** `signedInPage` on this browser and server. */
  signedInPage(
    width: number,
    user: { email: string; password: string },
  ): ReturnType<typeof signedInPage>;
}

/**
 * A dashboard server and Chromium for the enclosing describe block, started before its own
 * beforeAll hooks and closed after its tests.
 */
export function dashboardInChromium(): DashboardInChromium {
  const setup = {
    signedInPage: (width: number, user: { email: string; password: string }) =>
      signedInPage(setup.browser, setup.server.baseUrl, width, user),
  } as { -readonly [K in keyof DashboardInChromium]: DashboardInChromium[K] };
  beforeAll(async () => {
    setup.server = await startDashboardServer();
    setup.browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await setup.browser?.close();
    await setup.server?.close();
  });
  return setup;
}

/** A page of its own context at `width` px, signed in, with its console errors collected. */
export async function signedInPage(
  browser: Browser,
  baseUrl: string,
  width: number,
  user: { email: string; password: string },
): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport: { width, height: 900 } });
  const page = await context.newPage();
  const errors = watchErrors(page);
  await signInInBrowser(page, baseUrl, user);
  return { context, page, errors };
}

/**
 * axe-core finds nothing on the page as it is now (`what` names the state in a failure). The
 * caller has waited for what it shows: a page polling a machine in a transient state is never
 * idle on the network.
 */
export async function expectNoViolations(page: Page, what: string): Promise<void> {
  const found = await violationLines(page);
  expect(found, `${what}\n${found.join('\n')}`).toEqual([]);
}

/** The page itself never scrolls sideways at `width` px. */
export async function expectFitsWidth(page: Page, width: number): Promise<void> {
  await expect
    .poll(() => page.evaluate('document.documentElement.scrollWidth'))
    .toBeLessThanOrEqual(width);
}

/** A metered small Plain VM with the one-time password, made through the API and running. */
export async function runningPlainVm(owner: TestClient, name: string): Promise<string> {
  const id = await createPlainVm(owner, name);
  await waitFor(
    async () => (await owner.call(getPlainVm, { params: { id } })).body.status === 'running',
    30_000,
    `${name} running`,
  );
  return id;
}
