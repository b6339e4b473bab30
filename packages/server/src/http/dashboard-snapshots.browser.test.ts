import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { agentSnapshots, getAgent, getPlainVm, plainVmSnapshots } from '@svc/contract';
import { describe, expect, it } from 'vitest';
import { agentInChromium } from '../../test/agent-in-chromium.js';
import { screenshot, signInInBrowser, watchErrors } from '../../test/browser.js';
import { expectFitsWidth, expectNoViolations, runningPlainVm } from '../../test/dashboard-page.js';

/**
 * Snapshots through the dashboard, in Chromium on a phone's width, on the local driver (an
 * Agent's home is a folder on this host): a file written, a snapshot taken from the Agent page,
 * the file changed, the Agent stopped and the snapshot restored after the confirmation that says
 * what is lost; the file is back as it was.
 */
describe('snapshots in Chromium: take one on the Agent page, stop, restore', () => {
  const setup = agentInChromium('snapshot-browser');

  it('takes a snapshot, and after a stop restores it through the confirmation: the file is back', async () => {
    const home = setup.server.t.driver.homeOf(setup.agent.id);
    const file = path.join(home, 'notes.txt');
    await writeFile(file, 'as it was at the snapshot\n');
    const page = await setup.browser.newPage({ viewport: { width: 390, height: 900 } });
    const errors = watchErrors(page);
    await signInInBrowser(page, setup.server.baseUrl, {
      email: setup.email,
      password: 'correct horse battery',
    });
    await page.goto(`${setup.server.baseUrl}/dashboard/agents/${setup.agent.id}`);
    await page.getByRole('heading', { name: 'Snapshots', exact: true }).waitFor();
    await page.getByText('No snapshots yet.').waitFor();
    await expectFitsWidth(page, 390);

    // Taken while the Agent runs, under the name typed.
    await page.getByLabel('Snapshot name (optional)').fill('before-change');
    await page.getByRole('button', { name: 'Take snapshot' }).click();
    const list = page.getByRole('list', { name: 'Snapshots' });
    const row = list.getByTestId('snapshot').filter({ hasText: 'before-change' });
    await row.waitFor();
    await expect
      .poll(() => row.getByTestId('snapshot-state').getAttribute('data-status'), {
        timeout: 30_000,
      })
      .toBe('ready');
    await expect.poll(() => row.innerText()).toMatch(/Manual · taken .+ · [\d.,]+ (B|KiB|MiB|GiB)/);
    await expect.poll(() => page.getByLabel('Snapshot name (optional)').inputValue()).toBe('');
    await screenshot(page, 'snapshots-taken-390');
    await expectFitsWidth(page, 390);
    await expectNoViolations(page, 'the Agent page with a ready snapshot');

    // Restore waits for a stopped Agent, and says so.
    const restore = page.getByRole('button', { name: 'Restore before-change' });
    await expect.poll(() => restore.isDisabled()).toBe(true);
    await expect
      .poll(() => page.getByTestId('restore-reason').innerText())
      .toBe('Restore needs a stopped Agent.');

    await writeFile(file, 'changed after the snapshot\n');
    await page.getByRole('button', { name: 'Stop', exact: true }).click();
    await expect
      .poll(() => page.locator('.page-head .badge').getAttribute('data-status'), {
        timeout: 30_000,
      })
      .toBe('stopped');

    await expect.poll(() => restore.isEnabled()).toBe(true);
    await restore.click();
    const question = page.getByText(/^Restore before-change\?/);
    await question.waitFor();
    // The moment named is the snapshot's, as the page formats times (in the browser's locale).
    const [snapshot] = (
      await setup.server.t.client.call(agentSnapshots.list, { params: { id: setup.agent.id } })
    ).body.snapshots;
    const taken = await page.evaluate(
      (iso) =>
        new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' }).format(
          new Date(iso),
        ),
      snapshot?.createdAt ?? '',
    );
    await expect
      .poll(() => question.innerText())
      .toBe(
        `Restore before-change? Everything written to snapshot-browser's disk since ${taken} is lost; the Agent stays stopped.`,
      );
    await screenshot(page, 'snapshots-restore-confirm-390');
    await expectFitsWidth(page, 390);
    await page.getByRole('button', { name: 'Restore', exact: true }).click();

    const progress = page.getByTestId('disk-progress');
    await expect
      .poll(() => progress.innerText(), { timeout: 30_000 })
      .toBe(
        `Restored: snapshot-browser's disk is as it was at ${taken}. Start the Agent to use it.`,
      );
    expect(await readFile(file, 'utf8')).toBe('as it was at the snapshot\n');
    const agent = (await setup.server.t.client.call(getAgent, { params: { id: setup.agent.id } }))
      .body;
    expect(agent.status).toBe('stopped');
    // Nothing under way any more: Start is back.
    await expect
      .poll(() => page.getByRole('button', { name: 'Start', exact: true }).isEnabled())
      .toBe(true);
    await screenshot(page, 'snapshots-restored-390');
    await expectFitsWidth(page, 390);
    await expectNoViolations(page, 'the Agent page after a restore');
    expect(errors, errors.join('\n')).toEqual([]);
    await page.close();
  }, 120_000);

  it("takes a snapshot of a Plain VM under the service's name for it, deletes it after asking, and turns daily backups on", async () => {
    const { client } = setup.server.t;
    const vmId = await runningPlainVm(client, 'snapshot-vm');
    const page = await setup.browser.newPage({ viewport: { width: 390, height: 900 } });
    const errors = watchErrors(page);
    await signInInBrowser(page, setup.server.baseUrl, {
      email: setup.email,
      password: 'correct horse battery',
    });
    // Signed in, the browser is on the account's Agents page: its Plain VMs are beside it.
    await page.goto(page.url().replace(/\/agents\/?$/, `/plain-vms/${vmId}`));
    await page.getByRole('heading', { name: 'Snapshots', exact: true }).waitFor();
    await page.getByText('No snapshots yet.').waitFor();
    // No name typed: the service chooses one.
    await page.getByRole('button', { name: 'Take snapshot' }).click();
    const row = page.getByRole('list', { name: 'Snapshots' }).getByTestId('snapshot');
    await expect
      .poll(() => row.getByTestId('snapshot-state').getAttribute('data-status'), {
        timeout: 30_000,
      })
      .toBe('ready');
    const [snapshot] = (await client.call(plainVmSnapshots.list, { params: { id: vmId } })).body
      .snapshots;
    expect(snapshot?.name).toBeTruthy();
    await expect.poll(() => row.locator('strong').innerText()).toBe(snapshot?.name);

    await page.getByRole('button', { name: `Delete ${snapshot?.name}` }).click();
    await expect
      .poll(() => page.getByText(`Delete ${snapshot?.name}?`).innerText())
      .toBe(`Delete ${snapshot?.name}? Its copy of the disk is gone for good.`);
    await expectFitsWidth(page, 390);
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByText('No snapshots yet.').waitFor();
    expect((await client.call(plainVmSnapshots.list, { params: { id: vmId } })).body).toEqual({
      snapshots: [],
    });
    await screenshot(page, 'snapshots-plain-vm-deleted-390');

    // Daily backups: on, the newest three kept, saved through the VM's settings.
    await page.getByLabel('Take a daily backup').check();
    await page.getByLabel('Backups kept').fill('3');
    await page.getByRole('button', { name: 'Save backups', exact: true }).click();
    await page.getByText('Saved.').waitFor();
    const { backups } = (await client.call(getPlainVm, { params: { id: vmId } })).body;
    expect(backups).toMatchObject({ enabled: true, keep: 3 });
    await expect
      .poll(() => page.getByTestId('backups-now').innerText())
      .toBe(
        `A backup of the Plain VM is taken daily at about ${String(backups.hourUtc).padStart(2, '0')}:00 UTC, named backup-YYYY-MM-DD; the newest 3 are kept.`,
      );
    await expectFitsWidth(page, 390);
    await expectNoViolations(page, 'the Plain VM page with daily backups on');
    expect(errors, errors.join('\n')).toEqual([]);
    await page.close();
  }, 120_000);
});
