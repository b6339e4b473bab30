import {
  activateSubscription,
  addVaultEntry,
  createAgent,
  createOrg,
  deactivateSubscription,
  getAgent,
  getPlainVm,
} from '@svc/contract';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { screenshot } from '../../test/browser.js';
import {
  dashboardInChromium,
  expectFitsWidth,
  expectNoViolations,
  runningPlainVm,
  signedInPage,
} from '../../test/dashboard-page.js';
import { type DashboardServer, startDashboardServer } from '../../test/dashboard-server.js';
import type { TestClient } from '../../test/test-client.js';
import { signUpUser } from '../../test/test-context.js';

const PASSWORD = 'correct horse battery';
const WIDTHS = [1280, 390] as const;
const PUBLIC_KEY =
  'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl flows@example';

/**
 * The flows of the create forms and the machines' pages, at a desktop's and a phone's width:
 * both kinds of machine go straight to their page once created, the only Vault key comes chosen,
 * what cannot be done now is disabled with the reason beside it, and an Agent's address opens
 * it. axe-core finds no violation on the pages in these states.
 */
describe('the dashboard in Chromium: create and detail flows', () => {
  const setup = dashboardInChromium();

  for (const width of WIDTHS) {
    describe(`at ${width} px`, () => {
      let context: BrowserContext;
      let page: Page;
      let errors: string[];
      let owner: TestClient;
      let slug: string;
      let accountId: string;
      const email = `flows-${width}-${Date.now()}@example.com`;
      const account = (path: string) =>
        page.goto(`${setup.server.baseUrl}/dashboard/accounts/${slug}/${path}`);
      const status = (value: string) => page.locator(`.page-head [data-status="${value}"]`);
      const noViolations = (what: string) => expectNoViolations(page, what);
      const fitsTheScreen = () => expectFitsWidth(page, width);

      beforeAll(async () => {
        owner = setup.server.t.newClient();
        ({ slug, id: accountId } = (await signUpUser(owner, { email, name: 'Flo Flows' })).account);
        await owner.call(addVaultEntry, {
          body: { type: 'ssh_key', label: 'laptop', value: PUBLIC_KEY },
        });
        ({ context, page, errors } = await setup.signedInPage(width, {
          email,
          password: PASSWORD,
        }));
      }, 60_000);
      afterAll(async () => {
        await context?.close();
      });

      it('creates a Plain VM with the only Vault key chosen and goes straight to its page', async () => {
        await account('plain-vms/new');
        const key = page.getByLabel(/laptop/);
        await expect.poll(() => key.isChecked()).toBe(true);
        await noViolations('the New Plain VM form');
        await page.getByLabel('Name', { exact: true }).fill('svc-api-box');
        await page.getByLabel(/one-time password/).check();
        await page.getByRole('button', { name: 'Create Plain VM' }).click();
        await page.waitForURL(/\/plain-vms\/[0-9a-f-]{36}$/);
        await page.getByRole('heading', { level: 1, name: 'svc-api-box' }).waitFor();
        // The one-time password shows on the VM's page; the key went with the request.
        const password = await page.getByTestId('initial-password').innerText();
        expect(password.length).toBeGreaterThanOrEqual(12);
        const vmId = new URL(page.url()).pathname.split('/').pop() as string;
        const vm = await owner.call(getPlainVm, { params: { id: vmId } });
        expect(vm.body.access.vaultEntryIds).toHaveLength(1);
        await status('running').waitFor({ timeout: 20_000 });
        await fitsTheScreen();
        await screenshot(page, `flows-${width}-plain-vm-created`);
        await noViolations('the new Plain VM');
        // Once: the page loaded again no longer has it.
        await page.reload();
        await status('running').waitFor();
        expect(await page.content()).not.toContain(password);

        // The user may still untick the only key: the choice is theirs.
        await account('plain-vms/new');
        await expect.poll(() => key.isChecked()).toBe(true);
        await key.uncheck();
        await expect.poll(() => key.isChecked()).toBe(false);
        expect(errors, errors.join('\n')).toEqual([]);
      }, 90_000);

      it('creates an Agent and goes straight to its page, whose address opens the Agent', async () => {
        await account('agents/new');
        await page.getByLabel('Name', { exact: true }).fill('notebook');
        await page.getByRole('button', { name: 'Create Agent' }).click();
        await page.waitForURL(/\/agents\/[0-9a-f-]{36}$/);
        await page.getByRole('heading', { level: 1, name: 'notebook' }).waitFor();
        await status('running').waitFor({ timeout: 20_000 });
        const agentId = new URL(page.url()).pathname.split('/').pop() as string;
        const { url } = (await owner.call(getAgent, { params: { id: agentId } })).body;
        const address = page.getByRole('link', { name: url });
        await expect.poll(() => address.getAttribute('href')).toBe(url);
        await expect.poll(() => address.getAttribute('target')).toBe('_blank');
        await fitsTheScreen();
        await screenshot(page, `flows-${width}-agent-created`);
        await noViolations('the new Agent');
        expect(errors, errors.join('\n')).toEqual([]);
      }, 60_000);

      it('disables a switch to subscription without a subscription, saying why, as the create form does', async () => {
        await account(`plain-vms/${await runningPlainVm(owner, 'billing-box')}`);
        await status('running').waitFor();
        const patches: string[] = [];
        page.on('request', (r) => {
          if (r.method() === 'PATCH') patches.push(r.url());
        });
        const toSubscription = page.getByRole('button', { name: 'Switch to subscription' });
        await expect.poll(() => toSubscription.isDisabled()).toBe(true);
        const reason = page.getByTestId('billing-reason');
        await expect
          .poll(() => reason.innerText())
          .toBe('Subscription billing needs an active subscription on this account (Billing).');
        // The reason is the button's description, for a screen reader too.
        const describedBy = await toSubscription.getAttribute('aria-describedby');
        expect(describedBy).toBe(await reason.getAttribute('id'));
        // A running VM: Start is the one lifecycle button it cannot take, and says so.
        await expect
          .poll(() => page.getByRole('button', { name: 'Start', exact: true }).isDisabled())
          .toBe(true);
        await expect
          .poll(() => page.getByTestId('lifecycle-reason').innerText())
          .toBe('Start needs a stopped Plain VM.');
        await toSubscription.click({ force: true });
        await page.waitForTimeout(300);
        expect(patches).toEqual([]);
        await fitsTheScreen();
        await screenshot(page, `flows-${width}-billing-reason`);
        await noViolations('the Plain VM without a subscription');

        // With a subscription the switch is open, and the reason is gone.
        await owner.call(activateSubscription, { params: { id: accountId } });
        await page.reload();
        await expect.poll(() => toSubscription.isDisabled()).toBe(false);
        await expect.poll(() => reason.count()).toBe(0);
        await owner.call(deactivateSubscription, { params: { id: accountId } });
        expect(errors, errors.join('\n')).toEqual([]);
      }, 60_000);

      it('disables what a provisioning Agent cannot do, each with the reason beside it', async () => {
        const org = await owner.call(createOrg, {
          body: { name: `Flows ${width}`, slug: `flows-${width}-${Date.now() % 100_000}` },
        });
        await owner.call(activateSubscription, { params: { id: org.body.id } });
        setup.server.t.compute.behave('createServer', { hang: true });
        try {
          const created = await owner.call(createAgent, {
            body: { name: 'slow-box', size: 'small', region: 'eu', billingType: 'metered' },
          });
          await account(`agents/${created.body.id}`);
          await status('provisioning').waitFor();
          for (const name of ['Open', 'Start', 'Stop', 'Restart', 'Switch to subscription'])
            await expect
              .poll(() => page.getByRole('button', { name, exact: true }).isDisabled(), {
                message: name,
              })
              .toBe(true);
          await expect
            .poll(() => page.getByTestId('lifecycle-reason').innerText())
            .toBe('Open, Stop and Restart need a running Agent. Start needs a stopped Agent.');
          await expect
            .poll(() => page.getByTestId('billing-reason').innerText())
            .toBe('Switch to subscription needs a running or stopped Agent.');
          await page
            .getByLabel('Transfer to')
            .selectOption({ label: `Flows ${width} (${org.body.slug})` });
          await expect
            .poll(() => page.getByRole('button', { name: 'Transfer' }).isDisabled())
            .toBe(true);
          await page.getByText('Transfer needs a running or stopped Agent.').waitFor();
          await fitsTheScreen();
          await screenshot(page, `flows-${width}-provisioning-reasons`);
          await noViolations('the provisioning Agent');
        } finally {
          setup.server.t.compute.behave('createServer', {});
          setup.server.t.compute.release();
        }
        // Running: Open, Stop, Restart and Transfer open up, and their reasons go.
        await status('running').waitFor({ timeout: 20_000 });
        await expect
          .poll(() => page.getByTestId('lifecycle-reason').innerText())
          .toBe('Start needs a stopped Agent.');
        await expect
          .poll(() => page.getByRole('button', { name: 'Transfer' }).isDisabled())
          .toBe(false);
        expect(errors, errors.join('\n')).toEqual([]);
      }, 60_000);
    });
  }

  describe('when the service requires a verified e-mail address', () => {
    let strict: DashboardServer;
    beforeAll(async () => {
      strict = await startDashboardServer(() => ({ EMAIL_VERIFICATION: 'required' }));
    }, 120_000);
    afterAll(async () => {
      await strict?.close();
    });

    for (const width of WIDTHS)
      it(`disables creating a machine until it is verified, saying why, at ${width} px`, async () => {
        const owner = strict.t.newClient();
        const email = `unverified-${width}-${Date.now()}@example.com`;
        const { slug } = (await signUpUser(owner, { email, name: 'Una Verified' })).account;
        const { context, page, errors } = await signedInPage(setup.browser, strict.baseUrl, width, {
          email,
          password: PASSWORD,
        });
        const posts: string[] = [];
        page.on('request', (r) => {
          if (r.method() === 'POST' && /\/api\/(agents|plain-vms)$/.test(r.url()))
            posts.push(r.url());
        });
        for (const [path, label] of [
          ['agents/new', 'Create Agent'],
          ['plain-vms/new', 'Create Plain VM'],
        ] as const) {
          await page.goto(`${strict.baseUrl}/dashboard/accounts/${slug}/${path}`);
          await page.getByLabel('Name', { exact: true }).fill('too-soon');
          const create = page.getByRole('button', { name: label });
          await expect.poll(() => create.isDisabled(), { message: label }).toBe(true);
          await expect
            .poll(() => page.getByTestId('submit-reason').innerText())
            .toBe(`Verify your e-mail address first: open the link sent to ${email}.`);
          await expectFitsWidth(page, width);
          await screenshot(page, `flows-${width}-unverified-${path.replace('/', '-')}`);
          await expectNoViolations(page, `${path} before verification`);
          await create.click({ force: true });
        }
        await page.waitForTimeout(300);
        expect(posts).toEqual([]);
        await context.close();
        expect(errors, errors.join('\n')).toEqual([]);
      }, 60_000);
  });
});
