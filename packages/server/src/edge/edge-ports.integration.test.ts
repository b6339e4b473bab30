import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Agent } from '@svc/contract';
import {
  activateSubscription,
  changePassword,
  createAgent,
  createApiToken,
  createOrg,
  endSession,
  getAgent,
  getMe,
  listAgentPorts,
  listSessions,
  openAgentPort,
  revokeApiToken,
  shareAgentPort,
  signIn,
  signOut,
  unshareAgentPort,
} from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { type EdgeServer, startEdgeServer } from '../../test/edge-server.js';
import { localhostLookup, localRequest } from '../../test/localhost-http.js';
import { joinOrganization } from '../../test/mailed-links.js';
import type { TestClient } from '../../test/test-client.js';
import { signUpUser } from '../../test/test-context.js';
import { waitFor } from '../../test/wait.js';
import { issuePortCookie, portAccessKey } from '../agents/agent-port-access.js';
import { PORT_ACCESS_TTL_MS, ROLE_TTL_MS } from './edge-ports.js';

/** What the app inside the Agent saw of a request. */
interface Seen {
  readonly path: string;
  readonly cookie: string | null;
  readonly port: string | null;
}

/**
 * Shared ports end to end on the local driver: the real `svc gateway` of a running Agent, the
 * service's edge in front, and a small HTTP and WebSocket server standing in for the user's dev
 * server (the local driver's machines are processes on this host, so a server on a loopback port
 * of the test's process is inside the Agent as far as its gateway can tell).
 */
