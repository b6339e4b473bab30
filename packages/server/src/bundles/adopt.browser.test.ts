import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openPage, screenshot } from '../../test/browser.js';
import {
  type AgentClient,
  agentClient,
  manifestOf,
  publishSimple,
} from '../../test/bundle-test-helpers.js';
import { type EdgeServer, startEdgeServer } from '../../test/edge-server.js';
import { signUpUser } from '../../test/test-context.js';

const SECRET = 'wx-adopter-secret-0123456789';

/**
 * Adopting in Chromium, on the local driver: one account publishes a bundle with a README, tags
 * and a stripped credential; another user finds it on `/explore`, opens its page, follows
 * "Adopt this bundle" through sign-in to the dashboard's form, sets the credential, and watches
 * the new Agent run with the bundle's files and the credential in its home.
 */
describe('adopting a bundle in Chromium', () => {
  let server: EdgeServer;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let publisher: AgentClient;
  let publisherSlug: string;
  let adopterSlug: string;
  const email = `ada-${Date.now()}@example.com`;
  const go = (to: string) => page.goto(`${server.baseUrl}${to}`);
  const card = (name: string) => page.getByRole('article', { name });
  const cardLink = (name: string) => page.locator('.card h2 a', { hasText: name });

  beforeAll(async () => {
    server = await startEdgeServer({ dashboard: true });
    const { t } = server;
    const owner = t.newClient();
    publisherSlug = (await signUpUser(owner)).account.slug;
    publisher = await agentClient(t, owner);
    // The README, tags and a credential as `svc glamp stage` leaves them: the value replaced by
    // its placeholder in `.openclaw/.env`, the key listed in the manifest.
    await publishSimple(
      t,
      publisher,
      manifestOf('rain-gauge', {
        displayName: 'Rain gauge',
        description: 'Measures rainfall in the garden and posts weekly totals.',
        tags: ['garden', 'weather'],
        credentials: [
          {
            key: 'WEATHER_API_KEY',
            description: 'The forecast service',
            locations: ['.openclaw/.env:1'],
          },
        ],
      }),
      {
        'README.md': Buffer.from('# Rain gauge\n\nCounts the millimetres that fell.\n'),
        'gauge.py': Buffer.from('print("mm")\n'),
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the placeholder `stage` writes
        '.openclaw/.env': Buffer.from('WEATHER_API_KEY=${WEATHER_API_KEY}\nUNITS=mm\n'),
      },
    );
    // Another bundle, which the searches below must leave out.
    await publishSimple(
      t,
      publisher,
      manifestOf('wind-vane', {
        displayName: 'Wind vane',
        description: 'Reads the wind direction.',
        tags: ['weather'],
      }),
    );
    adopterSlug = (await signUpUser(t.newClient(), { email, name: 'Ada Adopter' })).account.slug;
    ({ browser, page, errors } = await openPage());
  }, 120_000);
  beforeEach(() => {
    errors?.splice(0);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('finds the bundle on /explore by a word of its description, and by its tag', async () => {
    await go('/explore');
    await page.getByRole('searchbox', { name: 'Search bundles' }).fill('rainfall');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL((url) => url.searchParams.get('q') === 'rainfall');
    await expect.poll(() => page.locator('.card h2').allInnerTexts()).toEqual(['Rain gauge']);
    await screenshot(page, 'adopt-explore-by-word');

    await go('/explore');
    await expect.poll(() => page.locator('.card h2').count()).toBe(2);
    await page
      .locator('.card', { hasText: 'Rain gauge' })
      .getByRole('link', { name: 'garden' })
      .click();
    await page.waitForURL((url) => url.searchParams.getAll('tag').join() === 'garden');
    await expect.poll(() => page.locator('.card h2').allInnerTexts()).toEqual(['Rain gauge']);
    await screenshot(page, 'adopt-explore-by-tag');
    expect(errors, errors.join('\n')).toEqual([]);
  }, 60_000);

  it('adopts it from its page through sign-in, with the credential set, and the Agent runs with its files', async () => {
    await cardLink('Rain gauge').click();
    await page.waitForURL((url) => url.pathname === `/${publisherSlug}/rain-gauge`);
    await screenshot(page, 'adopt-public-page');
    await page.getByRole('link', { name: 'Adopt this bundle' }).click();

    // Signed out: sign-in first, which comes back to the form.
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(new URL(page.url()).searchParams.get('next')).toBe(
      `/dashboard/adopt/${publisherSlug}/rain-gauge`,
    );
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Adopt Rain gauge' }).waitFor();
    // The only complaint: the dashboard's own 401 on /api/me before signing in.
    expect(errors.filter((e) => !/status of 401/.test(e))).toEqual([]);
    errors.splice(0);

    await expect.poll(() => page.getByLabel('Version').inputValue()).toBe('1');
    await page.getByLabel('Name').fill('My gauge');
    await page.getByLabel('Size').selectOption('small');
    const credential = page.getByLabel('WEATHER_API_KEY');
    expect(await credential.getAttribute('type')).toBe('password');
    await credential.fill(SECRET);
    await screenshot(page, 'adopt-form');
    await page.getByRole('button', { name: 'Adopt into a new Agent' }).click();

    await page.getByRole('heading', { name: 'My gauge' }).waitFor();
    await page.locator('.page-head .badge[data-status="running"]').waitFor({ timeout: 30_000 });
    const from = page.getByRole('link', { name: `${publisherSlug}/rain-gauge` });
    expect(await from.getAttribute('href')).toBe(`/${publisherSlug}/rain-gauge/versions/1`);
    expect(await page.getByRole('heading', { name: 'Credentials to set' }).count()).toBe(0);
    await screenshot(page, 'adopt-agent-running');

    const match = new RegExp(`/dashboard/accounts/${adopterSlug}/agents/([0-9a-f-]{36})$`).exec(
      page.url(),
    );
    expect(match, page.url()).not.toBeNull();
    const home = server.t.driver.homeOf(match?.[1] ?? '');
    expect(await readFile(path.join(home, 'README.md'), 'utf8')).toContain('millimetres');
    expect(await readFile(path.join(home, 'gauge.py'), 'utf8')).toBe('print("mm")\n');
    expect(await readFile(path.join(home, '.openclaw/.env'), 'utf8')).toBe(
      `WEATHER_API_KEY='${SECRET}'\nUNITS=mm\n`,
    );
    expect(errors, errors.join('\n')).toEqual([]);
  }, 90_000);

  it("searches as you type on the dashboard's Explore page, narrows by a tag, and lists a credential left unset as to set", async () => {
    await page
      .getByRole('navigation', { name: 'Sections' })
      .getByRole('link', { name: 'Explore' })
      .click();
    await expect.poll(() => page.locator('.card h2').count()).toBe(2);
    // Most adopted first: the Rain gauge has the adoption above.
    await page.getByLabel('Sort').selectOption('adoptions');
    await expect
      .poll(() => page.locator('.card h2').allInnerTexts())
      .toEqual(['Rain gauge', 'Wind vane']);
    await page.getByLabel('Sort').selectOption('recent');
    await expect
      .poll(() => page.locator('.card h2').allInnerTexts())
      .toEqual(['Wind vane', 'Rain gauge']);

    // The last word matches as a prefix, so the list follows the typing.
    await page.getByRole('searchbox', { name: 'Search' }).pressSequentially('wind dir');
    await expect.poll(() => page.locator('.card h2').allInnerTexts()).toEqual(['Wind vane']);
    await page.getByRole('searchbox', { name: 'Search' }).fill('');
    await expect.poll(() => page.locator('.card h2').count()).toBe(2);

    await card('Rain gauge').getByRole('button', { name: 'garden' }).click();
    await expect.poll(() => page.locator('.card h2').allInnerTexts()).toEqual(['Rain gauge']);
    await screenshot(page, 'adopt-dashboard-explore');
    await page.getByRole('button', { name: 'Remove tag garden' }).click();
    await expect.poll(() => page.locator('.card h2').count()).toBe(2);

    await page.getByRole('link', { name: 'Adopt Rain gauge' }).click();
    await page.getByRole('heading', { name: 'Adopt Rain gauge' }).waitFor();
    await page.getByLabel('Name').fill('Bare gauge');
    await page.getByRole('button', { name: 'Adopt into a new Agent' }).click();
    await page.getByRole('heading', { name: 'Bare gauge' }).waitFor();
    const toSet = page.getByRole('region', { name: 'Credentials to set' });
    await expect
      .poll(() => toSet.getByRole('listitem').allInnerTexts())
      .toEqual(['WEATHER_API_KEY to set']);
    await expect.poll(() => toSet.innerText()).toContain('~/.openclaw/.env');
    await page.locator('.page-head .badge[data-status="running"]').waitFor({ timeout: 30_000 });
    await screenshot(page, 'adopt-agent-credentials-to-set');
    expect(errors, errors.join('\n')).toEqual([]);
  }, 90_000);

  it('loads the next page of results when asked', async () => {
    // A page holds 20: with 20 more bundles, the 22 take two.
    for (let i = 1; i <= 20; i += 1) {
      await publishSimple(server.t, publisher, manifestOf(`filler-${i}`, { tags: ['filler'] }));
    }
    // A fresh load: the dashboard's cached first page would still say 2 for a few seconds.
    await go(`/dashboard/accounts/${adopterSlug}/explore`);
    await expect.poll(() => page.locator('.card h2').count()).toBe(20);
    await page.getByRole('button', { name: 'Load more' }).click();
    await expect.poll(() => page.locator('.card h2').count()).toBe(22);
    await expect.poll(() => page.getByRole('button', { name: 'Load more' }).count()).toBe(0);
    await screenshot(page, 'adopt-explore-load-more');
    expect(errors, errors.join('\n')).toEqual([]);
  }, 60_000);
});
