import {
  createAgent,
  createOrg,
  getMe,
  listAgentPorts,
  listAuditEvents,
  listSessions,
  MAX_SHARED_PORTS,
  openAgentPort,
  shareAgentPort,
  unshareAgentPort,
} from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { joinOrganization } from '../../test/mailed-links.js';
import type { TestClient } from '../../test/test-client.js';
import { createTestContext, signUpUser, type TestContext } from '../../test/test-context.js';

/**
 * Shared ports through the API (the test driver: no gateway answers, so nothing is listening):
 * what a port may be, how many, who may share and open one, and the audit trail.
 */
describe("an Agent's shared ports: PUT, GET and DELETE /api/agents/{id}/ports, and open", () => {
  let t: TestContext;
  let owner: TestClient;
  let admin: TestClient;
  let member: TestClient;
  let outsider: TestClient;
  let orgId: string;
  let agentId: string;
  let subdomain: string;
  const port = (n: number | string) => `/api/agents/${agentId}/ports/${n}`;

  beforeAll(async () => {
    t = await createTestContext('pglite');
    owner = t.newClient();
    await signUpUser(owner);
    orgId = (await owner.call(createOrg, { body: { name: 'Ports', slug: `ports-${Date.now()}` } }))
      .body.id;
    const join = async (role: 'admin' | 'member') => {
      const client = t.newClient();
      const { user: joined } = await signUpUser(client);
      await joinOrganization(t, { owner, orgId, member: client, email: joined.email, role });
      return client;
    };
    admin = await join('admin');
    member = await join('member');
    outsider = t.newClient();
    await signUpUser(outsider);
    const created = await owner.call(createAgent, {
      body: {
        name: 'port agent',
        size: 'small',
        region: 'eu',
        billingType: 'metered',
        accountId: orgId,
      },
    });
    agentId = created.body.id;
    subdomain = created.body.subdomain;
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  it('shares a port, lists it with its URL, changes its level and unshares it', async () => {
    const { scheme, domain } = t.ctx.config.http.agentOrigin;
    const shared = await member.call(shareAgentPort, {
      params: { id: agentId, port: 3000 },
      body: { share: 'account' },
    });
    expect(shared.body).toEqual({
      port: 3000,
      share: 'account',
      listening: false,
      url: `${scheme}://3000--${subdomain}.${domain}/`,
    });
    const again = await owner.call(shareAgentPort, {
      params: { id: agentId, port: 3000 },
      body: { share: 'private' },
    });
    expect(again.body.share).toBe('private');
    const listed = await admin.call(listAgentPorts, { params: { id: agentId } });
    expect(listed.body).toEqual([{ ...shared.body, share: 'private' }]);

    await admin.call(unshareAgentPort, { params: { id: agentId, port: 3000 } });
    expect((await owner.call(listAgentPorts, { params: { id: agentId } })).body).toEqual([]);
    const gone = await owner.callError(unshareAgentPort, { params: { id: agentId, port: 3000 } });
    expect(gone.status).toBe(404);

    const audit = await owner.call(listAuditEvents, {
      params: { id: orgId },
      query: { kind: 'agent' },
    });
    const actions = audit.body.items.map((e) => [e.action, e.data]);
    expect(actions).toEqual(
      expect.arrayContaining([
        ['agent.port_share', { port: 3000, share: { from: null, to: 'account' } }],
        ['agent.port_share', { port: 3000, share: { from: 'account', to: 'private' } }],
        ['agent.port_unshare', { port: 3000, share: 'private' }],
      ]),
    );
  });

  it('refuses ports below 1024, above 65535, the gateway’s own and a bad share level, saying why', async () => {
    for (const [n, words] of [
      [80, /1024 to 65535/],
      [1023, /1024 to 65535/],
      [65536, /1024 to 65535/],
      [8443, /gateway/],
      ['3000.5', /whole port number/],
      ['abc', /./],
    ] as const) {
      const res = await owner.put(port(n), { share: 'public' });
      expect(res.status, String(n)).toBe(400);
      expect(res.body).toMatchObject({ error: 'invalid_request' });
      expect(JSON.stringify(res.body)).toMatch(words);
    }
    const bad = await owner.put(port(3000), { share: 'everyone' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: 'invalid_request' });
    const extra = await owner.put(port(3000), { share: 'public', other: 1 });
    expect(extra.status).toBe(400);
  });

  it(`shares at most ${MAX_SHARED_PORTS} ports, and still changes a shared one's level at the limit`, async () => {
    for (let i = 0; i < MAX_SHARED_PORTS; i += 1) {
      await owner.call(shareAgentPort, {
        params: { id: agentId, port: 4000 + i },
        body: { share: 'account' },
      });
    }
    const refused = await owner.put(port(5000), { share: 'public' });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ error: 'invalid_request' });
    expect(JSON.stringify(refused.body)).toMatch(/at most 20 ports/);
    const changed = await owner.call(shareAgentPort, {
      params: { id: agentId, port: 4000 },
      body: { share: 'public' },
    });
    expect(changed.body.share).toBe('public');
    expect((await owner.call(listAgentPorts, { params: { id: agentId } })).body).toHaveLength(
      MAX_SHARED_PORTS,
    );
    for (let i = 0; i < MAX_SHARED_PORTS; i += 1) {
      await owner.call(unshareAgentPort, { params: { id: agentId, port: 4000 + i } });
    }
  });

  it("answers 404 to people outside the Agent's account, for every call", async () => {
    const params = { id: agentId, port: 3100 };
    await owner.call(shareAgentPort, { params, body: { share: 'account' } });
    expect((await outsider.callError(listAgentPorts, { params: { id: agentId } })).status).toBe(
      404,
    );
    expect(
      (await outsider.callError(shareAgentPort, { params, body: { share: 'public' } })).status,
    ).toBe(404);
    expect((await outsider.callError(unshareAgentPort, { params })).status).toBe(404);
    expect((await outsider.callError(openAgentPort, { params, body: {} })).status).toBe(404);
    await owner.call(unshareAgentPort, { params });
  });

  it('hands out links: a private port to owners and admins only, none for a port not shared', async () => {
    const params = { id: agentId, port: 3200 };
    expect((await owner.callError(openAgentPort, { params, body: {} })).status).toBe(404);

    await owner.call(shareAgentPort, { params, body: { share: 'private' } });
    const denied = await member.callError(openAgentPort, { params, body: {} });
    expect(denied.status).toBe(403);
    expect(denied.body.error).toBe('forbidden');
    for (const who of [owner, admin]) {
      const { url } = (await who.call(openAgentPort, { params, body: { next: '/app?x=1' } })).body;
      const link = new URL(url);
      expect(link.host.startsWith(`3200--${subdomain}.`)).toBe(true);
      expect(link.pathname).toBe('/_svc/port-open');
      // The ticket names the session that asked for it (by the settings page's id, no secret).
      const { user } = (await who.call(getMe)).body;
      const session = (await who.call(listSessions)).body.sessions.find((s) => s.current)?.id;
      expect(link.searchParams.get('ticket')).toMatch(
        new RegExp(`^pt2\\.${agentId}\\.3200\\.${user.id}\\.s\\.${session}\\.`),
      );
      expect(link.searchParams.get('next')).toBe('/app?x=1');
    }

    await owner.call(shareAgentPort, { params, body: { share: 'account' } });
    expect((await member.call(openAgentPort, { params, body: {} })).status).toBe(201);

    // A public port needs no ticket: the link is the page.
    await owner.call(shareAgentPort, { params, body: { share: 'public' } });
    const { url } = (await member.call(openAgentPort, { params, body: { next: '/x' } })).body;
    expect(new URL(url).pathname).toBe('/x');
    expect(new URL(url).search).toBe('');

    // `next` is a path on the port, never another origin.
    for (const next of ['//evil.example/', 'https://evil.example/', '/\\evil.example']) {
      const res = await owner.post(`${port(3200)}/open`, { next });
      expect(res.status, next).toBe(400);
    }
    await owner.call(unshareAgentPort, { params });
  });
});
