import type { Agent, MachineState } from '@svc/contract';
import {
  createAgent,
  getAgent,
  listAuditEvents,
  openAgentGateway,
  reportAgentActivity,
  startAgent,
  stopAgent,
  updateAgent,
} from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EdgeServer, startEdgeServer } from '../../test/edge-server.js';
import { gatewayCookie, openTerminal } from '../../test/gateway-terminal.js';
import { localRequest } from '../../test/localhost-http.js';
import { errorOf, type TestClient } from '../../test/test-client.js';
import {
  createLocalTestContext,
  createTestContext,
  signUpUser,
  type TestContext,
} from '../../test/test-context.js';
import { databaseKinds } from '../../test/test-db.js';
import { waitFor } from '../../test/wait.js';
import { issueAgentToken } from './agent-token.js';
import { idleStop } from './agents.jobs.js';

const BODY = { name: 'idle', size: 'small', region: 'eu', billingType: 'metered' } as const;

describe.each(databaseKinds)('idle stop on %s', (kind) => {
  let t: TestContext;
  let client: TestClient;
  let accountId: string;
  beforeAll(async () => {
    // A new Agent's default is the service's; a minute stays a minute (the clock is advanced).
    t = await createTestContext(kind, { env: { AGENT_IDLE_STOP_MINUTES: '45' } });
    client = t.newClient();
    accountId = (await signUpUser(client)).account.id;
  });
  afterAll(() => t?.close());

  const get = async (id: string) => (await client.call(getAgent, { params: { id } })).body as Agent;
  const reach = (id: string, state: MachineState) =>
    waitFor(async () => (await get(id)).status === state, 15_000, `Agent ${id} ${state}`);
  const running = async (idleStopMinutes?: number) => {
    const body = { ...BODY, ...(idleStopMinutes !== undefined && { idleStopMinutes }) };
    const created = (await client.call(createAgent, { body })).body;
    await reach(created.id, 'running');
    return get(created.id);
  };

  it("gives a new Agent the service's idleStopMinutes unless its creator chooses", async () => {
    const created = (await client.call(createAgent, { body: BODY })).body;
    expect(created).toMatchObject({ idleStopMinutes: 45, stoppedReason: null });
    const chosen = (await client.call(createAgent, { body: { ...BODY, idleStopMinutes: 0 } })).body;
    expect(chosen.idleStopMinutes).toBe(0);
    const refused = await client.callError(createAgent, {
      body: { ...BODY, idleStopMinutes: 10_081 },
    });
    expect(refused.status).toBe(400);
  });

  it('PATCH sets idleStopMinutes: whole minutes from 0 to a week, for members only', async () => {
    const { id } = (await client.call(createAgent, { body: BODY })).body;
    const set = await client.call(updateAgent, { params: { id }, body: { idleStopMinutes: 15 } });
    expect(set.body.idleStopMinutes).toBe(15);
    expect((await get(id)).idleStopMinutes).toBe(15);
    for (const idleStopMinutes of [-1, 1.5, 10_081]) {
      const res = await client.callError(updateAgent, {
        params: { id },
        body: { idleStopMinutes },
      });
      expect(res.status).toBe(400);
      expect(res.body.issues?.[0]?.path).toEqual(['body', 'idleStopMinutes']);
    }
    for (const body of [{ idleStopMinutes: '5' }, {}, { idleStopMinutes: 5, name: 'x' }]) {
      const res = await client.patch(`/api/agents/${id}`, body);
      expect(res.status).toBe(400);
      expect(errorOf(res).error).toBe('invalid_request');
    }
    expect(
      (await client.call(updateAgent, { params: { id }, body: { idleStopMinutes: 0 } })).body,
    ).toMatchObject({ idleStopMinutes: 0 });
    const stranger = t.newClient();
    await signUpUser(stranger);
    const hidden = await stranger.callError(updateAgent, {
      params: { id },
      body: { idleStopMinutes: 5 },
    });
    expect(hidden.status).toBe(404);
    expect((await get(id)).idleStopMinutes).toBe(0);
    const audit = await client.call(listAuditEvents, {
      params: { id: accountId },
      query: { kind: 'agent.update' },
    });
    expect(audit.body.items.map((e) => e.data)).toContainEqual({
      idleStopMinutes: { from: 15, to: 0 },
    });
  });

  it('stops an Agent nobody used for its idleStopMinutes, through the job, as idle', async () => {
    const agent = await running(2);
    // Just short of two minutes: still running.
    t.clock.advance(110_000);
    await t.ctx.agents.stopIdle();
    expect((await get(agent.id)).status).toBe('running');
    t.clock.advance(10_000);
    await t.ctx.jobs.enqueue(t.ctx.database.db, idleStop, {});
    await reach(agent.id, 'stopped');
    expect(await get(agent.id)).toMatchObject({ stoppedReason: 'idle', statusReason: null });
    const audit = await client.call(listAuditEvents, {
      params: { id: accountId },
      query: { kind: 'agent.idle_stop' },
    });
    expect(audit.body.items).toEqual([
      expect.objectContaining({
        resourceId: agent.id,
        actor: null,
        data: { idleStopMinutes: 2, lastActivityAt: null },
      }),
    ]);
    // Its owners are told (the notice's own tests follow the mail).
    const told = await t.ctx.database.db
      .selectFrom('noticeThrottles')
      .select('kind')
      .where('subjectId', '=', agent.id)
      .execute();
    expect(told).toEqual([{ kind: 'agent_idle_stopped' }]);
    // Started again, the reason is history; a person's stop gives none.
    await client.call(startAgent, { params: { id: agent.id } });
    await reach(agent.id, 'running');
    expect((await get(agent.id)).stoppedReason).toBeNull();
    await client.call(stopAgent, { params: { id: agent.id } });
    await reach(agent.id, 'stopped');
    expect((await get(agent.id)).stoppedReason).toBeNull();
  });

  it('counts the SSH sessions its gateway reports, and nothing else the machine says', async () => {
    const agent = await running(1);
    const auth = {
      headers: {
        authorization: `Bearer ${issueAgentToken(t.ctx.secrets.hmacKey, agent.id, 1)}`,
      },
    };
    const gateway = t.newClient();
    const report = (sshSessions: number) =>
      gateway.call(reportAgentActivity, { body: { sshSessions } }, auth);
    // The answer sets the gateway's pace: a quarter of an idle-stop minute.
    expect((await report(0)).body).toEqual({ reportEveryMs: 15_000 });
    t.clock.advance(50_000);
    await report(0);
    t.clock.advance(20_000);
    await t.ctx.agents.stopIdle();
    await reach(agent.id, 'stopped');

    const watched = await running(1);
    const watchedAuth = {
      headers: {
        authorization: `Bearer ${issueAgentToken(t.ctx.secrets.hmacKey, watched.id, 1)}`,
      },
    };
    t.clock.advance(50_000);
    await gateway.call(reportAgentActivity, { body: { sshSessions: 2 } }, watchedAuth);
    await waitFor(
      async () =>
        (
          await t.ctx.database.db
            .selectFrom('agents')
            .select('lastActivityAt')
            .where('id', '=', watched.id)
            .executeTakeFirstOrThrow()
        ).lastActivityAt !== null,
      5_000,
      'activity written',
    );
    t.clock.advance(20_000);
    await t.ctx.agents.stopIdle();
    expect((await get(watched.id)).status).toBe('running');
    // Only the Agent's own token reports, and only counts.
    expect(
      (await t.newClient().callError(reportAgentActivity, { body: { sshSessions: 1 } })).status,
    ).toBe(401);
    const bad = await gateway.callError(reportAgentActivity, { body: { sshSessions: -1 } }, auth);
    expect(bad.status).toBe(400);
  });

  it("counts from the Agent's start and its last activity; 0 never stops it", async () => {
    const never = await running(0);
    const agent = await running(1);
    t.clock.advance(50_000);
    // The edge saw a person at it.
    t.ctx.agentActivity.touch(agent.id);
    const lastActivity = async () =>
      (
        await t.ctx.database.db
          .selectFrom('agents')
          .select('lastActivityAt')
          .where('id', '=', agent.id)
          .executeTakeFirstOrThrow()
      ).lastActivityAt;
    await waitFor(async () => (await lastActivity()) !== null, 5_000, 'activity written');
    t.clock.advance(50_000);
    await t.ctx.agents.stopIdle();
    expect((await get(agent.id)).status).toBe('running');
    t.clock.advance(10_000);
    await t.ctx.agents.stopIdle();
    await reach(agent.id, 'stopped');
    t.clock.advance(7 * 24 * 3_600_000);
    await t.ctx.agents.stopIdle();
    expect((await get(never.id)).status).toBe('running');
  });
});

