import { signIn } from '@svc/contract';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openPage, screenshot, signUpInBrowser, watchErrors } from '../../test/browser.js';
import { type DashboardServer, startDashboardServer } from '../../test/dashboard-server.js';
import {
  type ReceivedMail,
  startTestSmtpServer,
  type TestSmtpServer,
} from '../../test/smtp-server.js';
import { waitFor } from '../../test/wait.js';

/**
 * The links the service mails, followed in Chromium as a person would: verifying the address,
 * resetting a forgotten password, and an invitation accepted by someone who signs up on the way.
 * Mail goes through a real SMTP server in this process; the links are read from what arrived.
 */
describe('the dashboard in Chromium: links from e-mails', () => {
  let smtp: TestSmtpServer;
  let server: DashboardServer;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  const stamp = Date.now();
  const email = `ada-${stamp}@example.com`;
  const password = 'correct horse battery';
  const newPassword = 'analytical engine 1843';
  const go = (target: Page, path: string) => target.goto(`${server.baseUrl}${path}`);

  /** The newest message to `to` with `subject`, once at least `count` of them arrived. */
  const mailTo = (to: string, subject: string, count = 1) =>
    waitFor(
      () => {
        const found = smtp.received.filter(
          (mail) => mail.envelope.to.includes(to) && mail.parsed.subject === subject,
        );
        return found.length >= count ? found.at(-1) : undefined;
      },
      20_000,
      `mail "${subject}" #${count} to ${to}`,
    );
  /** The dashboard link of `page` in the message's plain text, as a path of the server. */
  const linkIn = (mail: ReceivedMail, dashboardPage: string) => {
    const pattern = new RegExp(`/dashboard/${dashboardPage}\\?token=[A-Za-z0-9_-]+`);
    const url = mail.parsed.text?.split(/\s+/).find((word) => pattern.test(word));
    if (!url) throw new Error(`no ${dashboardPage} link in:\n${mail.parsed.text}`);
    expect(url.startsWith(`${server.baseUrl}/dashboard/`), url).toBe(true);
    return url.slice(server.baseUrl.length);
  };
  const signInStatus = async (secret: string) =>
    (await server.t.newClient().send(signIn, { body: { email, password: secret } })).status;

  beforeAll(async () => {
    smtp = await startTestSmtpServer();
    server = await startDashboardServer(() => ({
      SMTP_URL: smtp.url,
      EMAIL_VERIFICATION: 'required',
    }));
    ({ browser, page, errors } = await openPage());
    await signUpInBrowser(page, server.baseUrl, { name: 'Ada Lovelace', email, password });
  }, 90_000);
  // Each step answers for its own console errors (a failed step's stay with it).
  beforeEach(() => {
    errors?.splice(0);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await smtp?.close();
  });

  it('asks for the address to be verified, sends the link again, and the link verifies it', async () => {
    const banner = page.getByRole('region', { name: 'E-mail verification' });
    await banner.getByText('Verify your e-mail to create machines.').waitFor();
    await mailTo(email, 'Verify your e-mail address');
    await banner.getByRole('button', { name: 'Send the link again' }).click();
    await banner.getByRole('status').getByText(`A new link is on its way to ${email}.`).waitFor();
    await screenshot(page, 'account-links-verify-banner');

    const link = linkIn(await mailTo(email, 'Verify your e-mail address', 2), 'verify-email');
    await go(page, link);
    await page
      .getByRole('status')
      .getByText(`Your e-mail address ${email} is verified.`, { exact: false })
      .waitFor();
    await screenshot(page, 'account-links-verified');
    const user = await server.t.ctx.database.db
      .selectFrom('users')
      .select('emailVerifiedAt')
      .where('email', '=', email)
      .executeTakeFirstOrThrow();
    expect(user.emailVerifiedAt).not.toBeNull();

    await page.getByRole('link', { name: 'Go to the dashboard' }).click();
    await page.getByRole('heading', { name: 'Agents' }).waitFor();
    await expect.poll(() => banner.count()).toBe(0);
    expect(errors, errors.join('\n')).toEqual([]);
  }, 60_000);

  it('resets a forgotten password through the mailed link and lands signed in', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.getByRole('link', { name: 'Forgot password?' }).click();
    await page.getByRole('heading', { name: 'Forgot your password?' }).waitFor();
    await page.getByLabel('E-mail').fill(email);
    await page.getByRole('button', { name: 'Send the link' }).click();
    await page
      .getByRole('status')
      .getByText(`If an account has the address ${email}`, { exact: false })
      .waitFor();
    await screenshot(page, 'account-links-forgot-password');

    const link = linkIn(await mailTo(email, 'Reset your password'), 'reset-password');
    await go(page, link);
    await page.getByRole('heading', { name: 'Choose a new password' }).waitFor();
    await page.getByLabel('New password').fill(newPassword);
    await page.getByRole('button', { name: 'Set the new password' }).click();
    await page.getByRole('heading', { name: 'Agents' }).waitFor();
    await page.getByRole('link', { name: email }).waitFor();
    await screenshot(page, 'account-links-reset-signed-in');
    expect(await signInStatus(password)).toBe(401);
    expect(await signInStatus(newPassword)).toBe(200);
    expect(errors, errors.join('\n')).toEqual([]);

    // The link worked once: opened again, it says so and offers to ask for a new one.
    await go(page, link);
    await page.getByLabel('New password').fill('yet another passphrase');
    await page.getByRole('button', { name: 'Set the new password' }).click();
    await page
      .getByRole('alert')
      .getByText('This password reset link is not valid', { exact: false })
      .waitFor();
    await page.getByRole('link', { name: 'Ask for a new link' }).waitFor();
    await screenshot(page, 'account-links-reset-used');
    // The refused link is the one console error here (a 400 resource load).
    expect(errors.splice(0)).toEqual([
      'Failed to load resource: the server responded with a status of 400 (Bad Request)',
    ]);
    expect(await signInStatus(newPassword)).toBe(200);
  }, 60_000);

  it('invites an address that signs up from the invitation and joins as an admin', async () => {
    const invitee = `charles-${stamp}@example.com`;
    await go(page, '/dashboard/');
    await page.getByRole('link', { name: 'New organization' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Analytical Engines');
    await page.getByRole('button', { name: 'Create organization' }).click();
    await page.getByRole('heading', { name: 'Billing' }).waitFor();
    const slug = new URL(page.url()).pathname.split('/')[3] as string;
    await page.getByRole('link', { name: 'Members' }).click();
    await page.getByRole('heading', { name: 'Members of Analytical Engines' }).waitFor();
    await page.getByLabel('E-mail to invite').fill(invitee);
    await page.getByLabel('Role when they join').selectOption('admin');
    await page.getByRole('button', { name: 'Invite', exact: true }).click();
    await page.getByRole('status').getByText(`Invitation sent to ${invitee}.`).waitFor();
    const pending = page.getByRole('row', { name: new RegExp(invitee) });
    await expect.poll(() => pending.innerText()).toContain('admin');
    await screenshot(page, 'account-links-invited');

    const link = linkIn(
      await mailTo(invitee, 'Ada Lovelace invited you to Analytical Engines'),
      'invitation',
    );
    // Another browser, with no cookie of the owner's.
    const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    const other = await context.newPage();
    const otherErrors = watchErrors(other);
    await go(other, link);
    await other.getByText('Sign in or sign up to accept', { exact: false }).waitFor();
    await screenshot(other, 'account-links-invitation-signed-out');
    // Asking who is signed in is the one console error here (a 401 resource load).
    expect(otherErrors.splice(0)).toEqual([
      'Failed to load resource: the server responded with a status of 401 (Unauthorized)',
    ]);
    await other.getByRole('link', { name: 'Sign up' }).click();
    await other.getByRole('heading', { name: 'Create your account' }).waitFor();
    await other.getByLabel('Name', { exact: true }).fill('Charles Babbage');
    await other.getByLabel('E-mail').fill(invitee);
    await other.getByLabel('Password').fill(password);
    await other.getByRole('button', { name: 'Sign up' }).click();
    // Back on the invitation, signed in; signing up with the address is not owning it yet.
    await other.getByRole('heading', { name: 'Invitation' }).waitFor();
    await screenshot(other, 'account-links-invitation-signed-in');
    await other.getByRole('button', { name: 'Accept invitation' }).click();
    await other.getByRole('alert').getByText(`Verify ${invitee} first`, { exact: false }).waitFor();
    await screenshot(other, 'account-links-invitation-unverified');
    expect(otherErrors.splice(0)).toEqual([
      'Failed to load resource: the server responded with a status of 403 (Forbidden)',
    ]);
    await go(other, linkIn(await mailTo(invitee, 'Verify your e-mail address'), 'verify-email'));
    await other
      .getByRole('status')
      .getByText(`Your e-mail address ${invitee} is verified.`, { exact: false })
      .waitFor();
    await go(other, link);
    await other.getByRole('button', { name: 'Accept invitation' }).click();
    await other.getByRole('heading', { name: 'Agents' }).waitFor();
    expect(new URL(other.url()).pathname).toBe(`/dashboard/accounts/${slug}`);
    await expect.poll(() => other.getByLabel('Account').inputValue()).toBe(slug);
    // The invitee's address is verified: no banner asks for it.
    await expect
      .poll(() => other.getByRole('region', { name: 'E-mail verification' }).count())
      .toBe(0);
    await screenshot(other, 'account-links-invitation-accepted');
    expect(otherErrors, otherErrors.join('\n')).toEqual([]);
    await context.close();

    await page.reload();
    const row = page.getByRole('row', { name: /Charles Babbage/ });
    await expect.poll(() => row.getByLabel('Role of Charles Babbage').inputValue()).toBe('admin');
    await page.getByText('No pending invitations.').waitFor();
    await screenshot(page, 'account-links-new-member');
    expect(errors, errors.join('\n')).toEqual([]);
  }, 90_000);

  it('creates an API token shown once, revokes it, changes the e-mail, and deletes an account', async () => {
    const asToken = (token: string) =>
      fetch(`${server.baseUrl}/api/me`, { headers: { authorization: `Bearer ${token}` } });
    await page.getByRole('link', { name: email }).click();
    await page.getByRole('heading', { name: 'Settings' }).waitFor();
    await page.getByText('No tokens yet.').waitFor();
    await page.getByLabel('Token name').fill('backup script');
    await page.getByLabel('Scope').selectOption('write');
    await page.getByLabel('Expires on (optional)').fill('2099-12-31');
    await page.getByRole('button', { name: 'Create token' }).click();
    const shown = page.getByTestId('new-api-token');
    await shown.waitFor();
    const token = await shown.innerText();
    expect(token).toMatch(/^svcp_/);
    expect((await asToken(token)).status).toBe(200);
    const row = page
      .getByRole('list', { name: 'API tokens' })
      .getByRole('listitem')
      .filter({ hasText: 'backup script' });
    await expect.poll(() => row.innerText()).toContain('read and write');
    await screenshot(page, 'account-links-api-token');
    await page.getByRole('button', { name: 'I have copied it' }).click();
    await expect.poll(() => shown.count()).toBe(0);
    await row.getByRole('button', { name: 'Revoke backup script' }).click();
    await row.getByRole('button', { name: 'Revoke', exact: true }).click();
    await page.getByText('No tokens yet.').waitFor();
    expect((await asToken(token)).status).toBe(401);

    // A new address needs the current password, and takes effect from the link mailed to it;
    // the current address is told, with a link that would take the account back.
    const newEmail = `ada-new-${stamp}@example.com`;
    await page.getByLabel('E-mail address').fill(newEmail);
    await page.getByLabel('Password', { exact: true }).fill('not my password');
    await page.getByRole('button', { name: 'Change e-mail' }).click();
    await page.getByText('Not your current password', { exact: true }).waitFor();
    expect(errors.splice(0)).toEqual([
      'Failed to load resource: the server responded with a status of 403 (Forbidden)',
    ]);
    await page.getByLabel('Password', { exact: true }).fill(newPassword);
    await page.getByRole('button', { name: 'Change e-mail' }).click();
    await page
      .getByRole('status')
      .getByText(`We sent a link to ${newEmail}`, { exact: false })
      .waitFor();
    await screenshot(page, 'account-links-email-change-asked');
    const notice = await mailTo(email, 'A change of your e-mail address was asked for');
    expect(notice.parsed.text).toContain('/dashboard/undo-email-change?token=');
    expect(await signInStatus(newPassword)).toBe(200);
    const confirm = linkIn(
      await mailTo(newEmail, 'Confirm your new e-mail address'),
      'verify-email',
    );
    await go(page, confirm);
    await page
      .getByRole('status')
      .getByText(`Your e-mail address ${newEmail} is verified.`, { exact: false })
      .waitFor();
    await mailTo(email, 'Your e-mail address was changed');
    await go(page, '/dashboard/settings');
    await expect.poll(() => page.getByLabel('E-mail address').inputValue()).toBe(newEmail);
    await page.getByText('Verified.').waitFor();

    // Ada owns Analytical Engines alone: the service refuses and says why.
    await page.getByLabel('to delete this account').fill(newEmail);
    await page.getByRole('button', { name: 'Delete account' }).click();
    await page
      .getByRole('alert')
      .getByText('You are the only owner of Analytical Engines', { exact: false })
      .waitFor();
    await screenshot(page, 'account-links-delete-refused');
    expect(errors.splice(0)).toEqual([
      'Failed to load resource: the server responded with a status of 409 (Conflict)',
    ]);

    // Someone with nothing left behind deletes their account and lands on sign-in.
    const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    const other = await context.newPage();
    const otherErrors = watchErrors(other);
    const leaving = `grace-${stamp}@example.com`;
    await signUpInBrowser(other, server.baseUrl, {
      name: 'Grace Hopper',
      email: leaving,
      password,
    });
    await other.getByRole('link', { name: leaving }).click();
    await other.getByLabel('to delete this account').fill(leaving);
    await other.getByRole('button', { name: 'Delete account' }).click();
    await other.getByRole('status').getByText('Your account was deleted.').waitFor();
    await screenshot(other, 'account-links-deleted');
    expect(
      (await server.t.newClient().callError(signIn, { body: { email: leaving, password } })).status,
    ).toBe(401);
    expect(otherErrors, otherErrors.join('\n')).toEqual([]);
    await context.close();
    expect(errors, errors.join('\n')).toEqual([]);
  }, 90_000);
});
