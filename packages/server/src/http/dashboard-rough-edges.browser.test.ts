import { randomBytes } from 'node:crypto';
import { createAgent, createOrg } from '@svc/contract';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { launchChromium, screenshot, signInInBrowser, watchErrors } from '../../test/browser.js';
import { runningMachines } from '../../test/dashboard-fixture.js';
import { type DashboardServer, startDashboardServer } from '../../test/dashboard-server.js';
import { type StandIn, startStandIn } from '../../test/stand-in-provider.js';
import type { TestClient } from '../../test/test-client.js';
import { signUpUser } from '../../test/test-context.js';

const PASSWORD = 'correct horse battery';
const PHONE = { width: 390, height: 844 };

/** The elements that reach past the screen's right edge, for a failure to name them. */
const WIDEST = `[...document.querySelectorAll('body *')]
  .filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5)
  .filter((e) => {
    for (let up = e.parentElement; up && up !== document.body; up = up.parentElement)
      if (getComputedStyle(up).overflowX !== 'visible') return false;
    return true;
  })
  .slice(-5)
  .map((e) => e.tagName.toLowerCase() + (e.className ? '.' + e.className : '') + ' ' + Math.round(e.getBoundingClientRect().right))
  .join(', ')`;

/** An OpenSSH private key block as `ssh-keygen` writes it (random body, wrapped at 70). */
function privateKeyBlock(): { text: string; body: string[] } {
  const body = `b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW${randomBytes(
    300,
  ).toString('base64')}`;
  const lines = body.match(/.{1,70}/g) ?? [];
  return {
    text: [
      '-----BEGIN OPENSSH PRIVATE KEY-----',
      ...lines,
      '-----END OPENSSH PRIVATE KEY-----',
    ].join('\n'),
    body: lines,
  };
}

/**
 * The dashboard's rough edges, in Chromium: an unconfigured provider, a pasted private key, form
 * messages, page titles, status announcements, the Agent's address, and every page on a phone.
 * Every step saves a screenshot and may log no console error.
 */
