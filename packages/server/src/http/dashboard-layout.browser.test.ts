import { createOrg, signIn } from '@svc/contract';
import type { BrowserContext, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { violationLines } from '../../test/axe.js';
import { screenshot, signInInBrowser, watchErrors } from '../../test/browser.js';
import { runningMachines } from '../../test/dashboard-fixture.js';
import { dashboardInChromium } from '../../test/dashboard-page.js';
import type { TestClient } from '../../test/test-client.js';
import { signUpUser } from '../../test/test-context.js';

const PASSWORD = 'correct horse battery';
const WIDTHS = [1280, 390] as const;
/** The browser signs in as Firefox on Linux, so Settings has a known session to name. */
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';

/**
 * What is wrong with the frame on the page, one sentence each (none when it is right). A string
 * evaluated in the page: this package's TypeScript has no DOM types.
 */
const FRAME_PROBLEMS = `(() => {
  const problems = [];
  const doc = document.scrollingElement ?? document.documentElement;
  if (doc.scrollWidth > doc.clientWidth)
    problems.push('scrolls sideways: ' + doc.scrollWidth + ' > ' + doc.clientWidth);
  if (document.querySelectorAll('header.topbar').length !== 1) problems.push('no one header');
  if (!document.querySelector('header.topbar a[href="/dashboard/settings"]'))
    problems.push('no Settings link in the header');
  if (!document.querySelector('nav[aria-label="Sections"] a')) problems.push('no sections');
  if (document.querySelectorAll('main').length !== 1) problems.push('not one main');
  // The account switcher shows its whole account name.
  const select = document.querySelector('header .switcher select');
  const shown = select?.selectedOptions[0]?.text;
  if (!select || !shown) problems.push('no account switcher');
  else {
    const style = getComputedStyle(select);
    const context = document.createElement('canvas').getContext('2d');
    context.font = style.font;
    const text = context.measureText(shown).width;
    const room = select.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    if (text > room) problems.push('switcher cut: "' + shown + '" needs ' + text + 'px, has ' + room);
  }
  // An account page's own section is the selected tab, on screen inside the tab bar.
  const nav = document.querySelector('nav[aria-label="Sections"]');
  const active = nav?.querySelector('a.active');
  if (location.pathname.startsWith('/dashboard/accounts/')) {
    if (!nav || !active) problems.push('no selected section');
    else {
      const bar = nav.getBoundingClientRect();
      const tab = active.getBoundingClientRect();
      if (tab.left < bar.left - 1 || tab.right > bar.right + 1)
        problems.push('selected tab off-screen: ' + tab.left + '-' + tab.right + ' in ' + bar.left + '-' + bar.right);
    }
  }
  // No bare "Loading…" left on the page once it has loaded.
  if (/Loading…/.test(document.body.innerText)) problems.push('shows "Loading…"');
  return problems;
})()`;

/** The page's text as a sighted user reads it in `selector`: without what only screen readers get. */
const seenText = (selector: string) => `(() => {
  const copy = document.querySelector(${JSON.stringify(selector)}).cloneNode(true);
  for (const hidden of copy.querySelectorAll('.visually-hidden')) hidden.remove();
  return copy.textContent;
})()`;

/**
 * The signed-in frame (issue 29, items 2 and 5): every signed-in page has the one header and
 * the sections, never scrolls sideways and passes axe-core at 1280 and 390 px; the selected tab
 * and the account's whole name stay on screen; lists show a status dot per machine; an empty
 * list offers its next step; a list loading shows skeletons; Settings names sessions' browsers.
 */
describe('the dashboard in Chromium: one frame for every signed-in page', () => {
  const setup = dashboardInChromium();
  let owner: TestClient;
  let slug: string;
  let orgSlug: string;
  let agentId: string;
  let vmId: string;
  const email = `nina-${Date.now()}@example.com`;

  beforeAll(async () => {
    owner = setup.server.t.newClient();
    const signedUp = await signUpUser(owner, { email, name: 'Nina Newcomer' });
    slug = signedUp.account.slug;
    const org = await owner.call(createOrg, {
      body: { name: 'Newcomer Labs', slug: 'newcomer-labs' },
    });
    orgSlug = org.body.slug;
    ({ agentId, vmId } = await runningMachines(setup.server.t, owner, {
      agent: 'editor',
      vm: 'web-1',
      bundle: 'notebook',
    }));
  }, 120_000);

  /** Every signed-in route of App.tsx with real ids; `ready` is on the page once it loaded. */
  const pages = () => [
    { path: '/dashboard/', ready: '.card' },
    { path: `/dashboard/accounts/${slug}/agents`, ready: '.card' },
    { path: `/dashboard/accounts/${slug}/agents/new`, ready: 'form' },
    { path: `/dashboard/accounts/${slug}/agents/${agentId}`, ready: 'dl' },
    { path: `/dashboard/agents/${agentId}`, ready: 'dl' },
    { path: `/dashboard/accounts/${slug}/plain-vms`, ready: '.card' },
    { path: `/dashboard/accounts/${slug}/plain-vms/new`, ready: 'form' },
    { path: `/dashboard/accounts/${slug}/plain-vms/${vmId}`, ready: 'dl' },
    { path: `/dashboard/accounts/${slug}/vault`, ready: 'form' },
    { path: `/dashboard/accounts/${slug}/apps`, ready: 'h1' },
    { path: `/dashboard/accounts/${slug}/bundles`, ready: 'table' },
    { path: `/dashboard/accounts/${slug}/explore`, ready: '.card' },
    { path: `/dashboard/accounts/${slug}/billing`, ready: 'dl' },
    { path: `/dashboard/accounts/${orgSlug}/members`, ready: 'table' },
    { path: `/dashboard/accounts/${orgSlug}/audit`, ready: 'table, .empty' },
    { path: '/dashboard/new-organization', ready: 'form' },
    { path: '/dashboard/settings', ready: 'form' },
    { path: `/dashboard/adopt/${slug}/notebook`, ready: 'form' },
  ];

  async function signedInAt(width: number): Promise<{ context: BrowserContext; page: Page }> {
    const context = await setup.browser.newContext({
      viewport: { width, height: 900 },
      userAgent: FIREFOX,
    });
    const page = await context.newPage();
    await signInInBrowser(page, setup.server.baseUrl, { email, password: PASSWORD });
    return { context, page };
  }

  for (const width of WIDTHS) {
    it(`shows every signed-in page in the frame at ${width} px, unclipped, with no axe violation`, async () => {
      const { context, page } = await signedInAt(width);
      const errors = watchErrors(page);
      const found: string[] = [];
      for (const { path, ready } of pages()) {
        await page.goto(`${setup.server.baseUrl}${path}`);
        await page.locator('h1').first().waitFor();
        await page
          .locator(ready)
          .first()
          .waitFor()
          .catch(async (error: Error) => {
            await screenshot(page, `layout-${width}-failed`);
            throw new Error(`${path}: ${error.message}\n${errors.join('\n')}`);
          });
        await page.waitForLoadState('networkidle');
        for (const problem of (await page.evaluate(FRAME_PROBLEMS)) as string[])
          found.push(`${path}: ${problem}`);
        for (const violation of await violationLines(page)) found.push(`${path}: ${violation}`);
        const name = path
          .replace(slug, 'personal')
          .replace(agentId, 'agent')
          .replace(vmId, 'vm')
          .replace(/^\/dashboard\/?/, '')
          .replace(/[^a-z0-9]+/gi, '-');
        await screenshot(page, `layout-${width}-${name || 'home'}`);
      }
      // The last section of the bar, picked on a phone, is in view (the bar scrolled to it).
      await page.goto(`${setup.server.baseUrl}/dashboard/accounts/${orgSlug}/agents`);
      await page.getByRole('navigation', { name: 'Sections' }).getByText('Audit log').click();
      await page.getByRole('heading', { name: 'Audit log' }).waitFor();
      for (const problem of (await page.evaluate(FRAME_PROBLEMS)) as string[])
        found.push(`after a click: ${problem}`);
      await context.close();
      expect(found, found.join('\n')).toEqual([]);
      expect(errors, errors.join('\n')).toEqual([]);
    }, 240_000);
  }

  it('names each session by its browser and system on Settings', async () => {
    const { context, page } = await signedInAt(1280);
    const other = setup.server.t.newClient();
    await other.call(signIn, { body: { email, password: PASSWORD } });
    await page.getByRole('banner').getByRole('link', { name: email }).click();
    const sessions = page.getByRole('list', { name: 'Sessions' }).getByRole('listitem');
    await sessions.filter({ hasText: 'This browser' }).waitFor();
    await expect
      .poll(() => sessions.filter({ hasText: 'This browser' }).innerText())
      .toContain('Firefox on Linux');
    expect(await sessions.allInnerTexts()).not.toContainEqual(expect.stringContaining('Mozilla/'));
    await screenshot(page, 'layout-settings-sessions');
    await context.close();
  }, 60_000);

  it('shows a status dot per machine, skeletons while a list loads, and empty lists with their next step', async () => {
    const { context, page } = await signedInAt(390);
    const errors = watchErrors(page);
    for (const [section, expected] of [
      ['agents', agentId],
      ['plain-vms', vmId],
    ] as const) {
      await page.goto(`${setup.server.baseUrl}/dashboard/accounts/${slug}/${section}`);
      const card = page.locator('.machine-card', {
        has: page.locator(`a[href$="/${expected}"]`),
      });
      await card.locator('.status-dot[data-status="running"]').waitFor();
      expect(await page.locator('.machine-card').count()).toBe(
        await page.locator('.machine-card .status-dot').count(),
      );
    }

    // The list's answer is held back: its place shows grey cards, not words.
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route('**/api/agents?accountId=*', async (route) => {
      await held;
      await route.continue();
    });
    await page.goto(`${setup.server.baseUrl}/dashboard/accounts/${orgSlug}/agents`);
    await page.locator('main .skeleton-card').first().waitFor();
    // What a sighted user reads there: no "Loading…" (it is said to screen readers only).
    const seen = await page.evaluate(seenText('main'));
    expect(seen).not.toContain('Loading');
    expect(await page.getByRole('status').filter({ hasText: 'Loading Agents' }).count()).toBe(1);
    await screenshot(page, 'layout-skeleton');
    release();
    await page.locator('.empty').waitFor();
    await page.unrouteAll({ behavior: 'wait' });

    // The organization has no machines: each empty list leads to its create form.
    for (const [section, button, heading] of [
      ['agents', 'New Agent', 'New Agent'],
      ['plain-vms', 'New Plain VM', 'New Plain VM'],
    ] as const) {
      await page.goto(`${setup.server.baseUrl}/dashboard/accounts/${orgSlug}/${section}`);
      const empty = page.locator('.empty');
      await empty.waitFor();
      await screenshot(page, `layout-empty-${section}`);
      // Once on the page: the heading row leaves it to the empty list.
      expect(await page.getByRole('link', { name: button }).count()).toBe(1);
      await empty.getByRole('link', { name: button }).click();
      await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
    }
    await context.close();
    expect(errors, errors.join('\n')).toEqual([]);
  }, 90_000);

  it('serves the favicon the pages name', async () => {
    const { context, page } = await signedInAt(1280);
    const href = await page.locator('link[rel="icon"]').getAttribute('href');
    const icon = await fetch(`${setup.server.baseUrl}${href}`);
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toContain('image/svg+xml');
    expect(await icon.text()).toContain('<svg');
    await context.close();
  }, 60_000);
});
