import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { listAgentPorts, shareAgentPort } from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentInChromium } from '../../test/agent-in-chromium.js';
import { screenshot, signInInBrowser, watchErrors } from '../../test/browser.js';
import { expectFitsWidth, expectNoViolations } from '../../test/dashboard-page.js';
import { PORT_ACCESS_TTL_MS } from './edge-ports.js';

/**
 * Shared ports in Chromium: the Agent page lists a server listening inside the Agent and shares
 * it; its address sends a browser without the port's cookie through the dashboard (sign-in,
 * then a one-time link) to the app; a public port opens for a browser that never signed in.
 */
describe('shared ports in Chromium: from the Agent page to the app inside the Agent', () => {
  const setup = agentInChromium('ports browser');
  let app: Server;
  let port: number;
  let portUrl: string;
  /** The `Cookie` header of each request the app got. */
  const cookies: (string | undefined)[] = [];

  beforeAll(async () => {
    app = createServer((req, res) => {
      cookies.push(req.headers.cookie);
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(
        '<!doctype html><html lang="en"><title>The app</title><h1>Hello from the app</h1></html>',
      );
    });
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    port = (app.address() as AddressInfo).port;
    portUrl = `http://${port}--${setup.agent.subdomain}.${new URL(setup.server.baseUrl).host}/`;
  });
  afterAll(() => {
    app?.close();
  });

  it('shares a listening port from the Agent page, and its address leads a member to the app', async () => {
    const page = await setup.browser.newPage({ viewport: { width: 390, height: 900 } });
    const errors = watchErrors(page);
    // Not shared yet: the edge's 404 page.
    const before = await page.goto(portUrl);
    expect(before?.status()).toBe(404);
    await page.getByText('This port of the Agent is not shared.').waitFor();

    await signInInBrowser(page, setup.server.baseUrl, {
      email: setup.email,
      password: 'correct horse battery',
    });
    await page.goto(`${setup.server.baseUrl}/dashboard/agents/${setup.agent.id}`);
    await page.getByRole('heading', { name: 'Ports', exact: true }).waitFor();
    const selector = page.getByLabel(`Who may open port ${port}`);
    await selector.waitFor();
    expect(await selector.inputValue()).toBe('');
    await selector.selectOption('account');
    const link = page.getByRole('link', { name: portUrl });
    await link.waitFor();
    const { body } = await setup.server.t.client.call(listAgentPorts, {
      params: { id: setup.agent.id },
    });
    expect(body).toContainEqual({ port, share: 'account', listening: true, url: portUrl });
    await page.getByRole('table', { name: 'Ports' }).scrollIntoViewIfNeeded();
    await screenshot(page, 'agent-ports-390');
    await expectFitsWidth(page, 390);
    await expectNoViolations(page, 'the Agent page with a shared port');

    // Its address: to the dashboard's page for the port, which gets a link and goes on.
    await page.goto(`${portUrl}some/page?q=1`);
    await page.getByRole('heading', { name: 'Hello from the app' }).waitFor();
    const landed = new URL(page.url());
    expect(landed.host).toBe(new URL(portUrl).host);
    expect(`${landed.pathname}${landed.search}`).toBe('/some/page?q=1');
    // The port's cookie is the edge's alone: the page cannot read it, the app never sees it.
    expect(await page.evaluate('document.cookie')).toBe('');
    expect(cookies.filter((cookie) => cookie?.includes('svc_'))).toEqual([]);
    // The edge's 404 page above is the only complaint.
    expect(errors.filter((e) => !/status of 404/.test(e))).toEqual([]);
    await page.close();
  }, 60_000);

  it('opens a public port in a browser that never signed in, with no cookie of the service', async () => {
    await setup.server.t.client.call(shareAgentPort, {
      params: { id: setup.agent.id, port },
      body: { share: 'public' },
    });
    const context = await setup.browser.newContext();
    const page = await context.newPage();
    // The edge reads share levels again after a few seconds.
    setup.server.t.clock.advance(PORT_ACCESS_TTL_MS + 1);
    await page.goto(portUrl);
    await page.getByRole('heading', { name: 'Hello from the app' }).waitFor();
    expect(new URL(page.url()).host).toBe(new URL(portUrl).host);
    expect(await context.cookies()).toEqual([]);
    await context.close();
  }, 30_000);
});