describe('the dashboard in Chromium: rough edges', () => {
  let server: DashboardServer;
  let suite: StandIn;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let errors: string[];
  let owner: TestClient;
  let slug: string;
  let orgSlug: string;
  let agentId: string;
  let vmId: string;
  const email = `edsger-${Date.now()}@example.com`;
  const go = (path: string) => page.goto(`${server.baseUrl}${path}`);
  const account = (path: string) => go(`/dashboard/accounts/${slug}/${path}`);

  beforeAll(async () => {
    // Only `suite` is configured: `code` and `music` are not.
    server = await startDashboardServer(async (baseUrl) => {
      suite = await startStandIn('suite', { redirectUri: `${baseUrl}/api/apps/callback` });
      return suite.env();
    });
    owner = server.t.newClient();
    slug = (await signUpUser(owner, { email, name: 'Edsger Dijkstra' })).account.slug;
    const org = await owner.call(createOrg, {
      body: { name: 'Mathematical Centre', slug: 'math-centre' },
    });
    orgSlug = org.body.slug;
    ({ agentId, vmId } = await runningMachines(server.t, owner, {
      agent: 'publisher',
      vm: 'web-1',
      bundle: 'shortest-path',
      bundleManifest: { displayName: 'Shortest path' },
    }));

    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    page = await context.newPage();
    errors = watchErrors(page);
    await signInInBrowser(page, server.baseUrl, { email, password: PASSWORD });
  }, 120_000);
  // Each step answers for its own console errors (a failed step's stay with it).
  beforeEach(() => {
    errors?.splice(0);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await suite?.close();
  });

  it('shows a provider the operator has not configured as such, with no Connect button', async () => {
    await account('apps');
    const code = page.getByRole('article', { name: 'Code hosting' });
    await code.getByText('Not configured on this service').waitFor();
    await expect.poll(() => code.getByRole('button').count()).toBe(0);
    // A configured one still offers to connect.
    await page
      .getByRole('article', { name: 'Productivity suite' })
      .getByRole('button', { name: /Connect/ })
      .waitFor();
    await expect.poll(() => page.getByRole('button', { name: /Connect/ }).count()).toBe(1);
    await screenshot(page, 'rough-apps-not-configured');
    expect(errors, errors.join('\n')).toEqual([]);
  }, 60_000);

  it('drops a pasted private key: no part of it is anywhere in the page', async () => {
    await account('vault');
    const key = privateKeyBlock();
    await page.getByLabel('Public key').fill(key.text);
    await page.getByText('That was a private key').waitFor();
    // Anything the page holds: its markup, the values of its fields, and what it shows.
    // Anything the page holds: its markup, what it shows and the values of its fields.
    const leaked = () =>
      page.evaluate(`(() => {
        const fields = [...document.querySelectorAll('input, textarea')].map((f) => f.value);
        const all = [document.documentElement.outerHTML, document.body.innerText, ...fields].join('\\n');
        if (all.includes('BEGIN OPENSSH')) return 'BEGIN OPENSSH';
        for (const line of ${JSON.stringify(key.body.slice(1))})
          for (let at = 0; at + 12 <= line.length; at += 6)
            if (all.includes(line.slice(at, at + 12))) return line.slice(at, at + 12);
        return null;
      })()`);
    await expect.poll(leaked).toBeNull();
    await expect.poll(() => page.getByLabel('Public key').inputValue()).toBe('');
    await screenshot(page, 'rough-vault-private-key');
    expect(errors, errors.join('\n')).toEqual([]);
  }, 60_000);

  it('says what is wrong with a form in sentences, one per field, naming a bad firewall source', async () => {
    await go('/dashboard/new-organization');
    await page.getByRole('button', { name: 'Create organization' }).click();
    const nameErrors = page
      .locator('.field', { has: page.getByLabel('Name', { exact: true }) })
      .locator('.field-errors li');
    const slugErrors = page
      .locator('.field', { has: page.getByLabel('Slug') })
      .locator('.field-errors li');
    await expect.poll(() => nameErrors.allInnerTexts()).toEqual(['This cannot be empty.']);
    await expect.poll(() => slugErrors.count()).toBe(1);
    await screenshot(page, 'rough-form-messages');

    await account('vault');
    await page.getByRole('button', { name: 'Add key' }).click();
    const keyErrors = page
      .locator('.field', { has: page.getByLabel('Public key') })
      .locator('.field-errors li');
    await expect.poll(() => keyErrors.allInnerTexts()).toEqual(['This cannot be empty.']);

    await account(`plain-vms/${vmId}`);
    await page.getByLabel('Sources (rule 1)').fill('10.0.0.0/8, 1.2.3.999, 10.0.0.0/33');
    await page.getByRole('button', { name: 'Save firewall' }).click();
    const rule = page.getByRole('rowgroup', { name: 'Rule 1' }).locator('.field-errors li');
    await expect
      .poll(() => rule.allInnerTexts())
      .toEqual([
        '"1.2.3.999" is not an IPv4 or IPv6 address or CIDR, e.g. 203.0.113.0/24 or 2001:db8::/32.',
        '"10.0.0.0/33" is not an IPv4 or IPv6 address or CIDR, e.g. 203.0.113.0/24 or 2001:db8::/32.',
      ]);
    await screenshot(page, 'rough-firewall-messages');
    // Nothing that reads like zod's defaults anywhere.
    await expect
      .poll(() => page.getByText(/Too small|expected string|Invalid input/).count())
      .toBe(0);
    expect(errors, errors.join('\n')).toEqual([]);
  }, 60_000);

  it("keeps an Agent's address back until it has one, explains the cohort, and announces its status", async () => {
    server.t.compute.behave('createServer', { hang: true });
    const created = await owner.call(createAgent, {
      body: { name: 'slow-starter', size: 'small', region: 'eu', billingType: 'metered' },
    });
    await account(`agents/${created.body.id}`);
    await page.locator('.page-head .badge[data-status="provisioning"]').waitFor();
    const address = page.locator(
      'xpath=//dt[normalize-space()="Address"]/following-sibling::dd[1]',
    );
    await address.getByText('Not yet: it gets one once it is running.').waitFor();
    await expect.poll(() => address.locator('code').count()).toBe(0);
    await page.getByText("on the service's current machines").waitFor();
    await expect.poll(() => page.title()).toBe('slow-starter · Edsger Dijkstra · svc');
    await screenshot(page, 'rough-agent-provisioning');

    server.t.compute.behave('createServer', {});
    server.t.compute.release();
    await page.locator('.page-head .badge[data-status="running"]').waitFor();
    await address.locator('code', { hasText: created.body.subdomain }).waitFor();
    const live = page.locator('[aria-live="polite"]');
    await expect.poll(() => live.count()).toBe(1);
    await expect.poll(() => live.innerText()).toBe('slow-starter is now running.');
    await screenshot(page, 'rough-agent-running');
    expect(errors, errors.join('\n')).toEqual([]);
  }, 60_000);

  /** Every route of App.tsx, with real ids; signed in unless marked. */
  const pages = () => [
    { path: `/dashboard/accounts/${slug}`, title: /^Agents · Edsger Dijkstra · svc$/ },
    { path: `/dashboard/accounts/${slug}/agents`, title: /^Agents · / },
    { path: `/dashboard/accounts/${slug}/agents/new`, title: /^New Agent · / },
    { path: `/dashboard/accounts/${slug}/agents/${agentId}`, title: /^publisher · / },
    { path: `/dashboard/accounts/${slug}/plain-vms`, title: /^Plain VMs · / },
    { path: `/dashboard/accounts/${slug}/plain-vms/new`, title: /^New Plain VM · / },
    { path: `/dashboard/accounts/${slug}/plain-vms/${vmId}`, title: /^web-1 · / },
    { path: `/dashboard/accounts/${slug}/vault`, title: /^Vault · / },
    { path: `/dashboard/accounts/${slug}/apps`, title: /^Apps · / },
    { path: `/dashboard/accounts/${slug}/bundles`, title: /^Bundles · / },
    { path: `/dashboard/accounts/${slug}/explore`, title: /^Explore · svc$/ },
    { path: `/dashboard/accounts/${slug}/billing`, title: /^Billing · / },
    {
      path: `/dashboard/accounts/${orgSlug}/members`,
      title: /^Members · Mathematical Centre · svc$/,
    },
    {
      path: `/dashboard/accounts/${orgSlug}/audit`,
      title: /^Audit log · Mathematical Centre · svc$/,
    },
    { path: '/dashboard/', title: /^Agents · / },
    { path: '/dashboard/new-organization', title: /^New organization · svc$/ },
    { path: '/dashboard/settings', title: /^Settings · svc$/ },
    // Goes on to the Agent's page in its account.
    { path: `/dashboard/agents/${agentId}`, title: /^publisher · / },
    { path: `/dashboard/adopt/${slug}/shortest-path`, title: /^Adopt shortest-path · svc$/ },
    { path: '/dashboard/invitation?token=not-a-real-one', title: /^Invitation · svc$/ },
    { path: '/dashboard/no-such-page', title: /^Page not found · svc$/ },
    { path: '/dashboard/sign-in', title: /^Sign in · svc$/, signedOut: true },
    { path: '/dashboard/sign-up', title: /^Create your account · svc$/, signedOut: true },
    { path: '/dashboard/forgot-password', title: /^Forgot password · svc$/, signedOut: true },
    {
      path: '/dashboard/reset-password?token=not-a-real-one',
      title: /^Choose a new password · svc$/,
      signedOut: true,
    },
    {
      path: '/dashboard/verify-email',
      title: /^Verify your e-mail address · svc$/,
      signedOut: true,
    },
  ];

  it('gives every page its own title, and fits every page on a 390-px phone', async () => {
    const phone = await browser.newContext({ viewport: PHONE });
    const signedIn = await phone.newPage();
    const stranger = await (await browser.newContext({ viewport: PHONE })).newPage();
    const phoneErrors = [...[signedIn, stranger].map((p) => watchErrors(p))];
    // The same session as the desktop page.
    await phone.addCookies(await context.cookies());
    const titles = new Set<string>();
    for (const { path, title, signedOut } of pages()) {
      const at = signedOut ? stranger : signedIn;
      await at.goto(`${server.baseUrl}${path}`);
      await at.locator('h1').first().waitFor();
      await expect.poll(() => at.title(), { message: path }).toMatch(title);
      titles.add(await at.title());
      // The page itself never scrolls sideways; a wide table scrolls in its own box.
      const width = () => at.evaluate('document.documentElement.scrollWidth');
      await expect
        .poll(width, { message: `${path}: ${await at.evaluate(WIDEST)}` })
        .toBeLessThanOrEqual(PHONE.width);
      const name =
        path
          .replace(slug, 'personal')
          .replaceAll(agentId, 'agent')
          .replace(vmId, 'vm')
          .replace(/^\/dashboard\/?/, '')
          .replace(/[^a-z0-9]+/gi, '-') || 'home';
      await screenshot(at, `rough-phone-${name}`);
      expect(phoneErrors.flat(), `${path}\n${phoneErrors.flat().join('\n')}`).toEqual([]);
    }
    // Pages that show one thing under two addresses share a title; the rest do not.
    expect(titles.size).toBe(pages().length - 3);

    // The header, the verification notice and the sections take a quarter of the screen at most.
    await signedIn.goto(`${server.baseUrl}/dashboard/accounts/${orgSlug}/members`);
    await signedIn.getByRole('heading', { name: /Members/ }).waitFor();
    await signedIn.getByRole('region', { name: 'E-mail verification' }).waitFor();
    const headerHeight = () =>
      signedIn.evaluate(
        `['.topbar', '.verify-banner', '.sections'].reduce((sum, selector) =>
          sum + document.querySelector(selector).getBoundingClientRect().height, 0)`,
      );
    await expect.poll(headerHeight).toBeLessThanOrEqual(PHONE.height / 4);
    // Sign out is on the screen, not scrolled away.
    const signOut = () =>
      signedIn.evaluate(
        `[...document.querySelectorAll('.topbar button')].find((b) => b.textContent === 'Sign out').getBoundingClientRect().right`,
      );
    await expect.poll(signOut).toBeLessThanOrEqual(PHONE.width);
    await screenshot(signedIn, 'rough-phone-header');
    await phone.close();
    expect(errors, errors.join('\n')).toEqual([]);
  }, 180_000);
});
