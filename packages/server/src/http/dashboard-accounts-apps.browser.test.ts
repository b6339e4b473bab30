import { acceptInvitation, getMe, signIn } from '@svc/contract';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { clickAndAwaitClose, openPage, screenshot, signUpInBrowser } from '../../test/browser.js';
import { type DashboardServer, startDashboardServer } from '../../test/dashboard-server.js';
import { mailedLinkToken, verifyAddress } from '../../test/mailed-links.js';
import { type StandIn, startStandIn } from '../../test/stand-in-provider.js';
import { signUpUser } from '../../test/test-context.js';

/**
 * Accounts and app connections in Chromium: signing out and in, an organization's members, and
 * connecting a provider through its consent screen in a popup (a stand-in authorization server).
 */
describe('the dashboard in Chromium: members, sign-in, apps', () => {
  let server: DashboardServer;
  let suite: StandIn;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  const email = `grace-${Date.now()}@example.com`;
  const password = 'correct horse battery';
  const go = (path: string) => page.goto(`${server.baseUrl}${path}`);

  beforeAll(async () => {
    server = await startDashboardServer(async (baseUrl) => {
      suite = await startStandIn('suite', { redirectUri: `${baseUrl}/api/apps/callback` });
      return suite.env();
    });
    ({ browser, page, errors } = await openPage());
    await signUpInBrowser(page, server.baseUrl, { name: 'Grace Hopper', email, password });
  }, 90_000);
  // Each step answers for its own console errors (a failed step's stay with it).
  beforeEach(() => {
    errors?.splice(0);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await suite?.close();
  });

  it('signs out, refuses a wrong password with the server message, and signs in again', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').getByText('The e-mail or the password is wrong.').waitFor();
    await screenshot(page, 'dashboard-sign-in-refused');
    // The refused attempt is the one console error a browser logs here (a 401 resource load).
    expect(errors.splice(0)).toEqual([
      'Failed to load resource: the server responded with a status of 401 (Unauthorized)',
    ]);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Agents' }).waitFor();
    expect(errors, errors.join('\n')).toEqual([]);
  }, 60_000);

  it('changes the name and the password in settings and signs another browser out', async () => {
    const other = server.t.newClient();
    await other.call(signIn, { body: { email, password } });
    await page.getByRole('link', { name: email }).click();
    await page.getByRole('heading', { name: 'Settings' }).waitFor();
    const rows = page.getByRole('list', { name: 'Sessions' }).getByRole('listitem');
    await expect.poll(() => rows.count()).toBe(2);
    await rows.filter({ hasText: 'This browser' }).waitFor();
    await screenshot(page, 'dashboard-settings');
    await rows.getByRole('button', { name: 'Sign out' }).click();
    await expect.poll(() => rows.count()).toBe(1);
    expect((await other.callError(getMe)).status).toBe(401);

    await page.getByLabel('Your name').fill('Grace B. Hopper');
    await page.getByRole('button', { name: 'Save name' }).click();
    await page.getByRole('status').getByText('Saved.').waitFor();
    expect(
      (
        await server.t.ctx.database.db
          .selectFrom('users')
          .select('name')
          .where('email', '=', email)
          .executeTakeFirstOrThrow()
      ).name,
    ).toBe('Grace B. Hopper');

    await page.getByLabel('Current password').fill('not the password');
    await page.getByLabel('New password').fill('an even better passphrase');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByText('Not your current password', { exact: true }).waitFor();
    // The refused change is the one console error here (a 400 resource load).
    expect(errors.splice(0)).toEqual([
      'Failed to load resource: the server responded with a status of 400 (Bad Request)',
    ]);
    await page.getByLabel('Current password').fill(password);
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByRole('status').getByText('Password changed').waitFor();
    const signInWith = (secret: string) =>
      server.t.newClient().send(signIn, { body: { email, password: secret } });
    expect((await signInWith(password)).status).toBe(401);
    expect((await signInWith('an even better passphrase')).status).toBe(200);
    await page
      .getByRole('navigation', { name: 'Sections' })
      .getByRole('link', { name: 'Agents' })
      .click();
    await page.getByRole('heading', { name: 'Agents' }).waitFor();
    expect(errors, errors.join('\n')).toEqual([]);
  }, 60_000);

  it('creates an organization, invites a member with a role, who accepts, and removes them', async () => {
    const otherClient = server.t.newClient();
    const other = await signUpUser(otherClient, { name: 'Katherine Johnson' });
    await page.getByRole('link', { name: 'New organization' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Navy Lab');
    await page.getByRole('button', { name: 'Create organization' }).click();
    await page.getByRole('heading', { name: 'Billing' }).waitFor();
    await page.getByRole('link', { name: 'Members' }).click();
    await page.getByRole('heading', { name: 'Members of Navy Lab' }).waitFor();
    // Someone with an account joins by the mailed invitation too, never silently.
    await page.getByLabel('E-mail to invite').fill(other.user.email);
    await page.getByLabel('Role when they join').selectOption('admin');
    await page.getByRole('button', { name: 'Invite', exact: true }).click();
    await page.getByRole('status').getByText(`Invitation sent to ${other.user.email}.`).waitFor();
    await verifyAddress(server.t, otherClient, other.user.email);
    const token = await mailedLinkToken(server.t, other.user.email, 'invitation');
    await otherClient.call(acceptInvitation, { body: { token } });
    await page.reload();
    const row = page.getByRole('row', { name: /Katherine Johnson/ });
    await row.waitFor();
    const role = row.getByLabel('Role of Katherine Johnson');
    await expect.poll(() => role.inputValue()).toBe('admin');
    // The owner changes the role in place; the change is in the audit log with who made it.
    await role.selectOption('member');
    await page.reload();
    await expect.poll(() => role.inputValue()).toBe('member');
    await screenshot(page, 'dashboard-members');
    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.getByRole('heading', { name: 'Audit log' }).waitFor();
    const roleEvent = page.getByRole('row', { name: /member\.role/ });
    await expect.poll(() => roleEvent.innerText()).toContain('to: member');
    await expect.poll(() => page.getByRole('row', { name: /invitation\.accept/ }).count()).toBe(1);
    await screenshot(page, 'dashboard-audit');
    await page.getByLabel('Show').selectOption('account');
    await expect.poll(() => page.getByRole('row', { name: /member\./ }).count()).toBe(0);
    await page.getByRole('link', { name: 'Members' }).click();
    await row.waitFor();

    await row.getByRole('button', { name: 'Remove Katherine Johnson' }).click();
    await row.getByRole('button', { name: 'Remove', exact: true }).click();
    await expect.poll(() => page.getByRole('row', { name: /Katherine Johnson/ }).count()).toBe(0);
    expect(errors, errors.join('\n')).toEqual([]);
  }, 60_000);

  it('connects the suite provider in a popup, reconnects it from error, and disconnects it', async () => {
    await page.getByRole('link', { name: 'Apps' }).click();
    await page.getByRole('heading', { name: 'Apps' }).waitFor();
    const card = page.getByRole('article', { name: /Suite|Google/i }).first();
    await card.waitFor();
    await expect.poll(() => page.getByRole('article').count()).toBe(3);
    await card.getByRole('checkbox').first().check();
    const [popup] = await Promise.all([
      page.waitForEvent('popup'),
      card.getByRole('button', { name: /^Connect/ }).click(),
    ]);
    // The stand-in's own login and consent pages, as a person would go through them.
    await popup.locator('input[name="login"]').fill('alice');
    await popup.locator('input[name="password"]').fill('any');
    await popup.locator('button[type="submit"]').click();
    // The consent page's button, not the login page's again (under load it lingers a moment).
    await popup.locator('input[name="login"]').waitFor({ state: 'detached', timeout: 15_000 });
    await clickAndAwaitClose(popup, popup.locator('button[type="submit"]'));

    await page.getByRole('status').getByText('Connected Productivity suite.').waitFor();
    const connection = card.locator('.connection');
    await connection.waitFor();
    await expect.poll(() => connection.innerText()).toContain('active');
    await screenshot(page, 'dashboard-apps-connected');

    // A connection in error offers Reconnect: the same provider account again makes it active.
    await server.t.ctx.database.db.updateTable('appConnections').set({ status: 'error' }).execute();
    await page.reload();
    await connection.locator('.badge', { hasText: 'error' }).waitFor();
    const [again] = await Promise.all([
      page.waitForEvent('popup'),
      connection.getByRole('button', { name: 'Reconnect' }).click(),
    ]);
    // The stand-in remembers the login; the consent page comes again (the service asks for it).
    await clickAndAwaitClose(again, again.locator('button[type="submit"]'));
    await connection.locator('.badge', { hasText: 'active' }).waitFor();
    await expect.poll(() => card.locator('.connection').count()).toBe(1);

    await connection.getByRole('button', { name: 'Disconnect' }).click();
    await connection.getByRole('button', { name: 'Disconnect' }).click();
    await expect.poll(() => card.locator('.connection').count()).toBe(0);
    expect(errors, errors.join('\n')).toEqual([]);
  }, 60_000);

  it("shows a failed Agent's reason, the not-found and not-a-member pages, an unreachable service", async () => {
    await page.getByRole('link', { name: 'Agents' }).click();
    await page.getByRole('link', { name: 'New Agent' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Doomed');
    await page.getByRole('button', { name: 'Create Agent' }).click();
    await page.locator('.page-head .badge[data-status="running"]').waitFor({ timeout: 20_000 });
    const agentPath = new URL(page.url()).pathname;
    await server.t.ctx.database.db
      .updateTable('agents')
      .set({ state: 'error', statusReason: 'provisioning_timeout' })
      .where('id', '=', agentPath.split('/').pop() as string)
      .execute();
    await page.reload();
    const badge = page.locator('.page-head .badge[data-status="error"]');
    await expect.poll(() => badge.innerText()).toBe('error: provisioning_timeout');
    for (const name of ['Open', 'Start', 'Stop', 'Restart']) {
      await expect
        .poll(() => page.getByRole('button', { name, exact: true }).isDisabled(), { message: name })
        .toBe(true);
    }
    await page.getByLabel('to destroy this Agent').waitFor();
    await screenshot(page, 'dashboard-agent-error');

    const slug = agentPath.split('/')[3] as string;
    await go(`/dashboard/accounts/${slug}/agents/00000000-0000-4000-8000-000000000000`);
    await page.getByRole('heading', { name: 'Agent not found' }).waitFor();
    expect(errors.splice(0)).toEqual([
      'Failed to load resource: the server responded with a status of 404 (Not Found)',
    ]);
    await go('/dashboard/accounts/not-a-member-here/agents');
    await page.getByRole('alert').getByText('You are not a member of this account.').waitFor();
    expect(errors, errors.join('\n')).toEqual([]);

    // The service unreachable: the page says so and offers to try again, which then works.
    await page.route('**/api/agents?*', (route) => route.abort('connectionrefused'));
    await go(`/dashboard/accounts/${slug}/agents`);
    await page
      .getByRole('alert')
      .getByText('The service cannot be reached.', { exact: false })
      .waitFor({ timeout: 20_000 });
    await screenshot(page, 'dashboard-agents-unreachable');
    await page.unroute('**/api/agents?*');
    await page.getByRole('button', { name: 'Try again' }).click();
    await page.getByRole('link', { name: 'Doomed' }).waitFor();
    expect(
      errors.every((e) => e.includes('net::ERR_CONNECTION_REFUSED')),
      errors.join('\n'),
    ).toBe(true);
  }, 60_000);
});
