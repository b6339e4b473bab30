import { NOTICE_KINDS } from '@svc/contract';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPage, screenshot, signUpInBrowser } from '../../test/browser.js';
import { type DashboardServer, startDashboardServer } from '../../test/dashboard-server.js';

describe('the dashboard in Chromium: notices in Settings', () => {
  let server: DashboardServer;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  const email = `ada-${Date.now()}@example.com`;

  beforeAll(async () => {
    server = await startDashboardServer();
    ({ browser, page, errors } = await openPage());
    await signUpInBrowser(page, server.baseUrl, {
      name: 'Ada Lovelace',
      email,
      password: 'correct horse battery',
    });
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  /** The user's choices as the service stores them. */
  const stored = async () => {
    const user = await server.t.ctx.database.db
      .selectFrom('users')
      .select('id')
      .where('email', '=', email)
      .executeTakeFirstOrThrow();
    return server.t.ctx.notices.preferences(user.id);
  };

  it('shows every kind on, and a box turned off stays off after a reload', async () => {
    await page.goto(`${server.baseUrl}/dashboard/settings`);
    const notices = page.getByRole('group', { name: 'Mail me when' });
    const failed = notices.getByLabel('An Agent or a Plain VM failed');
    await failed.waitFor();
    expect(await notices.getByRole('checkbox').count()).toBe(NOTICE_KINDS.length);
    for (const box of await notices.getByRole('checkbox').all()) {
      expect(await box.isChecked()).toBe(true);
    }

    await failed.uncheck();
    await expect.poll(async () => (await stored()).machine_error).toBe(false);
    expect(await stored()).toMatchObject({ connection_error: true, subscription_past_due: true });
    await screenshot(page, 'settings-notices');

    await page.reload();
    await notices.getByLabel('An app connection stopped working').waitFor();
    expect(await failed.isChecked()).toBe(false);
    expect(await notices.getByLabel('A subscription went past due').isChecked()).toBe(true);
    expect(errors).toEqual([]);
  });
});
