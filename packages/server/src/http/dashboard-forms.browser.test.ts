import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { screenshot, watchErrors } from '../../test/browser.js';
import {
  dashboardInChromium,
  expectFitsWidth,
  expectNoViolations,
  runningPlainVm,
} from '../../test/dashboard-page.js';
import { createPlainVm } from '../../test/plain-vm.js';
import type { TestClient } from '../../test/test-client.js';
import { signUpUser } from '../../test/test-context.js';

const PASSWORD = 'correct horse battery';
const WIDTHS = [1280, 390] as const;

/**
 * The forms of a Plain VM's page and of the account, at a desktop's and a phone's width: the
 * firewall's one header row (each control still named for a screen reader), its "saved" only
 * while nothing is edited, a destroy confirmation that names the kind, and one message per error
 * next to its field. axe-core finds no violation in these states.
 */
describe('the dashboard in Chromium: forms', () => {
  const setup = dashboardInChromium();

  for (const width of WIDTHS) {
    describe(`at ${width} px`, () => {
      let context: BrowserContext;
      let page: Page;
      let errors: string[];
      let owner: TestClient;
      let slug: string;
      let vmId: string;
      const email = `forms-${width}-${Date.now()}@example.com`;
      const account = (path: string) =>
        page.goto(`${setup.server.baseUrl}/dashboard/accounts/${slug}/${path}`);
      const noViolations = (what: string, at: Page = page) => expectNoViolations(at, what);
      const fitsTheScreen = () => expectFitsWidth(page, width);
      // The browser reports a refused request (400) itself; nothing else may fail.
      const otherErrors = () => errors.filter((e) => !e.includes('status of 400'));

      beforeAll(async () => {
        owner = setup.server.t.newClient();
        slug = (await signUpUser(owner, { email, name: 'Fay Forms' })).account.slug;
        vmId = await runningPlainVm(owner, 'svc-api-box');
        ({ context, page, errors } = await setup.signedInPage(width, {
          email,
          password: PASSWORD,
        }));
      }, 60_000);
      afterAll(async () => {
        await context?.close();
      });

      it('edits the firewall under one header row, each control named by its column and rule', async () => {
        await account(`plain-vms/${vmId}`);
        const table = page.getByRole('table');
        const heads = table.getByRole('columnheader');
        await expect
          .poll(() => heads.allInnerTexts())
          .toEqual(['Protocol', 'Port', 'Sources', 'Description', 'Remove']);
        // The rule numbers are in the accessible names only, never shown.
        await expect.poll(() => page.getByLabel('Port (rule 1)').inputValue()).toBe('22');
        expect(await page.locator('main').innerText()).not.toContain('(rule');
        // Every control of a rule on one line: none wraps under another.
        const tops = await page
          .getByRole('rowgroup', { name: 'Rule 1' })
          .locator('select, input, button')
          .evaluateAll((all) => all.map((e) => Math.round(e.getBoundingClientRect().top)));
        expect(new Set(tops).size, `tops ${tops}`).toBe(1);

        await page.getByRole('button', { name: 'Add rule' }).click();
        await page.getByLabel('Port (rule 2)').fill('70000');
        await page.getByLabel('Sources (rule 2)').fill('10.0.0.1');
        await page.getByRole('button', { name: 'Save firewall' }).click();
        const rule2 = page.getByRole('rowgroup', { name: 'Rule 2' });
        await rule2.getByText('Ports run from 1 to 65535, and a range from low to high').waitFor();
        // The message is said once, at its rule: no banner repeats it.
        await expect.poll(() => page.locator('.error[role="alert"]').count()).toBe(0);
        await expect
          .poll(
            async () =>
              (await page.getByLabel('Port (rule 2)').getAttribute('aria-describedby'))?.length,
          )
          .toBeGreaterThan(0);
        await fitsTheScreen();
        await screenshot(page, `forms-${width}-firewall-rejected`);
        await noViolations('the firewall with a rejected rule');

        await page.getByLabel('Port (rule 2)').fill('8000-8100');
        await page.getByRole('button', { name: 'Save firewall' }).click();
        const saved = page.getByText('Firewall saved.');
        await saved.waitFor();
        await expect.poll(() => page.getByText('Unsaved changes.').count()).toBe(0);
        // Edited again: no longer saved.
        await page.getByLabel('Description (rule 2)').fill('builds');
        await expect.poll(() => saved.count()).toBe(0);
        await page.getByText('Unsaved changes.').waitFor();
        await screenshot(page, `forms-${width}-firewall-unsaved`);
        await noViolations('the firewall with unsaved changes');
        await page.getByRole('button', { name: 'Save firewall' }).click();
        await saved.waitFor();
        expect(
          setup.server.t.compute.servers.get(vmId)?.firewall?.map((r) => r.description),
        ).toEqual([expect.any(String), 'builds']);
        expect(otherErrors(), errors.join('\n')).toEqual([]);
      }, 60_000);

      it('disables saving the firewall of a VM without a server yet, saying why', async () => {
        setup.server.t.compute.behave('createServer', { hang: true });
        try {
          await account(`plain-vms/${await createPlainVm(owner, 'not-yet')}`);
          await page.locator('.page-head [data-status="provisioning"]').waitFor();
          const save = page.getByRole('button', { name: 'Save firewall' });
          await expect.poll(() => save.isDisabled()).toBe(true);
          await expect
            .poll(() => page.getByTestId('firewall-reason').innerText())
            .toBe('The firewall can be saved while the Plain VM has a server; it is provisioning.');
          await fitsTheScreen();
          await noViolations('the firewall of a provisioning VM');
        } finally {
          setup.server.t.compute.behave('createServer', {});
          setup.server.t.compute.release();
        }
        await page.locator('.page-head [data-status="running"]').waitFor({ timeout: 20_000 });
        await expect.poll(() => page.getByTestId('firewall-reason').count()).toBe(0);
        expect(otherErrors(), errors.join('\n')).toEqual([]);
      }, 60_000);

      it('asks for the name to destroy "this Plain VM"', async () => {
        await account(`plain-vms/${vmId}`);
        const label = page.locator('.typed-confirm label');
        await expect
          .poll(() => label.innerText())
          .toBe('Type svc-api-box to destroy this Plain VM');
        await page.getByLabel('to destroy this Plain VM').fill('svc-api-box');
        await fitsTheScreen();
        await noViolations('the destroy confirmation');
        await page.getByRole('button', { name: 'Destroy Plain VM' }).click();
        await page.getByRole('heading', { level: 1, name: 'Plain VMs' }).waitFor();
        expect(otherErrors(), errors.join('\n')).toEqual([]);
      }, 60_000);

      it('says a short password once, next to its field', async () => {
        const stranger = await setup.browser.newPage({ viewport: { width, height: 900 } });
        const strangerErrors = watchErrors(stranger);
        await stranger.goto(`${setup.server.baseUrl}/dashboard/sign-up`);
        await stranger.getByLabel('Name', { exact: true }).fill('Short Password');
        await stranger.getByLabel('E-mail').fill(`short-${width}@example.com`);
        await stranger.getByLabel('Password').fill('short');
        await stranger.getByRole('button', { name: 'Sign up' }).click();
        const field = stranger.locator('.field', { has: stranger.getByLabel('Password') });
        await expect
          .poll(() => field.locator('.field-errors li').allInnerTexts())
          .toEqual(['Use at least 8 characters']);
        // Not as a hint beside it, nor in a banner under the form.
        await expect
          .poll(() => stranger.locator('main').innerText())
          .not.toMatch(/At least 8 characters|Some fields need attention/);
        await expect.poll(() => stranger.getByRole('alert').count()).toBe(0);
        await screenshot(stranger, `forms-${width}-short-password`);
        await noViolations('the sign-up form with a short password', stranger);
        await stranger.close();
        expect(strangerErrors, strangerErrors.join('\n')).toEqual([]);
      }, 60_000);

      it('says each error of a create form once, at its field', async () => {
        await account('plain-vms/new');
        await page.getByLabel('Name', { exact: true }).fill('no-way-in');
        // Neither a Vault key (there is none) nor a password: the service refuses the access.
        await page.getByRole('button', { name: 'Create Plain VM' }).click();
        const access = page.getByRole('group', { name: 'SSH keys from the Vault' });
        await access.locator('.field-errors li').waitFor();
        const message = await access.locator('.field-errors li').innerText();
        await expect.poll(() => page.getByText(message).count()).toBe(1);
        await expect.poll(() => page.locator('.error[role="alert"]').count()).toBe(0);
        await fitsTheScreen();
        await screenshot(page, `forms-${width}-create-refused`);
        await noViolations('the New Plain VM form refused');
        expect(otherErrors(), errors.join('\n')).toEqual([]);
      }, 60_000);
    });
  }
});
