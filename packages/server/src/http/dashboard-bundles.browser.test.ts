import type { Browser, ConsoleMessage, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openPage, screenshot, signInInBrowser } from '../../test/browser.js';
import {
  type AgentClient,
  agentClient,
  complete,
  manifestOf,
  stageAndPublish,
} from '../../test/bundle-test-helpers.js';
import { type DashboardServer, startDashboardServer } from '../../test/dashboard-server.js';
import { signUpUser } from '../../test/test-context.js';

/**
 * Published bundles in Chromium: an Agent publishes two versions through the API (as `svc glamp
 * confirm` does), then the owner finds them in the dashboard, opens the public page, and deletes
 * a version and the bundle. Also the billing page's usage of that Agent.
 */
describe('the dashboard in Chromium: bundles and usage', () => {
  let server: DashboardServer;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let slug: string;
  const email = `mary-${Date.now()}@example.com`;
  const status = async (path: string) => (await fetch(`${server.baseUrl}${path}`)).status;

  const publish = async (agent: AgentClient, version: number, glampId = '') => {
    const run = await stageAndPublish(server.t, agent, {
      manifest: manifestOf('weather-station', {
        displayName: 'Weather station',
        description: 'Reads the sensors and posts a summary.',
        glampId,
      }),
      files: {
        'README.md': Buffer.from(`# Weather station\n\nRelease ${version}.\n`),
        'main.py': Buffer.from(`print("v${version}")\n`),
      },
    });
    const done = await complete(agent, run.bundleId, run.stagingId);
    expect(done.body).toMatchObject({ version });
    return run.bundleId;
  };

  beforeAll(async () => {
    server = await startDashboardServer();
    const owner = server.t.newClient();
    slug = (await signUpUser(owner, { email, name: 'Mary Jackson' })).account.slug;
    const agent = await agentClient(server.t, owner);
    const bundleId = await publish(agent, 1);
    await publish(agent, 2, bundleId);

    ({ browser, page, errors } = await openPage());
    await signInInBrowser(page, server.baseUrl, { email, password: 'correct horse battery' });
  }, 90_000);
  beforeEach(() => {
    errors?.splice(0);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('sees a published bundle with its versions and opens its public page', async () => {
    await page.getByRole('link', { name: 'Bundles' }).click();
    const card = page.getByRole('article', { name: 'Weather station' });
    await card.waitFor();
    await expect
      .poll(() => card.getByRole('link', { name: /^Version \d$/ }).allInnerTexts())
      .toEqual(['Version 2', 'Version 1']);
    await screenshot(page, 'dashboard-bundles');
    // On a phone the versions table scrolls inside its card; the page itself never scrolls sideways.
    await page.setViewportSize({ width: 390, height: 844 });
    expect(
      await page.evaluate(
        'document.documentElement.scrollWidth - document.documentElement.clientWidth',
      ),
    ).toBe(0);
    await screenshot(page, 'dashboard-bundles-phone');
    await page.setViewportSize({ width: 1100, height: 900 });

    // Listening on the context from before the click: the popup's first loads log there too.
    const publicErrors: string[] = [];
    const onConsole = (message: ConsoleMessage) => {
      if (message.type() === 'error' && message.page() !== page) publicErrors.push(message.text());
    };
    page.context().on('console', onConsole);
    const [publicPage] = await Promise.all([
      page.waitForEvent('popup'),
      card
        .getByRole('link', { name: 'Public page of Weather station (opens in a new tab)' })
        .click(),
    ]);
    await publicPage.waitForLoadState();
    expect(new URL(publicPage.url()).pathname).toBe(`/${slug}/weather-station`);
    // The README, rendered, of the newest version; and the file browser lists its files.
    await publicPage.getByText('Release 2.').waitFor();
    await publicPage.getByRole('link', { name: 'main.py' }).waitFor();
    // The page's stylesheet applied (it comes from the dashboard's build).
    expect(
      await publicPage.evaluate("getComputedStyle(document.querySelector('main')).maxWidth"),
    ).toBe('960px');
    await screenshot(publicPage, 'bundle-public-page');
    await publicPage.close();
    page.context().off('console', onConsole);
    expect(publicErrors, publicErrors.join('\n')).toEqual([]);
    expect(errors, errors.join('\n')).toEqual([]);
  }, 60_000);

  it('deletes version 1, which the public page then no longer serves', async () => {
    const card = page.getByRole('article', { name: 'Weather station' });
    await card.getByRole('button', { name: 'Delete version 1 of Weather station' }).click();
    await card.getByRole('button', { name: 'Delete', exact: true }).click();
    await expect
      .poll(() => card.getByRole('link', { name: /^Version \d$/ }).allInnerTexts())
      .toEqual(['Version 2']);
    expect(await status(`/${slug}/weather-station/versions/1`)).toBe(404);
    expect(await status(`/${slug}/weather-station/versions/2`)).toBe(200);
    await screenshot(page, 'dashboard-bundle-version-deleted');
    expect(errors, errors.join('\n')).toEqual([]);
  }, 60_000);

  it('deletes the bundle once its name is typed', async () => {
    const card = page.getByRole('article', { name: 'Weather station' });
    const remove = card.getByRole('button', { name: 'Delete bundle' });
    await card.getByLabel('to delete this bundle').fill('weather');
    await expect.poll(() => remove.isDisabled()).toBe(true);
    await card.getByLabel('to delete this bundle').fill('weather-station');
    await remove.click();
    await page.getByText('No published bundles yet.').waitFor();
    expect(await status(`/${slug}/weather-station`)).toBe(404);
    await screenshot(page, 'dashboard-bundles-empty');
    expect(errors, errors.join('\n')).toEqual([]);
  }, 60_000);

  it("shows this month's usage of the Agent on the billing page", async () => {
    // Three hours on, the metered Agent has used three hours of this month (fewer when the
    // month began less than three hours ago).
    server.t.clock.advance(3 * 3_600_000);
    const now = server.t.clock.now();
    const sinceMonthStart = now.getTime() - Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
    const hours = Math.min(3, sinceMonthStart / 3_600_000).toFixed(1);
    await page.getByRole('link', { name: 'Billing' }).click();
    // The usage table's row (the running bill above it names the Agent too).
    const row = page.getByRole('table', { name: 'Usage' }).getByRole('row', { name: /Publisher/ });
    await expect
      .poll(() => row.innerText())
      .toMatch(new RegExp(`^Publisher\\s+Agent\\s+small\\s+eu\\s+${hours}\\s+0\\.0$`));
    await screenshot(page, 'dashboard-billing-usage');
    expect(errors, errors.join('\n')).toEqual([]);
  }, 60_000);
});