describe('shared ports: <port>--<subdomain> reaches a port inside the Agent, for the right people', () => {
  let server: EdgeServer;
  let t: EdgeServer['t'];
  let owner: TestClient;
  let admin: TestClient;
  let member: TestClient;
  let outsider: { client: TestClient; id: string };
  let agent: Agent;
  let app: Server;
  let appPort: number;
  let portUrl: string;

  /** The app: `GET` answers what it saw as JSON; WebSockets echo. */
  const startApp = async () => {
    const seen = (req: IncomingMessage): Seen => ({
      path: req.url ?? '',
      cookie: req.headers.cookie ?? null,
      port: (req.headers['x-svc-port'] as string | undefined) ?? null,
    });
    app = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(seen(req)));
    });
    const sockets = new WebSocketServer({ server: app });
    sockets.on('connection', (ws, req) => {
      ws.send(JSON.stringify(seen(req)));
      ws.on('message', (data) => ws.send(`echo:${String(data)}`));
    });
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    appPort = (app.address() as AddressInfo).port;
  };

  const at = (path: string, headers: Record<string, string> = {}) =>
    localRequest(new URL(path, portUrl).toString(), { headers });
  const share = (level: 'private' | 'account' | 'public') =>
    owner.call(shareAgentPort, {
      params: { id: agent.id, port: appPort },
      body: { share: level },
    });
  /** The edge reads share levels and roles again after this long. */
  const afterCaches = () => t.clock.advance(Math.max(PORT_ACCESS_TTL_MS, ROLE_TTL_MS) + 1);
  /** What a browser does with the dashboard's link: follows it once, keeps the cookie. */
  const cookieOf = async (client: TestClient, next = '/') => {
    const { url } = (
      await client.call(openAgentPort, { params: { id: agent.id, port: appPort }, body: { next } })
    ).body;
    const res = await localRequest(url);
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe(next);
    const setCookie = [res.headers['set-cookie'] ?? []].flat()[0] as string;
    expect(setCookie).toMatch(/^svc_port=pc2\..*; Path=\/; HttpOnly; SameSite=Lax; Max-Age=\d+$/);
    return setCookie.split(';')[0] as string;
  };
  /** The id of the client's current session, as the settings page shows it. */
  const sessionOf = async (client: TestClient) =>
    (await client.call(listSessions)).body.sessions.find((session) => session.current)?.id ?? '';
  const webSocket = (headers: Record<string, string>) =>
    new Promise<{ first: Seen; echo: string }>((resolve, reject) => {
      const ws = new WebSocket(`${portUrl.replace('http', 'ws')}socket`, {
        headers,
        lookup: localhostLookup,
      } as WebSocket.ClientOptions);
      const messages: string[] = [];
      ws.on('message', (data) => {
        messages.push(String(data));
        if (messages.length === 1) ws.send('hello');
        if (messages.length === 2) {
          ws.close();
          resolve({
            first: JSON.parse(messages[0] as string) as Seen,
            echo: messages[1] as string,
          });
        }
      });
      ws.once('error', reject);
    });

  beforeAll(async () => {
    server = await startEdgeServer();
    t = server.t;
    owner = t.newClient();
    await signUpUser(owner);
    const orgId = (
      await owner.call(createOrg, { body: { name: 'Ports', slug: `edge-ports-${Date.now()}` } })
    ).body.id;
    await owner.call(activateSubscription, { params: { id: orgId } });
    const join = async (role: 'admin' | 'member') => {
      const client = t.newClient();
      const { user } = await signUpUser(client);
      await joinOrganization(t, { owner, orgId, member: client, email: user.email, role });
      return client;
    };
    admin = await join('admin');
    member = await join('member');
    const outsiderClient = t.newClient();
    outsider = { client: outsiderClient, id: (await signUpUser(outsiderClient)).user.id };
    const created = await owner.call(createAgent, {
      body: {
        name: 'ports agent',
        size: 'small',
        region: 'eu',
        billingType: 'metered',
        accountId: orgId,
      },
    });
    agent = await waitFor(
      async () => {
        const res = await owner.call(getAgent, { params: { id: created.body.id } });
        return res.body.status === 'running' && (res.body as Agent);
      },
      30_000,
      'running',
    );
    await startApp();
    portUrl = `http://${appPort}--${agent.subdomain}.${new URL(server.baseUrl).host}/`;
  }, 90_000);
  afterAll(async () => {
    app?.close();
    await server?.close();
  });

  it('lists the port as listening before it is shared, and never the gateway’s own port', async () => {
    const ports = (await member.call(listAgentPorts, { params: { id: agent.id } })).body;
    expect(ports).toContainEqual({ port: appPort, share: null, listening: true, url: portUrl });
    const gateway = (await t.driver.getServer(agent.id))?.gateway?.port;
    expect(gateway).toBeTypeOf('number');
    expect(ports.map((p) => p.port)).not.toContain(gateway);
    expect(ports.every((p) => p.port >= 1024)).toBe(true);
  });

  it('answers a port that is not shared with a 404 page', async () => {
    const res = await at('/', { accept: 'text/html' });
    expect(res.status).toBe(404);
    expect(res.body).toContain('This port of the Agent is not shared.');
    expect(res.body).not.toContain('"path"');
  });

  it('serves a public port to anyone, with none of the service’s cookies or headers reaching the app', async () => {
    const shared = await share('public');
    expect(shared.body).toEqual({ port: appPort, share: 'public', listening: true, url: portUrl });
    const res = await at('/hello?x=1', {
      cookie: 'svc_gateway=gc1.x; mine=1; __Host-svc_gateway=y; svc_port=pc1.z',
      'x-svc-port': '1',
    });
    expect(res.status).toBe(200);
    expect(res.headers['set-cookie']).toBeUndefined();
    expect(JSON.parse(res.body)).toEqual({ path: '/hello?x=1', cookie: 'mine=1', port: null });
    const onlyOurs = await at('/', { cookie: 'svc_gateway=gc1.x' });
    expect(JSON.parse(onlyOurs.body)).toMatchObject({ cookie: null });

    const ws = await webSocket({ cookie: 'svc_gateway=gc1.x; mine=2' });
    expect(ws.first).toMatchObject({ path: '/socket', cookie: 'mine=2', port: null });
    expect(ws.echo).toBe('echo:hello');
  });

  it("never takes a client's own x-svc-port: the Agent's host still reaches its gateway", async () => {
    const res = await localRequest(new URL('/_svc/health', agent.url).toString(), {
      headers: { 'x-svc-port': String(appPort) },
    });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ status: 'ok' });
    // Nor may anyone ask the gateway for its listening ports through the edge.
    expect((await localRequest(new URL('/_svc/ports', agent.url).toString())).status).toBe(404);
  });

  it('counts a shared port’s requests as activity for the idle stop', async () => {
    const lastActivity = async () =>
      (
        await t.ctx.database.db
          .selectFrom('agents')
          .select('lastActivityAt')
          .where('id', '=', agent.id)
          .executeTakeFirstOrThrow()
      ).lastActivityAt?.getTime() ?? 0;
    t.clock.advance(60_000);
    const before = await lastActivity();
    expect((await at('/')).status).toBe(200);
    await waitFor(async () => (await lastActivity()) > before, 5_000, 'activity written');
  });

  it('serves an account port to every member, by the cookie the dashboard’s link sets', async () => {
    await share('account');
    afterCaches();
    // A browser is sent to the dashboard to open it; a script hears 401.
    const page = await at('/deep/page?q=1', { accept: 'text/html' });
    expect(page.status).toBe(302);
    expect(page.headers.location).toBe(
      `${server.baseUrl}/dashboard/agents/${agent.id}/ports/${appPort}/open?next=${encodeURIComponent('/deep/page?q=1')}`,
    );
    expect((await at('/', { accept: 'application/json' })).status).toBe(401);
    expect((await at('/', { cookie: 'svc_port=pc1.forged' })).status).toBe(401);

    for (const client of [owner, admin, member]) {
      const cookie = await cookieOf(client, '/after');
      const res = await at('/after', { cookie: `${cookie}; mine=3` });
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body)).toEqual({ path: '/after', cookie: 'mine=3', port: null });
    }
    const ws = await webSocket({ cookie: await cookieOf(member) });
    expect(ws.first).toMatchObject({ path: '/socket', cookie: null });
    expect(ws.echo).toBe('echo:hello');
    await expect(webSocket({})).rejects.toThrow(/401/);

    // A cookie of someone outside the account, well signed: refused by their role.
    const key = portAccessKey(t.ctx.secrets.hmacKey);
    const nowSeconds = Math.floor(t.clock.now().getTime() / 1000);
    const outsiderSession = { kind: 'session' as const, id: await sessionOf(outsider.client) };
    const forged = issuePortCookie(
      key,
      { agentId: agent.id, port: appPort, userId: outsider.id, opener: outsiderSession },
      nowSeconds,
    );
    const refused = await at('/', { cookie: `svc_port=${forged}` });
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('Not yours to open');
    await expect(webSocket({ cookie: `svc_port=${forged}` })).rejects.toThrow(/403/);
    // Nor can the outsider ask for a link.
    expect(
      (
        await outsider.client.callError(openAgentPort, {
          params: { id: agent.id, port: appPort },
          body: {},
        })
      ).status,
    ).toBe(404);
  });

  it('spends a ticket once, and takes only a path as where to go next', async () => {
    const { url } = (
      await member.call(openAgentPort, { params: { id: agent.id, port: appPort }, body: {} })
    ).body;
    expect((await localRequest(url)).status).toBe(302);
    const again = await localRequest(url);
    expect(again.status).toBe(401);
    expect(again.headers['set-cookie']).toBeUndefined();

    // A ticket for this port does not open another port's host.
    const other = new URL(
      (await member.call(openAgentPort, { params: { id: agent.id, port: appPort }, body: {} })).body
        .url,
    );
    other.hostname = other.hostname.replace(`${appPort}--`, `${appPort === 4000 ? 4001 : 4000}--`);
    const elsewhere = await localRequest(other.toString());
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.headers['set-cookie']).toBeUndefined();

    // An edited `next` that names another origin goes to `/` instead.
    const edited = new URL(
      (await member.call(openAgentPort, { params: { id: agent.id, port: appPort }, body: {} })).body
        .url,
    );
    edited.searchParams.set('next', '//evil.example/');
    const res = await localRequest(edited.toString());
    expect(res).toMatchObject({ status: 302, headers: { location: '/' } });
  });

  it('ends a port’s cookie with the session that opened it: signed out, revoked, or ended in Settings', async () => {
    const email = (await member.call(getMe)).body.user.email;
    const browser = async () => {
      const client = t.newClient();
      await client.call(signIn, { body: { email, password: 'correct horse battery' } });
      return { client, cookie: await cookieOf(client) };
    };
    const memberCookie = await cookieOf(member);
    /** No cookie at all, as far as the edge can tell: to the dashboard, 401 for the rest. */
    const refused = async (cookie: string) => {
      const page = await at('/', { cookie, accept: 'text/html' });
      expect(page.status).toBe(302);
      expect(page.headers.location).toContain(
        `/dashboard/agents/${agent.id}/ports/${appPort}/open`,
      );
      expect((await at('/', { cookie })).status).toBe(401);
      await expect(webSocket({ cookie })).rejects.toThrow(/401/);
    };

    // Signing out ends it at once (no cache to wait for); the user's other sessions keep theirs.
    const laptop = await browser();
    expect((await at('/', { cookie: laptop.cookie })).status).toBe(200);
    expect((await laptop.client.send(signOut)).status).toBe(204);
    await refused(laptop.cookie);
    expect((await at('/', { cookie: memberCookie })).status).toBe(200);

    // A session ended from the settings page.
    const tablet = await browser();
    expect((await at('/', { cookie: tablet.cookie })).status).toBe(200);
    await member.call(endSession, { params: { id: await sessionOf(tablet.client) } });
    await refused(tablet.cookie);

    // A cookie naming a live session of someone else is no cookie either.
    const key = portAccessKey(t.ctx.secrets.hmacKey);
    const borrowed = issuePortCookie(
      key,
      {
        agentId: agent.id,
        port: appPort,
        userId: (await member.call(getMe)).body.user.id,
        opener: { kind: 'session', id: await sessionOf(outsider.client) },
      },
      Math.floor(t.clock.now().getTime() / 1000),
    );
    await refused(`svc_port=${borrowed}`);

    // A link asked for with a personal access token: the cookie ends when the token is revoked.
    const token = (await member.call(createApiToken, { body: { name: 'ports', scope: 'write' } }))
      .body;
    const script = t.newClient().withDefaults({
      headers: { authorization: `Bearer ${token.token}` },
    });
    const tokenCookie = await cookieOf(script);
    expect((await at('/', { cookie: tokenCookie })).status).toBe(200);
    await member.call(revokeApiToken, { params: { id: token.id } });
    await refused(tokenCookie);

    // A password changed in another session ends this one, and with it this cookie.
    const phone = await browser();
    expect((await at('/', { cookie: phone.cookie })).status).toBe(200);
    await member.call(changePassword, {
      body: { currentPassword: 'correct horse battery', newPassword: 'correct horse battery 2' },
    });
    await refused(phone.cookie);
    expect((await at('/', { cookie: memberCookie })).status).toBe(200);
    await member.call(changePassword, {
      body: { currentPassword: 'correct horse battery 2', newPassword: 'correct horse battery' },
    });
  });

  it('serves a private port to owners and admins only, within seconds of the change', async () => {
    const memberCookie = await cookieOf(member);
    const adminCookie = await cookieOf(admin);
    const ownerCookie = await cookieOf(owner);
    await share('private');
    afterCaches();
    expect((await at('/', { cookie: memberCookie })).status).toBe(403);
    await expect(webSocket({ cookie: memberCookie })).rejects.toThrow(/403/);
    expect((await at('/', { cookie: adminCookie })).status).toBe(200);
    expect((await at('/', { cookie: ownerCookie })).status).toBe(200);
    const ws = await webSocket({ cookie: adminCookie });
    expect(ws.echo).toBe('echo:hello');
    // A member cannot get a link to it either.
    expect(
      (
        await member.callError(openAgentPort, {
          params: { id: agent.id, port: appPort },
          body: {},
        })
      ).status,
    ).toBe(403);

    await owner.call(unshareAgentPort, { params: { id: agent.id, port: appPort } });
    afterCaches();
    expect((await at('/', { cookie: ownerCookie })).status).toBe(404);
    const listed = (await owner.call(listAgentPorts, { params: { id: agent.id } })).body;
    expect(listed).toContainEqual({ port: appPort, share: null, listening: true, url: portUrl });
  });
});
