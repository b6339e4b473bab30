import { createHash, generateKeyPairSync } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openPage, screenshot } from '../../test/browser.js';
import { type DashboardServer, startDashboardServer } from '../../test/dashboard-server.js';
import { TRANSFER_NOTE } from '../plain-vms/plain-vm-view.js';

/** A fresh ed25519 public key line and the fingerprint `ssh-keygen -lf` would print for it. */
function ed25519KeyLine(comment: string) {
  const jwk = generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' });
  const raw = Buffer.from(jwk.x as string, 'base64url');
  const field = (bytes: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(bytes.length);
    return Buffer.concat([length, bytes]);
  };
  const blob = Buffer.concat([field(Buffer.from('ssh-ed25519')), field(raw)]);
  const fingerprint = `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
  return { line: `ssh-ed25519 ${blob.toString('base64')} ${comment}`, fingerprint };
}

/**
 * One person's first session, in order: each step starts where the previous one left the page.
 * Every step saves a screenshot of what it checks, and no step may log a console error.
 */
describe('the dashboard in Chromium', () => {
  let server: DashboardServer;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let personalSlug: string;
  const email = `ada-${Date.now()}@example.com`;

  const status = (value: string) => page.locator(`.page-head .badge[data-status="${value}"]`);
  const go = (path: string) => page.goto(`${server.baseUrl}${path}`);

  beforeAll(async () => {
    server = await startDashboardServer();
    ({ browser, page, errors } = await openPage());
  }, 90_000);
  // Each step answers for its own console errors (a failed step's stay with it).
  beforeEach(() => {
    errors?.splice(0);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('signs up and lands on the personal account', async () => {
    await go('/dashboard/sign-up');
    await page.getByLabel('Name', { exact: true }).fill('Ada Lovelace');
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill('short');
    await page.getByRole('button', { name: 'Sign up' }).click();
    // The contract's rule, shown next to the field before anything is sent.
    await expect.poll(() => page.getByText('Use at least 8 characters').count()).toBe(1);
    await page.getByLabel('Password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Sign up' }).click();
    await page.getByRole('heading', { name: 'Agents' }).waitFor();
    personalSlug = new URL(page.url()).pathname.split('/')[3] as string;
    expect(page.url()).toBe(`${server.baseUrl}/dashboard/accounts/${personalSlug}/agents`);
    await expect.poll(() => page.getByText('No Agents in this account yet.').count()).toBe(1);
    // `/` is the dashboard too.
    await go('/');
    await page.getByRole('heading', { name: 'Agents' }).waitFor();
    await screenshot(page, 'dashboard-sign-up');
    expect(errors, errors.join('\n')).toEqual([]);
  }, 60_000);

  it('creates an organization and activates its subscription', async () => {
    await page.getByRole('link', { name: 'New organization' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Acme Labs');
    await expect.poll(() => page.getByLabel('Slug').inputValue()).toBe('acme-labs');
    await page.getByRole('button', { name: 'Create organization' }).click();
    await page.getByRole('heading', { name: 'Billing' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/dashboard/accounts/acme-labs/billing');
    await expect
      .poll(() => page.getByTestId('subscription-state').innerText())
      .toContain('inactive');
    await page.getByRole('button', { name: 'Activate subscription' }).click();
    // The slot prices first, then the confirmation (dashboard-billing.browser.test.ts).
    await page.getByRole('button', { name: 'Confirm activation' }).click();
    await expect
      .poll(() => page.getByTestId('subscription-state').innerText())
      .toContain('is active');
    await expect.poll(() => page.getByLabel('Account').inputValue()).toBe('acme-labs');
    await screenshot(page, 'dashboard-organization-billing');
    expect(errors, errors.join('\n')).toEqual([]);
  }, 60_000);

  it('adds a Vault key by pasting it, and shows its fingerprint', async () => {
    await page.getByLabel('Account').selectOption(personalSlug);
    await page.getByRole('link', { name: 'Vault' }).click();
    await page.getByRole('heading', { name: 'Vault' }).waitFor();
    await expect.poll(() => page.getByText('No keys yet.').count()).toBe(1);
    const key = ed25519KeyLine('ada@laptop');
    await page.getByLabel('Public key').fill(key.line);
    await page.getByRole('button', { name: 'Add key' }).click();
    await page.locator('.cards .fingerprint', { hasText: key.fingerprint }).waitFor();
    await expect.poll(() => page.locator('.cards').innerText()).toContain('ada@laptop');
    await screenshot(page, 'dashboard-vault');
    expect(errors, errors.join('\n')).toEqual([]);
  }, 60_000);

  it('creates a Plain VM with the key and a one-time password, and sees it running', async () => {
    await page.getByRole('link', { name: 'Plain VMs' }).click();
    await page.getByRole('link', { name: 'New Plain VM' }).click();
    await page.getByLabel('Name', { exact: true }).fill('web-1');
    await page.getByLabel('OS image').selectOption('debian-13');
    await expect.poll(() => page.getByText('You log in as debian.').count()).toBe(1);
    // The only Vault key comes chosen.
    await expect.poll(() => page.getByLabel(/ada@laptop/).isChecked()).toBe(true);
    await page.getByLabel(/one-time password/).check();
    await page.getByRole('button', { name: 'Create Plain VM' }).click();
    // Straight to the new VM's page, which shows the one-time password.
    await page.getByRole('heading', { name: 'web-1' }).waitFor();
    const password = await page.getByTestId('initial-password').innerText();
    expect(password.length).toBeGreaterThanOrEqual(12);
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], {
      origin: server.baseUrl,
    });
    await page.getByRole('button', { name: 'Copy password' }).click();
    await page.getByText('Copied').waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(password);
    await screenshot(page, 'dashboard-plain-vm-password');
    await status('running').waitFor({ timeout: 20_000 });
    await expect
      .poll(() => page.getByTestId('ssh-command').innerText())
      .toBe('ssh debian@192.0.2.10');
    // The password was shown once: the page loaded again no longer has it.
    await page.reload();
    await page.getByTestId('ssh-command').waitFor();
    expect(await page.content()).not.toContain(password);
    await screenshot(page, 'dashboard-plain-vm-running');
    expect(errors, errors.join('\n')).toEqual([]);
  }, 60_000);

  it('changes the firewall: a rejected rule shows its message next to it, then it saves', async () => {
    const vmId = new URL(page.url()).pathname.split('/').pop() as string;
    await page.getByRole('button', { name: 'Add rule' }).click();
    await page.getByLabel('Port (rule 2)').fill('443');
    await page.getByLabel('Sources (rule 2)').fill('203.0.113.9/24, 2001:db8::1');
    await page.getByLabel('Description (rule 2)').fill('HTTPS');
    await page.getByRole('button', { name: 'Add rule' }).click();
    await page.getByLabel('Port (rule 3)').fill('70000');
    await page.getByLabel('Sources (rule 3)').fill('10.0.0.1');
    await page.getByRole('button', { name: 'Save firewall' }).click();
    const rule3 = page.getByRole('rowgroup', { name: 'Rule 3' });
    await rule3.getByText('Ports run from 1 to 65535, and a range from low to high').waitFor();
    expect(
      await page.getByRole('rowgroup', { name: 'Rule 2' }).locator('.field-errors').count(),
    ).toBe(0);
    await screenshot(page, 'dashboard-firewall-rejected');

    await page.getByLabel('Port (rule 3)').fill('8000-8100');
    await page.getByRole('button', { name: 'Save firewall' }).click();
    await page.getByText('Firewall saved.').waitFor();
    // The answer is the provider's canonical form, shown in the editor.
    await expect
      .poll(() => page.getByLabel('Sources (rule 2)').inputValue())
      .toBe('203.0.113.0/24, 2001:db8::1/128');
    await expect.poll(() => page.getByLabel('Sources (rule 3)').inputValue()).toBe('10.0.0.1/32');
    // What the infrastructure provider (the test driver) now enforces.
    const rules = server.t.compute.servers.get(vmId)?.firewall;
    expect(rules?.map((r) => r.port)).toEqual(['22', '443', '8000-8100']);
    await screenshot(page, 'dashboard-firewall-saved');
    expect(errors, errors.join('\n')).toEqual([]);
  }, 60_000);

  it('restarts, stops and starts the Plain VM', async () => {
    const vmId = new URL(page.url()).pathname.split('/').pop() as string;
    const rebooted = () => server.t.compute.calls.some((c) => c.call === 'reboot' && c.id === vmId);
    await page.getByRole('button', { name: 'Restart', exact: true }).click();
    await expect.poll(rebooted, { timeout: 20_000 }).toBe(true);
    await status('running').waitFor({ timeout: 20_000 });
    await page.getByRole('button', { name: 'Stop', exact: true }).click();
    await status('stopped').waitFor({ timeout: 20_000 });
    // The SSH command stays; the lifecycle buttons follow the state.
    await expect
      .poll(() => page.getByRole('button', { name: 'Stop', exact: true }).isDisabled())
      .toBe(true);
    await screenshot(page, 'dashboard-plain-vm-stopped');
    await page.getByRole('button', { name: 'Start', exact: true }).click();
    await status('running').waitFor({ timeout: 20_000 });
    expect(errors, errors.join('\n')).toEqual([]);
  }, 60_000);

  it("shows the service's reason when it refuses an action (409)", async () => {
    const vmId = new URL(page.url()).pathname.split('/').pop() as string;
    await status('running').waitFor();
    server.t.compute.behave('powerOff', { latencyMs: 5_000 });
    try {
      // Stopped elsewhere (another tab, a script) while this page still shows it running.
      const stop = await page.evaluate(
        async (id) => (await fetch(`/api/plain-vms/${id}/stop`, { method: 'POST' })).status,
        vmId,
      );
      expect(stop).toBe(200);
      await page.getByRole('button', { name: 'Restart', exact: true }).click();
      await page
        .getByRole('alert')
        .filter({
          hasText:
            'This is not possible in its current state. Cannot restart the Plain VM while it is stopping.',
        })
        .waitFor();
      // The refusal also refreshes the page's picture of the VM.
      await status('stopping').waitFor();
      await screenshot(page, 'dashboard-refused-with-reason');
    } finally {
      server.t.compute.behave('powerOff', {});
    }
    await status('stopped').waitFor({ timeout: 20_000 });
    await page.getByRole('button', { name: 'Start', exact: true }).click();
    await status('running').waitFor({ timeout: 20_000 });
    // The browser reports the refused request itself; nothing else may fail.
    expect(
      errors.filter((e) => !e.includes('status of 409')),
      errors.join('\n'),
    ).toEqual([]);
    expect(errors.filter((e) => e.includes('status of 409'))).toHaveLength(1);
  }, 60_000);

  it('creates an Agent, stops, starts and clones it', async () => {
    await page.getByRole('link', { name: 'Agents' }).click();
    await page.getByRole('link', { name: 'New Agent' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Research Bot!');
    await page.getByText('research-bot-xxxxxx').waitFor();
    await page.getByLabel('Region').selectOption('us');
    await expect
      .poll(() => page.getByLabel('Size').locator('option').first().innerText())
      .toBe('small — 3 vCPU, 4 GB RAM, 80 GB disk');
    await page.getByRole('button', { name: 'Create Agent' }).click();
    await page.getByRole('heading', { name: 'Research Bot!' }).waitFor();
    await status('running').waitFor({ timeout: 20_000 });

    // "Open": a one-time gateway link for the Agent, opened in a new tab.
    const [popup, ticket] = await Promise.all([
      page.waitForEvent('popup'),
      page.waitForResponse((r) => r.url().endsWith('/gateway-ticket')),
      page.getByRole('button', { name: 'Open' }).click(),
    ]);
    expect(ticket.status()).toBe(201);
    const { url } = (await ticket.json()) as { url: string };
    await expect.poll(() => popup.url()).not.toBe('about:blank');
    expect(new URL(popup.url()).host).toBe(new URL(url).host);
    await popup.close();

    await page.getByRole('button', { name: 'Stop', exact: true }).click();
    await status('stopped').waitFor({ timeout: 20_000 });
    await page.getByRole('button', { name: 'Start', exact: true }).click();
    await status('running').waitFor({ timeout: 20_000 });

    const sourcePath = new URL(page.url()).pathname;
    // A clone is never smaller than its source: every size is offered from small up.
    await page.getByLabel('Clone size').selectOption('medium');
    await page.getByRole('button', { name: 'Clone', exact: true }).click();
    await page.getByRole('heading', { name: 'Research Bot! copy' }).waitFor();
    expect(new URL(page.url()).pathname).not.toBe(sourcePath);
    await status('running').waitFor({ timeout: 20_000 });
    await screenshot(page, 'dashboard-agent-clone');
    expect(errors, errors.join('\n')).toEqual([]);
  }, 90_000);

  it('transfers an Agent to the organization', async () => {
    await page.getByRole('link', { name: 'Agents' }).click();
    await page.getByRole('link', { name: 'Research Bot!', exact: true }).click();
    await status('running').waitFor();
    await page.getByLabel('Transfer to').selectOption({ label: 'Acme Labs (acme-labs)' });
    await page.getByRole('button', { name: 'Transfer' }).click();
    await page.waitForURL(/\/dashboard\/accounts\/acme-labs\/agents\//);
    await expect.poll(() => page.getByLabel('Account').inputValue()).toBe('acme-labs');
    await page.getByText('Billed as metered').waitFor();
    await page.getByRole('link', { name: 'Agents' }).click();
    await page.getByRole('link', { name: 'Research Bot!', exact: true }).waitFor();
    await screenshot(page, 'dashboard-agent-transferred');
    expect(errors, errors.join('\n')).toEqual([]);
  }, 60_000);

  it('switches the Agent to subscription billing, frees its slot and removes it', async () => {
    await page.getByRole('link', { name: 'Research Bot!', exact: true }).click();
    await page.getByRole('button', { name: 'Switch to subscription' }).click();
    await page.getByText('A new slot was added to the subscription.').waitFor();
    await page.getByText('Billed as subscription').waitFor();
    await page.getByRole('link', { name: 'Billing' }).click();
    const slot = page.getByRole('table', { name: 'Slots' }).getByRole('row', { name: /Agent/ });
    await expect.poll(() => slot.innerText()).toMatch(/small\s+us\s+in use/);

    await page.getByRole('link', { name: 'Agents' }).click();
    await page.getByRole('link', { name: 'Research Bot!', exact: true }).click();
    await page.getByRole('button', { name: 'Switch to metered' }).click();
    await page.getByText('Billed as metered').waitFor();
    await page.getByRole('link', { name: 'Billing' }).click();
    await slot.getByText('free').waitFor();
    await screenshot(page, 'dashboard-billing-slots');
    await slot.getByRole('button', { name: 'Remove slot' }).click();
    await slot.getByRole('button', { name: 'Remove', exact: true }).click();
    await page.getByText('No slots.', { exact: false }).waitFor();
    expect(errors, errors.join('\n')).toEqual([]);
  }, 60_000);

  it('transfers the Plain VM to the organization and shows the transfer note', async () => {
    await page.getByLabel('Account').selectOption(personalSlug);
    await page.getByRole('link', { name: 'Plain VMs' }).click();
    await page.getByRole('link', { name: 'web-1' }).click();
    await status('running').waitFor();
    await page.getByLabel('Transfer to').selectOption({ label: 'Acme Labs (acme-labs)' });
    await page.getByRole('button', { name: 'Transfer' }).click();
    await page.waitForURL(/\/dashboard\/accounts\/acme-labs\/plain-vms\//);
    await page.getByText(TRANSFER_NOTE).waitFor();
    await screenshot(page, 'dashboard-plain-vm-transferred');
    expect(errors, errors.join('\n')).toEqual([]);
  }, 60_000);

  it('destroys an Agent only once its name is typed', async () => {
    await page.getByLabel('Account').selectOption(personalSlug);
    await page.getByRole('link', { name: 'Agents' }).click();
    await page.getByRole('link', { name: 'Research Bot! copy' }).click();
    await status('running').waitFor();
    const destroy = page.getByRole('button', { name: 'Destroy Agent' });
    await page.getByLabel('to destroy this Agent').fill('Research Bot!');
    await expect.poll(() => destroy.isDisabled()).toBe(true);
    await page.getByLabel('to destroy this Agent').fill('Research Bot! copy');
    await destroy.click();
    await page.getByRole('heading', { name: 'Agents' }).waitFor();
    await page.getByText('No Agents in this account yet.').waitFor({ timeout: 20_000 });
    await screenshot(page, 'dashboard-agent-destroyed');
    expect(errors, errors.join('\n')).toEqual([]);
  }, 60_000);

  it('deletes the Vault key, and fits a phone-sized screen', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('link', { name: 'Vault' }).click();
    await page.getByRole('button', { name: 'Delete ada@laptop' }).click();
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByText('No keys yet.').waitFor();
    await go(`/dashboard/accounts/acme-labs/plain-vms`);
    await page.getByRole('link', { name: 'web-1' }).waitFor();
    const overflow = await page.evaluate(
      'document.documentElement.scrollWidth - document.documentElement.clientWidth',
    );
    expect(overflow).toBe(0);
    await screenshot(page, 'dashboard-phone');
    expect(errors, errors.join('\n')).toEqual([]);
  }, 60_000);
});
