import { access, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { openAgentGateway } from '@svc/contract';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { agentInChromium } from '../../test/agent-in-chromium.js';
import { violationLines } from '../../test/axe.js';
import { screenshot, watchErrors } from '../../test/browser.js';

/** How far the page scrolls sideways (0 when it fits its window). */
const sideways = (page: Page) =>
  page.evaluate<number>(
    'document.documentElement.scrollWidth - document.documentElement.clientWidth',
  );

const exists = (file: string) =>
  access(file).then(
    () => true,
    () => false,
  );

describe("an Agent's own pages in Chromium: the dashboard's look, a phone's width, the built-in editor's files", () => {
  const setup = agentInChromium('pages agent');

  /** A page of the given width with the Agent opened (its cookie set), on its home page. */
  async function openAgent(width: number) {
    const { url } = (
      await setup.server.t.client.call(openAgentGateway, { params: { id: setup.agent.id } })
    ).body;
    const page = await setup.browser.newPage({ viewport: { width, height: 800 } });
    const errors = watchErrors(page);
    await page.goto(url);
    await page.getByRole('heading', { name: 'pages agent' }).waitFor();
    return { page, errors };
  }

  for (const width of [1280, 390]) {
    it(`at ${width} px: home, terminal and editor in the dashboard's colours, none wider than the window, no axe violation`, async () => {
      const { page, errors } = await openAgent(width);
      // The dashboard's tokens: its background and its accent on the primary button.
      expect(
        await page.evaluate<string>('getComputedStyle(document.documentElement).backgroundColor'),
      ).toBe('rgb(244, 245, 247)');
      expect(await sideways(page)).toBe(0);
      expect(await violationLines(page)).toEqual([]);
      await screenshot(page, `gateway-home-${width}`);

      await page.getByRole('link', { name: 'Terminal', exact: true }).click();
      await page.locator('.xterm-rows').waitFor();
      expect(await sideways(page)).toBe(0);
      await screenshot(page, `gateway-terminal-${width}`);

      await page.getByRole('link', { name: 'Editor', exact: true }).click();
      await page.getByRole('button', { name: 'New file' }).waitFor();
      expect(
        await page.getByRole('link', { name: 'Editor', exact: true }).getAttribute('aria-current'),
      ).toBe('page');
      const save = page.getByRole('button', { name: 'Save' });
      expect(
        await save.evaluate(
          (button) =>
            (
              globalThis as unknown as { getComputedStyle(e: unknown): { backgroundColor: string } }
            ).getComputedStyle(button).backgroundColor,
        ),
      ).toBe('rgb(31, 79, 143)');
      expect(await sideways(page)).toBe(0);
      expect(await violationLines(page)).toEqual([]);
      await screenshot(page, `gateway-editor-${width}`);
      expect(errors, errors.join('\n')).toEqual([]);
    }, 60_000);
  }

  it('creates, edits, renames and deletes a file from the built-in editor, and refuses paths out of the home', async () => {
    const home = setup.server.t.driver.homeOf(setup.agent.id);
    await writeFile(path.join(home, 'keep.txt'), 'kept\n');
    const { page, errors } = await openAgent(390);
    await page.getByRole('link', { name: 'Editor', exact: true }).click();
    const status = page.getByRole('status');
    const name = page.getByLabel(/New file/);

    await page.getByRole('button', { name: 'New file' }).click();
    await name.fill('draft.md');
    await page.getByRole('button', { name: 'Create' }).click();
    await expect.poll(() => page.locator('#path').innerText()).toBe('draft.md');
    await page.getByRole('button', { name: 'draft.md' }).waitFor();
    expect(await readFile(path.join(home, 'draft.md'), 'utf8')).toBe('');
    await page.locator('.cm-content').click();
    await page.keyboard.type('# written on a phone');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => status.innerText()).toBe('Saved');
    expect(await readFile(path.join(home, 'draft.md'), 'utf8')).toBe('# written on a phone');

    await page.getByRole('button', { name: 'Rename' }).click();
    await page.getByLabel('Rename draft.md to').fill('final.md');
    await page.getByRole('button', { name: 'Rename', exact: true }).last().click();
    await expect.poll(() => status.innerText()).toBe('Renamed to final.md');
    await page.getByRole('button', { name: 'final.md' }).waitFor();
    await expect.poll(() => page.getByRole('button', { name: 'draft.md' }).count()).toBe(0);
    expect(await exists(path.join(home, 'draft.md'))).toBe(false);
    expect(await readFile(path.join(home, 'final.md'), 'utf8')).toBe('# written on a phone');
    await screenshot(page, 'gateway-editor-renamed-390');

    // A file is never made outside the home, whatever the name typed.
    await page.getByRole('button', { name: 'New file' }).click();
    await name.fill('../escaped.md');
    await page.getByRole('button', { name: 'Create' }).click();
    await expect.poll(() => status.innerText()).toBe('Create failed: outside the home directory');
    expect(await exists(path.join(home, '..', 'escaped.md'))).toBe(false);
    await page.getByRole('button', { name: 'Cancel' }).click();

    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByText('Delete final.md? This cannot be undone.').waitFor();
    expect(await sideways(page)).toBe(0);
    await screenshot(page, 'gateway-editor-delete-390');
    await page.locator('#ask-ok').click();
    await expect.poll(() => status.innerText()).toBe('Deleted final.md');
    expect(await exists(path.join(home, 'final.md'))).toBe(false);
    await expect.poll(() => page.getByRole('button', { name: 'final.md' }).count()).toBe(0);
    expect(await page.locator('#path').innerText()).toBe('No file open');
    expect(await readFile(path.join(home, 'keep.txt'), 'utf8')).toBe('kept\n');
    // The refused create is reported by the browser as a failed request: the only complaint.
    expect(
      errors.filter((e) => !/status of 403/.test(e)),
      errors.join('\n'),
    ).toEqual([]);
  }, 60_000);
});
