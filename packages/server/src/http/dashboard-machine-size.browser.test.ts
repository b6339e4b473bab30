import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, screenshot, signInInBrowser, watchErrors } from '../../test/browser.js';
import { runningMachines } from '../../test/dashboard-fixture.js';
import { type DashboardServer, startDashboardServer } from '../../test/dashboard-server.js';
import { signUpUser } from '../../test/test-context.js';

const PASSWORD = 'correct horse battery';

/**
 * A machine's size in its detail, in Chromium: the size table's numbers, and beside them what the
 * machine has where its driver gives it less (here the test driver scales as INCUS_SIZE_FACTOR=0.25
 * does a small EU machine: 1 vCPU, 1 GiB, 20 GiB).
 */
describe('the dashboard in Chromium: sizes as they are', () => {
  let server: DashboardServer;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let slug: string;
  let ids: { agentId: string; vmId: string };
  const email = `grace-${Date.now()}@example.com`;

  beforeAll(async () => {
    server = await startDashboardServer();
    const owner = server.t.newClient();
    slug = (await signUpUser(owner, { email, name: 'Grace Hopper' })).account.slug;
    ids = await runningMachines(server.t, owner, { agent: 'sized', vm: 'sized-vm', bundle: 'b' });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    errors = watchErrors(page);
    await signInInBrowser(page, server.baseUrl, { email, password: PASSWORD });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  const sizeOn = async (path: string, term: 'Size' | 'Tier') => {
    await page.goto(`${server.baseUrl}/dashboard/accounts/${slug}/${path}`);
    const fact = page.locator(`dt:text-is("${term}") + dd`);
    await fact.waitFor();
    return fact;
  };

  it('shows only the size table where the driver sets no limits of its own', async () => {
    server.t.compute.limits = undefined;
    const fact = await sizeOn(`agents/${ids.agentId}`, 'Size');
    await expect.poll(() => fact.textContent()).toBe('small: 2 vCPU, 4 GB RAM, 80 GB disk');
    expect(errors, errors.join('\n')).toEqual([]);
  }, 60_000);

  it("shows the machine's actual limits beside its size's where they differ", async () => {
    server.t.compute.limits = () => ({ vcpu: 1, ramMb: 1024, diskGb: 20 });
    const agent = await sizeOn(`agents/${ids.agentId}`, 'Size');
    await expect
      .poll(() => agent.textContent())
      .toBe('small: 2 vCPU, 4 GB RAM, 80 GB disk (1 vCPU, 1 GiB RAM, 20 GiB disk here)');
    await screenshot(page, 'machine-size-agent');
    const vm = await sizeOn(`plain-vms/${ids.vmId}`, 'Tier');
    await expect
      .poll(() => vm.textContent())
      .toBe('small: 2 vCPU, 4 GB RAM, 80 GB disk (1 vCPU, 1 GiB RAM, 20 GiB disk here)');
    expect(errors, errors.join('\n')).toEqual([]);
  }, 60_000);

  it('shows nothing more where the limits are the size table', async () => {
    server.t.compute.limits = () => ({ vcpu: 2, ramMb: 4096, diskGb: 80 });
    const fact = await sizeOn(`agents/${ids.agentId}`, 'Size');
    await expect.poll(() => fact.textContent()).toBe('small: 2 vCPU, 4 GB RAM, 80 GB disk');
    expect(errors, errors.join('\n')).toEqual([]);
  }, 60_000);
});
