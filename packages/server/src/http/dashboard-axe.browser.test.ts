import { addVaultEntry, createApiToken, createInvitation, createOrg } from '@svc/contract';
import { beforeAll, describe, expect, it } from 'vitest';
import { violationsOf } from '../../test/axe.js';
import { screenshot, signInInBrowser, watchErrors } from '../../test/browser.js';
import { runningMachines } from '../../test/dashboard-fixture.js';
import { dashboardInChromium } from '../../test/dashboard-page.js';
import type { TestClient } from '../../test/test-client.js';
import { signUpUser } from '../../test/test-context.js';

const PASSWORD = 'correct horse battery';
const WIDTHS = [390, 1280] as const;
const PUBLIC_KEY =
  'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl axe@example';

/**
 * Every page of the dashboard through axe-core, on a phone and on a desktop, with the tables and
 * lists they show when an account has things in it: no violation of any rule, on any page.
 */
describe('the dashboard in Chromium: accessibility (axe-core)', () => {
  const setup = dashboardInChromium();
  let owner: TestClient;
  let slug: string;
  let orgSlug: string;
  let agentId: string;
  let vmId: string;
  const email = `grace-${Date.now()}@example.com`;

  beforeAll(async () => {
    owner = setup.server.t.newClient();
    const signedUp = await signUpUser(owner, { email, name: 'Grace Hopper' });
    slug = signedUp.account.slug;
    const org = await owner.call(createOrg, { body: { name: 'Harvard Mark I', slug: 'mark-one' } });
    orgSlug = org.body.slug;
    await owner.call(createInvitation, {
      params: { id: org.body.id },
      body: { email: 'howard.aiken@example.com', role: 'member' },
    });
    ({ agentId, vmId } = await runningMachines(setup.server.t, owner, {
      agent: 'compiler',
      vm: 'univac',
      bundle: 'a-0-compiler',
      bundleManifest: { displayName: 'A-0 compiler', tags: ['compilers'] },
    }));
    await owner.call(addVaultEntry, {
      body: { type: 'ssh_key', label: 'laptop', value: PUBLIC_KEY },
    });
    await owner.call(createApiToken, { body: { name: 'ci', scope: 'read' } });
    // An hour of use, so the billing page has its usage and running bill rows.
    setup.server.t.clock.advance(3_600_000);
  }, 120_000);

  /** Every route of App.tsx, with real ids; `ready` names what the page shows once loaded. */
  const pages = () => [
    { path: `/dashboard/accounts/${slug}/agents`, ready: 'table, .card, article' },
    { path: `/dashboard/accounts/${slug}/agents/new`, ready: 'form' },
    { path: `/dashboard/accounts/${slug}/agents/${agentId}`, ready: 'dl' },
    { path: `/dashboard/accounts/${slug}/plain-vms`, ready: 'table, .card, article' },
    { path: `/dashboard/accounts/${slug}/plain-vms/new`, ready: 'form' },
    { path: `/dashboard/accounts/${slug}/plain-vms/${vmId}`, ready: 'dl' },
    { path: `/dashboard/accounts/${slug}/vault`, ready: 'table, li' },
    { path: `/dashboard/accounts/${slug}/apps`, ready: 'article' },
    { path: `/dashboard/accounts/${slug}/bundles`, ready: 'table' },
    { path: `/dashboard/accounts/${slug}/explore`, ready: 'article, li' },
    { path: `/dashboard/accounts/${slug}/billing`, ready: 'table' },
    { path: `/dashboard/accounts/${orgSlug}/members`, ready: 'table' },
    { path: `/dashboard/accounts/${orgSlug}/audit`, ready: 'table' },
    { path: '/dashboard/new-organization', ready: 'form' },
    { path: '/dashboard/settings', ready: 'ul[aria-label="Sessions"]' },
    { path: `/dashboard/adopt/${slug}/a-0-compiler`, ready: 'form' },
    { path: '/dashboard/invitation?token=not-a-real-one' },
    { path: '/dashboard/no-such-page' },
    { path: '/dashboard/sign-in', signedOut: true, ready: 'form' },
    { path: '/dashboard/sign-up', signedOut: true, ready: 'form' },
    { path: '/dashboard/forgot-password', signedOut: true, ready: 'form' },
    { path: '/dashboard/reset-password?token=not-a-real-one', signedOut: true },
    { path: '/dashboard/verify-email', signedOut: true },
  ];

  for (const width of WIDTHS) {
    it(`finds no violation on any page at ${width} px`, async () => {
      const viewport = { width, height: 900 };
      const signedIn = await setup.browser.newContext({ viewport });
      const stranger = await setup.browser.newContext({ viewport });
      const [me, them] = [await signedIn.newPage(), await stranger.newPage()];
      const errors = [...[me, them].map((p) => watchErrors(p))];
      await signInInBrowser(me, setup.server.baseUrl, { email, password: PASSWORD });
      const found: string[] = [];
      for (const { path, ready, signedOut } of pages()) {
        const page = signedOut ? them : me;
        await page.goto(`${setup.server.baseUrl}${path}`);
        await page.locator('h1').first().waitFor();
        if (ready) await page.locator(ready).first().waitFor();
        await page.waitForLoadState('networkidle');
        for (const v of await violationsOf(page))
          found.push(`${path}: ${v.rule} (${v.help}) at ${v.targets.join(', ')}`);
        await screenshot(page, `axe-${width}-${path.replace(/[^a-z0-9]+/gi, '-')}`);
        expect(errors.flat(), `${path}\n${errors.flat().join('\n')}`).toEqual([]);
      }
      await signedIn.close();
      await stranger.close();
      expect(found, found.join('\n')).toEqual([]);
    }, 180_000);
  }

  it('lets a keyboard reach and scroll a table wider than a phone, with no tab stop where it fits', async () => {
    const audit = `${setup.server.baseUrl}/dashboard/accounts/${orgSlug}/audit`;
    const phone = await setup.browser.newPage({ viewport: { width: WIDTHS[0], height: 900 } });
    const errors = watchErrors(phone);
    await signInInBrowser(phone, setup.server.baseUrl, { email, password: PASSWORD });
    await phone.goto(audit);
    const box = phone.getByRole('region', { name: 'Audit events' });
    await box.locator('table').waitFor();
    await expect.poll(() => box.evaluate((e) => e.scrollWidth > e.clientWidth)).toBe(true);
    // Tab by tab from the top of the page, as a keyboard user gets there.
    const isFocused = () => box.evaluate((e) => e === e.ownerDocument.activeElement);
    let presses = 0;
    while (!(await isFocused()) && presses < 80) {
      await phone.keyboard.press('Tab');
      presses += 1;
    }
    expect(await isFocused(), `not reached in ${presses} tabs`).toBe(true);
    for (let i = 0; i < 5; i += 1) await phone.keyboard.press('ArrowRight');
    await expect.poll(() => box.evaluate((e) => e.scrollLeft)).toBeGreaterThan(0);
    await screenshot(phone, 'axe-keyboard-scrolled-audit');

    // On a desktop the table fits: the box is no stop on the way through the page.
    await phone.setViewportSize({ width: WIDTHS[1], height: 900 });
    await expect.poll(() => box.evaluate((e) => e.scrollWidth > e.clientWidth)).toBe(false);
    await expect.poll(() => box.evaluate((e) => e.tabIndex)).toBe(-1);
    await phone.close();
    expect(errors, errors.join('\n')).toEqual([]);
  }, 60_000);
});