/**
 * On the local driver, through the edge: a person's requests and an open terminal keep the
 * Agent running; alone, it stops. One idle-stop minute lasts a second here
 * (`AGENT_IDLE_UNIT_MS`), and the edge's activity is real time.
 */
describe('idle stop through the edge on the local driver', () => {
  const UNIT_MS = 1_000;
  let server: EdgeServer;
  let owner: TestClient;
  let agent: Agent;
  beforeAll(async () => {
    server = await startEdgeServer({
      context: (env) =>
        createLocalTestContext({ env: { ...env, AGENT_IDLE_UNIT_MS: String(UNIT_MS) } }),
    });
    owner = server.t.newClient();
    await signUpUser(owner);
    const { id } = (await owner.call(createAgent, { body: { ...BODY, idleStopMinutes: 2 } })).body;
    await waitFor(
      async () => (await owner.call(getAgent, { params: { id } })).body.status === 'running',
      60_000,
      'running',
    );
    agent = (await owner.call(getAgent, { params: { id } })).body as Agent;
  }, 120_000);
  afterAll(() => server?.close());

  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const status = async () => (await owner.call(getAgent, { params: { id: agent.id } })).body;

  it('keeps running while requests reach it through the edge', async () => {
    for (let i = 0; i < 12; i += 1) {
      // Any answer counts (the gateway's sign-in redirect included): the edge proxied it.
      await localRequest(new URL('/', agent.url).toString());
      await sleep(250);
      await server.t.ctx.agents.stopIdle();
    }
    expect((await status()).status).toBe('running');
  }, 30_000);

  it('keeps running while a terminal is open, and stops once it is closed', async () => {
    const link = (await owner.call(openAgentGateway, { params: { id: agent.id } })).body.url;
    const shell = await openTerminal(agent.url, await gatewayCookie(agent.url, link));
    try {
      // Three idle-stop lengths with nothing typed: the open socket alone is activity.
      await sleep(3 * 2 * UNIT_MS);
      await server.t.ctx.agents.stopIdle();
      expect((await status()).status).toBe('running');
      expect((await shell.run('echo still here')).output).toBe('still here\n');
    } finally {
      shell.close();
    }
    await sleep(2 * UNIT_MS + 500);
    // (The scheduled sweep may get there first: the state says it either way.)
    await server.t.ctx.agents.stopIdle();
    await waitFor(async () => (await status()).status === 'stopped', 30_000, 'stopped');
    expect((await status()).stoppedReason).toBe('idle');
    // Stopped, its URL answers the edge's page, which counts as nobody's activity.
    const page = await localRequest(agent.url);
    expect(page.status).not.toBe(200);
  }, 60_000);
});
