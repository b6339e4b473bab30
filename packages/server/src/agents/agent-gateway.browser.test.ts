import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { getAgent, openAgentGateway, stopAgent } from '@svc/contract';
import { beforeAll, describe, expect, it } from 'vitest';
import { agentInChromium } from '../../test/agent-in-chromium.js';
import { screenshot, watchErrors } from '../../test/browser.js';
import { waitFor } from '../../test/wait.js';

describe("opening a local Agent in Chromium: terminal and editor through the service's edge", () => {
  const setup = agentInChromium('browser agent');
  beforeAll(async () => {
    await writeFile(
      path.join(setup.server.t.driver.homeOf(setup.agent.id), 'hello.txt'),
      'hello from the agent\n',
    );
  });

  it('types echo $HOME in the terminal, keeps the shell across a reload, and saves a file from the editor', async () => {
    const home = setup.server.t.driver.homeOf(setup.agent.id);
    const { url } = (
      await setup.server.t.client.call(openAgentGateway, { params: { id: setup.agent.id } })
    ).body;
    const page = await setup.browser.newPage();
    const errors = watchErrors(page);

    // The Agent's URL is on the service's own port: the edge carries the page and its sockets.
    expect(new URL(url).host).toBe(
      `${setup.agent.subdomain}.${new URL(setup.server.baseUrl).host}`,
    );
    await page.goto(url);
    expect(new URL(page.url()).pathname).toBe('/_svc/');
    await page.getByRole('link', { name: 'Terminal', exact: true }).click();
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

    await page.getByRole('link', { name: 'Editor', exact: true }).click();
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

  it("sends a browser without the Agent's cookie to the dashboard, which opens the Agent", async () => {
    const page = await setup.browser.newPage();
    const errors = watchErrors(page);
    const visited: string[] = [];
    page.on('framenavigated', (frame) => {
      if (frame === page.mainFrame()) visited.push(frame.url());
    });

    // Signed out: the dashboard asks for a sign-in first, naming the page to come back to.
    const link = `/dashboard/agents/${setup.agent.id}?open=1`;
    await page.goto(setup.agent.url);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(page.url()).toBe(
      `${setup.server.baseUrl}/dashboard/sign-in?next=${encodeURIComponent(link)}`,
    );
    expect(visited).toContain(`${setup.server.baseUrl}${link}`);
    // The dashboard's own 401 on /api/me is the only complaint.
    expect(errors.filter((e) => !/status of 401/.test(e))).toEqual([]);
    errors.splice(0);

    // Signed in, it is back on the Agent's page, which opens it at once, with a fresh ticket,
    // in this tab.
    visited.splice(0);
    await page.getByLabel('E-mail').fill(setup.email);
    await page.getByLabel('Password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(
      (url) => url.host === new URL(setup.agent.url).host && url.pathname === '/_svc/',
    );
    expect(
      visited.some(
        (url) => url.includes(`/agents/${setup.agent.id}`) && url.includes('/accounts/'),
      ),
    ).toBe(true);
    await page.getByRole('link', { name: 'Terminal', exact: true }).waitFor();
    await screenshot(page, 'gateway-opened-from-its-url');
    // With the cookie now set, the Agent's URL leads straight into it.
    await page.goto(setup.agent.url);
    await page.waitForURL((url) => url.pathname === '/_svc/');
    expect(new URL(page.url()).host).toBe(new URL(setup.agent.url).host);
    expect(errors, errors.join('\n')).toEqual([]);
  }, 60_000);

  it("names the Agent in its pages' titles and header, and links back to its dashboard page", async () => {
    const { url } = (
      await setup.server.t.client.call(openAgentGateway, { params: { id: setup.agent.id } })
    ).body;
    const page = await setup.browser.newPage();
    const errors = watchErrors(page);
    await page.goto(url);
    await expect.poll(() => page.title()).toBe('Home · browser agent');
    await page.locator('header strong', { hasText: 'browser agent' }).waitFor();
    await page.getByRole('link', { name: 'Terminal', exact: true }).click();
    await expect.poll(() => page.title()).toBe('Terminal · browser agent');
    await screenshot(page, 'gateway-titled');
    const back = page.getByRole('link', { name: 'Dashboard' });
    expect(await back.getAttribute('href')).toBe(
      `${setup.server.baseUrl}/dashboard/agents/${setup.agent.id}`,
    );
    // This browser has no dashboard session: the Agent's page asks for a sign-in first.
    await back.click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(page.url()).toContain(encodeURIComponent(`/dashboard/agents/${setup.agent.id}`));
    expect(errors.filter((e) => !/status of 401/.test(e))).toEqual([]);
  }, 60_000);

  it('wakes the stopped Agent when the browser that opened it visits its URL, and lands in it', async () => {
    const { client } = setup.server.t;
    const id = setup.agent.id;
    const { url } = (await client.call(openAgentGateway, { params: { id } })).body;
    const page = await setup.browser.newPage();
    const errors = watchErrors(page);
    await page.goto(url);
    await page.waitForURL((at) => at.pathname === '/_svc/');
    await client.call(stopAgent, { params: { id } });
    await waitFor(
      async () => (await client.call(getAgent, { params: { id } })).body.status === 'stopped',
      30_000,
      'stopped',
    );

    // The visit starts it; the waiting page reloads until the gateway answers.
    const seen: string[] = [];
    page.on('response', (res) => {
      if (res.request().isNavigationRequest()) seen.push(`${res.status()} ${res.url()}`);
    });
    await page.goto(setup.agent.url);
    await page.getByRole('heading', { name: 'Starting…' }).waitFor();
    await screenshot(page, 'agent-waking');
    await page.getByRole('link', { name: 'Terminal', exact: true }).waitFor({ timeout: 30_000 });
    expect(new URL(page.url()).pathname).toBe('/_svc/');
    expect(seen[0]).toBe(`503 ${setup.agent.url}`);
    expect((await client.call(getAgent, { params: { id } })).body.status).toBe('running');
    // The waiting page's own 503s are the only complaints.
    expect(errors.filter((e) => !/status of 503/.test(e))).toEqual([]);
  }, 60_000);
});
