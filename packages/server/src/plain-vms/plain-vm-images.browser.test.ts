import { createPlainVm, getPlainVm } from '@svc/contract';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, screenshot, signInInBrowser, watchErrors } from '../../test/browser.js';
import { type DashboardServer, startDashboardServer } from '../../test/dashboard-server.js';
import type { TestClient } from '../../test/test-client.js';
import { signUpUser } from '../../test/test-context.js';
import { waitFor } from '../../test/wait.js';
import { ComputeFailure } from '../adapters/compute/compute-driver.js';

/**
 * The OS images on a driver that has only some (as Incus after `incus:setup`, which builds
 * Debian alone), in Chromium: the create form offers those it has and starts on one of them,
 * and a VM of an image the host lacks says so in a sentence naming the operator's command.
 */
describe('OS images the driver has, in the dashboard', () => {
  let server: DashboardServer;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let owner: TestClient;
  let slug: string;
  const email = `grace-${Date.now()}@example.com`;

  beforeAll(async () => {
    server = await startDashboardServer();
    server.t.compute.images = new Set(['debian-13', 'debian-12']);
    owner = server.t.newClient();
    slug = (await signUpUser(owner, { email })).account.slug;
    browser = await launchChromium();
    page = await browser.newPage();
    errors = watchErrors(page);
    await signInInBrowser(page, server.baseUrl, { email, password: 'correct horse battery' });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('offers only the images the driver has, starting on one of them', async () => {
    await page.goto(`${server.baseUrl}/dashboard/accounts/${slug}/plain-vms/new`);
    const select = page.getByLabel('OS image');
    await expect
      .poll(() => select.locator('option').evaluateAll((options) => options.map((o) => o.value)))
      .toEqual(['debian-13', 'debian-12']);
    await expect.poll(() => select.inputValue()).toBe('debian-13');
    await expect.poll(() => page.getByText('You log in as debian.').count()).toBe(1);
    await screenshot(page, 'plain-vm-images-offered');
    expect(errors, errors.join('\n')).toEqual([]);
  }, 60_000);

  it('says what image_unavailable means and what the operator runs', async () => {
    server.t.compute.behave('createServer', {
      failTimes: 1,
      failWith: () => new ComputeFailure('image_unavailable', 'no image alias "ubuntu-24.04"'),
    });
    const created = await owner.call(createPlainVm, {
      body: {
        name: 'no-image',
        tier: 'small',
        region: 'eu',
        osImageKey: 'ubuntu-24.04',
        billingType: 'metered',
        access: { passwordEnabled: true, vaultEntryIds: [] },
      },
    });
    const id = created.body.id;
    await waitFor(
      async () => (await owner.call(getPlainVm, { params: { id } })).body.status === 'error',
      30_000,
      'the VM in error',
    );
    await page.goto(`${server.baseUrl}/dashboard/accounts/${slug}/plain-vms/${id}`);
    const sentence = page.getByText('This host has no image of the chosen OS');
    await sentence.waitFor();
    await expect.poll(() => sentence.innerText()).toContain('sudo npm run admin -- images build');
    await expect.poll(() => sentence.innerText()).toContain('sudo npm run admin -- images sync');
    await screenshot(page, 'plain-vm-image-unavailable');
    expect(errors, errors.join('\n')).toEqual([]);
  }, 60_000);
});
