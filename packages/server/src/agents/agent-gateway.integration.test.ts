import type { Agent } from '@svc/contract';
import {
  activateSubscription,
  createAgent,
  createOrg,
  deleteAgent,
  getAgent,
  openAgentGateway,
  transferAgent,
} from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EdgeServer, startEdgeServer } from '../../test/edge-server.js';
import { localRequest } from '../../test/localhost-http.js';
import type { TestClient } from '../../test/test-client.js';
import { signUpUser } from '../../test/test-context.js';
import { waitFor } from '../../test/wait.js';

/**
 * The service hands a member a one-time link into an Agent's gateway; the gateway (the real
 * `svc gateway`, run by the local driver as the Agent's process, reached through the service's
 * edge) checks it without a database.
 */
describe("an Agent's gateway: tickets from the service, checked by svc gateway", () => {
  let server: EdgeServer;
  let t: EdgeServer['t'];
  let owner: TestClient;
  let orgId: string;
  let agent: Agent;
  let other: Agent;

  const running = async (name: string, accountId?: string) => {
    const res = await owner.call(createAgent, {
      body: {
        name,
        size: 'small',
        region: 'eu',
        billingType: 'metered',
        ...(accountId && { accountId }),
      },
    });
    await waitFor(
      async () =>
        (await owner.call(getAgent, { params: { id: res.body.id } })).body.status === 'running',
      30_000,
      'running',
    );
    return (await owner.call(getAgent, { params: { id: res.body.id } })).body as Agent;
  };

  beforeAll(async () => {
    server = await startEdgeServer();
    t = server.t;
    owner = t.newClient();
    await signUpUser(owner);
    orgId = (await owner.call(createOrg, { body: { name: 'Gw', slug: 'gateway-org' } })).body.id;
    await owner.call(activateSubscription, { params: { id: orgId } });
    [agent, other] = await Promise.all([running('gateway one'), running('gateway two')]);
  }, 90_000);
  afterAll(async () => {
    await server?.close();
  });

  const ticketFor = async (id: string, as = owner) => {
    const res = await as.call(openAgentGateway, { params: { id } });
    expect(res.status).toBe(201);
    return res.body as { url: string; expiresAt: string };
  };
  /** What a browser does with the link: follow it once, keep the cookie it sets. */
  const redeem = async (url: string) => {
    const res = await localRequest(url);
    const setCookie = [res.headers['set-cookie'] ?? []].flat()[0];
    return {
      status: res.status,
      location: res.headers.location,
      setCookie,
      cookie: setCookie?.split(';')[0],
    };
  };
  const page = (base: string, cookie?: string) =>
    localRequest(new URL('/_svc/', base).toString(), { headers: cookie ? { cookie } : {} }).then(
      (r) => r.status,
    );

  it("points the Agent's url at the service's port, and the link sets an HttpOnly cookie", async () => {
    expect(agent.url).toBe(`http://${agent.subdomain}.${new URL(server.baseUrl).host}/`);
    const { url, expiresAt } = await ticketFor(agent.id);
    expect(new URL(url).origin).toBe(new URL(agent.url).origin);
    expect(Date.parse(expiresAt) - Date.now()).toBeLessThanOrEqual(61_000);
    const res = await redeem(url);
    expect(res).toMatchObject({ status: 302, location: '/_svc/' });
    expect(res.setCookie).toMatch(/^svc_gateway=gc1\..*; Path=\/; HttpOnly; SameSite=Lax/);
    expect(await page(agent.url, res.cookie)).toBe(200);
    const health = await localRequest(new URL('/_svc/health', agent.url).toString());
    expect(JSON.parse(health.body)).toEqual({ status: 'ok' });
    // Its URL itself leads into it with the cookie, and without it to the dashboard to open it.
    expect(
      (await localRequest(agent.url, { headers: { cookie: res.cookie as string } })).headers
        .location,
    ).toBe('/_svc/');
    expect((await localRequest(agent.url)).headers.location).toBe(
      `${server.baseUrl}/dashboard/agents/${agent.id}?open=1`,
    );
  });

  it('refuses requests without a ticket or cookie, and reused, tampered, expired and other-Agent tickets', async () => {
    expect(await page(agent.url)).toBe(401);
    expect(await page(agent.url, 'svc_gateway=gc1.forged')).toBe(401);
    const { url } = await ticketFor(agent.id);
    expect((await redeem(url)).status).toBe(302);
    expect(await redeem(url)).toMatchObject({ status: 401, cookie: undefined });

    const fresh = new URL((await ticketFor(agent.id)).url);
    const ticket = fresh.searchParams.get('ticket') as string;
    fresh.searchParams.set(
      'ticket',
      `${ticket.slice(0, -2)}${ticket.endsWith('AA') ? 'BB' : 'AA'}`,
    );
    expect((await redeem(fresh.toString())).status).toBe(401);

    const otherLink = new URL((await ticketFor(other.id)).url);
    const onWrongGateway = new URL(`/_svc/open${otherLink.search}`, agent.url);
    expect((await redeem(onWrongGateway.toString())).status).toBe(401);

    t.clock.advance(-2 * 60_000);
    const stale = await ticketFor(agent.id);
    t.clock.advance(2 * 60_000);
    expect((await redeem(stale.url)).status).toBe(401);
  });

  it('lets only members of the Agent account ask for a link, and only while it runs', async () => {
    const stranger = t.newClient();
    await signUpUser(stranger);
    expect((await stranger.callError(openAgentGateway, { params: { id: agent.id } })).status).toBe(
      404,
    );
    expect(
      (await t.newClient().callError(openAgentGateway, { params: { id: agent.id } })).status,
    ).toBe(401);
  });

  it("turns away the old account's cookies after a transfer, and reaches no gateway after destroy", async () => {
    const before = await redeem((await ticketFor(agent.id)).url);
    expect(await page(agent.url, before.cookie)).toBe(200);
    const moved = await owner.call(transferAgent, {
      params: { id: agent.id },
      body: { targetAccountId: orgId },
    });
    expect(moved.status).toBe(200);
    await waitFor(
      async () => (await page(agent.url, before.cookie)) === 401,
      10_000,
      'old cookie refused',
    );
    const after = await redeem((await ticketFor(agent.id)).url);
    expect(await page(agent.url, after.cookie)).toBe(200);

    await owner.call(deleteAgent, { params: { id: agent.id } });
    await waitFor(
      async () => (await owner.send(getAgent, { params: { id: agent.id } })).status === 404,
      15_000,
    );
    // The edge knows no Agent there any more.
    expect(await page(agent.url, after.cookie)).toBe(404);
  });
});
