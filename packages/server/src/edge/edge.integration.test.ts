import type { Agent } from '@svc/contract';
import {
  createAgent,
  deleteAgent,
  getAgent,
  openAgentGateway,
  startAgent,
  stopAgent,
} from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type EdgeServer, startEdgeServer } from '../../test/edge-server.js';
import { localhostLookup, localRequest } from '../../test/localhost-http.js';
import { signUpUser } from '../../test/test-context.js';
import { waitFor } from '../../test/wait.js';
import { ROUTE_TTL_MS } from './edge-routes.js';

/**
 * The service on a real port with the local compute driver: each Agent's gateway (the real
 * `svc gateway`) listens on a loopback port of its own, and browsers reach it only through the
 * edge, at `http://<subdomain>.localhost:<the service's port>/`.
 */
describe("the edge: Agents' URLs served by the service, routed by host to their gateways", () => {
  let server: EdgeServer;
  let agent: Agent;
  const lookups = () => server.t.ctx.edgeRoutes.lookups;
  const at = (path: string, headers: Record<string, string> = {}) =>
    localRequest(new URL(path, agent.url).toString(), { headers });
  const health = async () => (await at('/_svc/health')).status;
  const agentState = async () =>
    (await server.t.client.call(getAgent, { params: { id: agent.id } })).body.status as string;

  beforeAll(async () => {
    server = await startEdgeServer();
    await signUpUser(server.t.client);
    const created = await server.t.client.call(createAgent, {
      body: {
        name: 'edge agent',
        size: 'small',
        region: 'eu',
        billingType: 'metered',
      },
    });
    agent = await waitFor(
      async () => {
        const res = await server.t.client.call(getAgent, { params: { id: created.body.id } });
        return res.body.status === 'running' && (res.body as Agent);
      },
      30_000,
      'running',
    );
  }, 60_000);
  afterAll(async () => {
    await server?.close();
  });

  it("gives the Agent a URL on the service's own port and reaches its gateway there", async () => {
    const port = new URL(server.baseUrl).port;
    expect(agent.url).toBe(`http://${agent.subdomain}.localhost:${port}/`);
    const res = await at('/_svc/health');
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ status: 'ok' });
  });

  it('asks the database once for a host, then answers from its cache until the entry expires', async () => {
    server.t.ctx.edgeRoutes.forget(agent.subdomain);
    const before = lookups();
    for (let i = 0; i < 5; i += 1) expect(await health()).toBe(200);
    expect(lookups() - before).toBe(1);

    // Requests that miss together share one lookup.
    server.t.ctx.edgeRoutes.forget(agent.subdomain);
    const together = lookups();
    expect(await Promise.all([health(), health(), health(), health()])).toEqual([
      200, 200, 200, 200,
    ]);
    expect(lookups() - together).toBe(1);

    server.t.clock.advance(ROUTE_TTL_MS + 1);
    const expired = lookups();
    expect(await health()).toBe(200);
    expect(await health()).toBe(200);
    expect(lookups() - expired).toBe(1);
  });

  it('opens the terminal through the edge: ticket, cookie, then a shell over the WebSocket', async () => {
    const { url } = (await server.t.client.call(openAgentGateway, { params: { id: agent.id } }))
      .body;
    expect(new URL(url).origin).toBe(new URL(agent.url).origin);
    const opened = await localRequest(url);
    expect(opened).toMatchObject({ status: 302, headers: { location: '/_svc/' } });
    const setCookie = [opened.headers['set-cookie'] ?? []].flat()[0] as string;
    const cookie = setCookie.split(';')[0] as string;
    expect((await at('/_svc/', { cookie })).status).toBe(200);

    const origin = new URL(agent.url).origin;
    const ws = new WebSocket(`${origin.replace('http', 'ws')}/_svc/terminal/ws?cols=80&rows=24`, {
      headers: { cookie, origin },
      lookup: localhostLookup,
    } as WebSocket.ClientOptions);
    const messages: string[] = [];
    ws.on('message', (data) => messages.push(String(data)));
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    await expect.poll(() => messages.length).toBeGreaterThan(0);
    ws.send(JSON.stringify({ t: 'i', d: 'echo "through:$((6*7))"\r' }));
    await expect
      .poll(() => messages.slice(1).join(''), { timeout: 10_000 })
      .toContain('through:42');
    ws.close();

    // Without the cookie the gateway refuses the upgrade, and the edge passes its answer on.
    const refused = new WebSocket(`${origin.replace('http', 'ws')}/_svc/terminal/ws`, {
      headers: { origin },
      lookup: localhostLookup,
    } as WebSocket.ClientOptions);
    await expect(
      new Promise((resolve, reject) => {
        refused.once('open', resolve);
        refused.once('error', reject);
      }),
    ).rejects.toThrow(/401/);
  });

  it('answers a subdomain no Agent has with a 404 page that links to the dashboard', async () => {
    const port = new URL(server.baseUrl).port;
    const res = await localRequest(`http://nobody-abc123.localhost:${port}/`);
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toContain('There is no Agent at this address.');
    expect(res.body).toContain(`href="${server.baseUrl}/dashboard/"`);
  });

  it("leaves the dashboard's host, and hosts that are not one label under it, to the app", async () => {
    const before = lookups();
    const healthz = await localRequest(`${server.baseUrl}/healthz`);
    expect(healthz.status).toBe(200);
    expect(JSON.parse(healthz.body)).toEqual({ status: 'ok' });
    expect((await localRequest(`${server.baseUrl}/api/me`)).status).toBe(401);
    const port = new URL(server.baseUrl).port;
    const deeper = await localRequest(`http://a.${agent.subdomain}.localhost:${port}/healthz`);
    expect(deeper.status).toBe(200);
    expect(JSON.parse(deeper.body)).toEqual({ status: 'ok' });
    expect(lookups()).toBe(before);
  });

  it('answers 502 when the gateway is gone behind its back, and forgets the route', async () => {
    expect(await health()).toBe(200);
    await server.t.driver.powerOff(agent.id);
    const res = await at('/_svc/health');
    expect(res.status).toBe(502);
    expect(res.body).toContain('This Agent is not reachable right now');
    const before = lookups();
    expect(await health()).toBe(502);
    expect(lookups() - before).toBe(1);
    await server.t.driver.powerOn(agent.id);
    expect(await health()).toBe(200);
  });

  it('forgets a stopped Agent at once: its URL answers a not-running page, not the old gateway', async () => {
    expect(await health()).toBe(200);
    expect((await server.t.client.call(stopAgent, { params: { id: agent.id } })).status).toBe(200);
    // The gateway may still be up while the job stops it: the cached route must not reach it.
    const stopping = await at('/_svc/health');
    expect(stopping.status).toBe(503);
    expect(stopping.body).toContain('This Agent is not running');
    await waitFor(async () => (await agentState()) === 'stopped', 20_000, 'stopped');
    expect((await at('/_svc/health')).body).toContain('It is stopped.');

    expect((await server.t.client.call(startAgent, { params: { id: agent.id } })).status).toBe(200);
    await waitFor(async () => (await agentState()) === 'running', 20_000, 'running');
    expect(await health()).toBe(200);

    expect((await server.t.client.call(deleteAgent, { params: { id: agent.id } })).status).toBe(
      200,
    );
    expect(await health()).toBe(503);
    await waitFor(async () => (await health()) === 404, 20_000, 'destroyed');
  }, 60_000);
});
