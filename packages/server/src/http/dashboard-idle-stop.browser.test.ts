import { getAgent, updateAgent } from '@svc/contract';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { screenshot } from '../../test/browser.js';
import {
  dashboardInChromium,
  expectFitsWidth,
  expectNoViolations,
} from '../../test/dashboard-page.js';
import type { TestClient } from '../../test/test-client.js';
import { signUpUser } from '../../test/test-context.js';

const PASSWORD = 'correct horse battery';
const WIDTH = 390;

/**
 * An Agent's idle stop in the dashboard, at a phone's width: set on the create form, shown and
 * changed on the Agent's page (whole minutes, 0 = never), and said once the service stopped it.
 */
describe('the dashboard in Chromium: idle stop', () => {
  const setup = dashboardInChromium();
  let context: BrowserContext;
  let page: Page;
  let errors: string[];
  let owner: TestClient;
  let slug: string;
  const email = `idle-${Date.now()}@example.com`;
  const account = (path: string) =>
    page.goto(`${setup.server.baseUrl}/dashboard/accounts/${slug}/${path}`);
  const status = (value: string) => page.locator(`.page-head [data-status="${value}"]`);
  const idleStop = () => page.getByLabel('Idle stop (minutes)');

  beforeAll(async () => {
    owner = setup.server.t.newClient();
    ({ slug } = (await signUpUser(owner, { email, name: 'Ida Idle' })).account);
    ({ context, page, errors } = await setup.signedInPage(WIDTH, { email, password: PASSWORD }));
  }, 60_000);
  afterAll(async () => {
    await context?.close();
  });

  it('sets the idle stop on create, changes it on the page, and says why the Agent stopped', async () => {
    await account('agents/new');
    await page.getByLabel('Name', { exact: true }).fill('sleepy');
    await idleStop().fill('1.5');
    await page.getByRole('button', { name: 'Create Agent' }).click();
    await page.getByText('Use whole minutes').waitFor();
    await idleStop().fill('5');
    await page.getByRole('button', { name: 'Create Agent' }).click();
    await page.waitForURL(/\/agents\/[0-9a-f-]{36}$/);
    const id = new URL(page.url()).pathname.split('/').pop() as string;
    expect((await owner.call(getAgent, { params: { id } })).body.idleStopMinutes).toBe(5);
    await status('running').waitFor({ timeout: 20_000 });
    await page.getByText('The service stops it after 5 minutes without anyone using it.').waitFor();

    await idleStop().fill('0');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText('It runs until someone stops it.').waitFor();
    expect((await owner.call(getAgent, { params: { id } })).body.idleStopMinutes).toBe(0);
    await expectFitsWidth(page, WIDTH);
    await expectNoViolations(page, 'the Agent page with its idle stop');

    // Nobody uses it for its minute: the service stops it, and the page says so.
    await owner.call(updateAgent, { params: { id }, body: { idleStopMinutes: 1 } });
    setup.server.t.clock.advance(61_000);
    await setup.server.t.ctx.agents.stopIdle();
    await page.reload();
    await status('stopped').waitFor({ timeout: 20_000 });
    await page.getByText('Stopped by the service because nobody used it').waitFor();
    await screenshot(page, `idle-stop-${WIDTH}-stopped`);
    await expectNoViolations(page, 'an Agent stopped for idleness');
    expect(errors, errors.join('\n')).toEqual([]);
  }, 90_000);
});
