import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Agent } from '@svc/contract';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, screenshot, watchErrors } from '../../test/browser.js';
import { createLocalTestContext, signUpUser } from '../../test/test-context.js';
import { waitFor } from '../../test/wait.js';
import type { LocalComputeDriver } from '../adapters/compute/local-compute-driver.js';

describe('opening a local Agent in Chromium: terminal and editor through its gateway', () => {
  let t: Awaited<ReturnType<typeof createLocalTestContext>>;
  let driver: LocalComputeDriver;
  let browser: Browser;
  let agent: Agent;

  beforeAll(async () => {
    t = await createLocalTestContext();
    driver = t.driver;
    await signUpUser(t.client);
    const created = await t.client.post('/api/agents', {
      name: 'browser agent',
      size: 'small',
      region: 'eu',
      billingType: 'metered',
    });
    await waitFor(
      async () => (await t.client.get(`/api/agents/${created.body.id}`)).body.status === 'running',
      30_000,
    );
    agent = (await t.client.get(`/api/agents/${created.body.id}`)).body;
    await writeFile(path.join(driver.homeOf(agent.id), 'hello.txt'), 'hello from the agent\n');
    browser = await launchChromium();
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('types echo $HOME in the terminal, keeps the shell across a reload, and saves a file from the editor', async () => {
    const home = driver.homeOf(agent.id);
    const { url } = (await t.client.post(`/api/agents/${agent.id}/gateway-ticket`)).body;
    const page = await browser.newPage();
    const errors = watchErrors(page);

    await page.goto(url);
    expect(new URL(page.url()).pathname).toBe('/_svc/');
    await page.getByRole('link', { name: 'Terminal' }).click();
    const screen = page.locator('.xterm-rows');
    await screen.waitFor();
    await page.locator('.xterm').click();
    await page.keyboard.type('echo "at:$HOME"');
    await page.keyboard.press('Enter');
    await expect.poll(() => screen.innerText(), { timeout: 10_000 }).toContain(`at:${home}`);
    await screenshot(page, 'gateway-terminal');

    // The same shell after a reload: its earlier output is replayed, and it keeps its state.
    await page.keyboard.type('export MARK=kept');
    await page.keyboard.press('Enter');
    await page.reload();
    await screen.waitFor();
    await expect.poll(() => screen.innerText(), { timeout: 10_000 }).toContain(`at:${home}`);
    await page.locator('.xterm').click();
    await page.keyboard.type('echo "mark:$MARK"');
    await page.keyboard.press('Enter');
    await expect.poll(() => screen.innerText(), { timeout: 10_000 }).toContain('mark:kept');

    await page.getByRole('link', { name: 'Editor' }).click();
    await page.getByRole('button', { name: 'hello.txt' }).click();
    const content = page.locator('.cm-content');
    await expect.poll(() => content.innerText()).toContain('hello from the agent');
    await content.click();
    await page.keyboard.press('Control+End');
    await page.keyboard.type('edited in the browser');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.getByRole('status').innerText()).toBe('Saved');
    await screenshot(page, 'gateway-editor');
    expect(await readFile(path.join(home, 'hello.txt'), 'utf8')).toBe(
      'hello from the agent\nedited in the browser',
    );
    expect(errors, errors.join('\n')).toEqual([]);
  }, 60_000);
});
