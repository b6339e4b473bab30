import type { Agent, MachineState } from '@svc/contract';
import {
  createAgent,
  getAgent,
  listAuditEvents,
  openAgentGateway,
  openAgentPort,
  shareAgentPort,
  stopAgent,
} from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EdgeServer, startEdgeServer } from '../../test/edge-server.js';
import { gatewayCookie } from '../../test/gateway-terminal.js';
import { localRequest } from '../../test/localhost-http.js';
import type { TestClient } from '../../test/test-client.js';
import { createLocalTestContext, signUpUser } from '../../test/test-context.js';
import { waitFor } from '../../test/wait.js';

const BODY = { name: 'sleepy', size: 'small', region: 'eu', billingType: 'metered' } as const;
/** A browser navigating: what the edge wakes an Agent for. */
const PAGE = { accept: 'text/html,application/xhtml+xml' };

/**
 * Wake on visit on the local driver, through the edge: a stopped Agent's URL starts it for a
 * browser holding its gateway cookie, and sends every other browser to the dashboard's Open.
 */
describe('wake on visit through the edge on the local driver', () => {
  let server: EdgeServer;
  let owner: TestClient;
  let accountId: string;
  beforeAll(async () => {
    server = await startEdgeServer({ context: (env) => createLocalTestContext({ env }) });
    owner = server.t.newClient();
    accountId = (await signUpUser(owner)).account.id;
  }, 60_000);
  afterAll(() => server?.close());

  const get = async (id: string) => (await owner.call(getAgent, { params: { id } })).body as Agent;
  const reach = (id: string, state: MachineState) =>
    waitFor(async () => (await get(id)).status === state, 60_000, `Agent ${id} ${state}`);
  /** A running Agent, and a browser's cookie for it from an earlier visit. */
  const visited = async () => {
    const { id } = (await owner.call(createAgent, { body: BODY })).body;
    await reach(id, 'running');
    const agent = await get(id);
    const link = (await owner.call(openAgentGateway, { params: { id } })).body.url;
    return { agent, cookie: await gatewayCookie(agent.url, link) };
  };
  const stopped = async (id: string) => {
    await owner.call(stopAgent, { params: { id } });
    await reach(id, 'stopped');
  };

  it('starts a stopped Agent for a browser with its cookie, waits, then lands in the editor', async () => {
    const { agent, cookie } = await visited();
    await stopped(agent.id);
    const visit = await localRequest(agent.url, { headers: { ...PAGE, cookie } });
    expect(visit.status).toBe(503);
    expect(visit.body).toContain('Starting…');
    expect(visit.body).toContain('<meta http-equiv="refresh" content="2">');
    expect(['starting', 'running']).toContain((await get(agent.id)).status);
    // The page reloads; once running, the gateway answers it and sends it to the editor.
    await reach(agent.id, 'running');
    const again = await localRequest(agent.url, { headers: { ...PAGE, cookie } });
    expect(again.status).toBe(302);
    expect(again.headers.location).toBe('/_svc/');
    const audit = await owner.call(listAuditEvents, {
      params: { id: accountId },
      query: { kind: 'agent.wake' },
    });
    expect(audit.body.items).toContainEqual(
      expect.objectContaining({ resourceId: agent.id, actor: null }),
    );
  }, 120_000);

  it('sends a browser without a valid cookie to the dashboard, and never starts the Agent', async () => {
    const { agent, cookie } = await visited();
    await stopped(agent.id);
    const dashboard = `${server.baseUrl}/dashboard/agents/${agent.id}?open=1`;
    const forged = cookie.replace(/.$/, (last) => (last === 'A' ? 'B' : 'A'));
    for (const headers of [PAGE, { ...PAGE, cookie: forged }]) {
      const visit = await localRequest(agent.url, { headers });
      expect(visit.status).toBe(302);
      expect(visit.headers.location).toBe(dashboard);
    }
    // Not a page visit (a script, the editor reconnecting): the state, and nothing started.
    const script = await localRequest(agent.url, { headers: { cookie } });
    expect(script.status).toBe(503);
    expect(script.body).toContain('It is stopped');
    // A new token generation (a transfer's) turns the old cookie away too.
    await server.t.ctx.database.db
      .updateTable('agents')
      .set((eb) => ({ tokenGen: eb('tokenGen', '+', 1) }))
      .where('id', '=', agent.id)
      .execute();
    const old = await localRequest(agent.url, { headers: { ...PAGE, cookie } });
    expect(old.status).toBe(302);
    expect(old.headers.location).toBe(dashboard);
    expect((await get(agent.id)).status).toBe('stopped');
  }, 120_000);

  it("wakes through a shared port's address for whoever the port lets in, and only them", async () => {
    const { agent } = await visited();
    const shareAs = (port: number, share: 'public' | 'account') =>
      owner.call(shareAgentPort, { params: { id: agent.id, port }, body: { share } });
    await shareAs(3000, 'public');
    await shareAs(3001, 'account');
    await stopped(agent.id);
    const portUrl = (port: number) => agent.url.replace('://', `://${port}--`);

    // A member's port, and no port cookie: to the dashboard to open it; nothing started.
    const members = await localRequest(portUrl(3001), { headers: PAGE });
    expect(members.status).toBe(302);
    expect(members.headers.location).toBe(
      `${server.baseUrl}/dashboard/agents/${agent.id}/ports/3001/open?next=%2F`,
    );
    // Not a page visit: the state only.
    expect((await localRequest(portUrl(3000))).status).toBe(503);
    // A port not shared at all: its 404, whatever the state.
    expect((await localRequest(portUrl(3002), { headers: PAGE })).status).toBe(404);
    expect((await get(agent.id)).status).toBe('stopped');

    // The member's one-time link sets the port's cookie even while the Agent is stopped; with
    // it, the visit starts the Agent.
    const { url } = (
      await owner.call(openAgentPort, { params: { id: agent.id, port: 3001 }, body: { next: '/' } })
    ).body;
    const opened = await localRequest(url);
    expect(opened.status).toBe(302);
    const cookie = ([opened.headers['set-cookie'] ?? []].flat()[0] as string).split(
      ';',
    )[0] as string;
    const visit = await localRequest(portUrl(3001), { headers: { ...PAGE, cookie } });
    expect(visit.status).toBe(503);
    expect(visit.body).toContain('Starting…');
    await reach(agent.id, 'running');
    const audit = await owner.call(listAuditEvents, {
      params: { id: accountId },
      query: { kind: 'agent.wake' },
    });
    expect(audit.body.items).toContainEqual(
      expect.objectContaining({ resourceId: agent.id, data: { stoppedReason: null, port: 3001 } }),
    );

    // A public port wakes it for anyone: its owner shared it with everybody.
    await stopped(agent.id);
    const anyone = await localRequest(portUrl(3000), { headers: PAGE });
    expect(anyone.status).toBe(503);
    expect(anyone.body).toContain('Starting…');
    await reach(agent.id, 'running');
  }, 120_000);
});
