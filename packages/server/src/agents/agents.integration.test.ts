import type { Agent, EndpointCallInput, MachineState } from '@svc/contract';
import {
  createAgent,
  deleteAgent,
  getAgent,
  getMe,
  getSelfAgent,
  listAgents,
  restartAgent,
  setAgentBilling,
  startAgent,
  stopAgent,
} from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorOf, type TestClient } from '../../test/test-client.js';
import { createTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { databaseKinds } from '../../test/test-db.js';
import { waitFor } from '../../test/wait.js';
import { AGENT } from '../lifecycle/machine-kinds.js';
import { issueAgentToken } from './agent-token.js';

describe.each(databaseKinds)('Agents on %s', (kind) => {
  let t: TestContext;
  let client: TestClient;
  let email: string;
  let personalId: string;
  beforeAll(async () => {
    t = await createTestContext(kind, { env: { PROVISION_TIMEOUT_MS: '1500' } });
    client = t.newClient();
    const signedUp = await signUpUser(client);
    personalId = signedUp.account.id;
    email = signedUp.user.email;
  });
  afterAll(() => t?.close());

  const DEFAULTS = {
    name: 'My Agent',
    size: 'small',
    region: 'eu',
    billingType: 'metered',
  } as const;
  type Overrides = Partial<EndpointCallInput<typeof createAgent>['body']>;
  const create = (body: Overrides = {}, as = client) =>
    as.call(createAgent, { body: { ...DEFAULTS, ...body } });
  const createRefused = (body: Overrides = {}, as = client) =>
    as.callError(createAgent, { body: { ...DEFAULTS, ...body } });
  const statusOf = async (id: string, as = client) =>
    (await as.call(getAgent, { params: { id } })).body.status as MachineState;
  const reach = (id: string, state: MachineState) =>
    waitFor(async () => (await statusOf(id)) === state, 15_000, `Agent ${id} ${state}`);
  const running = async (body: Overrides = {}) => {
    const res = await create(body);
    await reach(res.body.id, 'running');
    return res.body;
  };

  it('creates an Agent: 201 in provisioning with the detail fields, then running', async () => {
    const res = await create({ name: '  Hello, World! ', region: 'us' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: 'Hello, World!',
      size: 'small',
      region: 'us',
      billingType: 'metered',
      status: 'provisioning',
      provider: 'test',
      accountId: personalId,
      cohort: 'current',
      specs: { vcpu: 3, ramGb: 4, diskGb: 80 },
      statusReason: null,
    });
    expect(res.body.subdomain).toMatch(/^hello-world-[a-z0-9]{6}$/);
    expect(res.body.url).toBe(`http://${res.body.subdomain}.localhost:8080/`);
    await reach(res.body.id, 'running');
    expect(t.compute.servers.get(res.body.id)?.status).toBe('running');
  });

  it.each([
    [{ name: '' }, 'name'],
    [{ name: '    ' }, 'name'],
    [{ name: 'x'.repeat(31) }, 'name'],
    [{ name: '!!!' }, 'name'],
    [{ size: 'huge' }, 'size'],
    [{ region: 'US' }, 'region'],
    [{ billingType: 'free' }, 'billingType'],
    [{ accountId: 'nope' }, 'accountId'],
  ])('refuses %j with 400 naming the field', async (body, field) => {
    // A raw path: these bodies are ones the contract's types refuse to write.
    const res = await client.post('/api/agents', { ...DEFAULTS, ...body });
    expect(res.status).toBe(400);
    const refused = errorOf(res);
    expect(refused.error).toBe('invalid_request');
    expect(refused.issues?.map((i) => i.path.join('.'))).toContain(`body.${field}`);
  });

  it('needs an active subscription for subscription billing', async () => {
    expect(await createRefused({ billingType: 'subscription' })).toMatchObject({
      status: 400,
      body: { error: 'subscription_required' },
    });
  });

  it('keeps other accounts out: 404 for their Agents and accounts', async () => {
    const agent = await running();
    const stranger = t.newClient();
    const strangerAccount = (await signUpUser(stranger)).account.id;
    expect((await stranger.callError(getAgent, { params: { id: agent.id } })).status).toBe(404);
    for (const move of [startAgent, stopAgent, restartAgent]) {
      expect((await stranger.callError(move, { params: { id: agent.id } })).status).toBe(404);
    }
    expect((await stranger.callError(deleteAgent, { params: { id: agent.id } })).status).toBe(404);
    expect(
      (await stranger.callError(listAgents, { query: { accountId: personalId } })).status,
    ).toBe(404);
    expect((await createRefused({ accountId: personalId }, stranger)).status).toBe(404);
    expect(
      await stranger.call(listAgents, { query: { accountId: strangerAccount } }),
    ).toMatchObject({
      status: 200,
      body: [],
    });
    expect(
      (await stranger.callError(getAgent, { params: { id: crypto.randomUUID() } })).status,
    ).toBe(404);
    expect(await statusOf(agent.id)).toBe('running');
  });

  it('lists the Agents of the caller, and of one account with ?accountId=', async () => {
    const agent = await running();
    const all = await client.call(listAgents);
    expect(all.status).toBe(200);
    expect(all.body.map((a: Agent) => a.id)).toContain(agent.id);
    const one = await client.call(listAgents, { query: { accountId: personalId } });
    expect(one.body.every((a: Agent) => a.accountId === personalId)).toBe(true);
  });

  it('walks the Moves table: stop, start, restart, each through its transient state', async () => {
    const agent = await running();
    const stop = await client.call(stopAgent, { params: { id: agent.id } });
    expect(stop).toMatchObject({ status: 200, body: { status: 'stopping' } });
    await reach(agent.id, 'stopped');
    expect(t.compute.servers.get(agent.id)?.status).toBe('off');
    const start = await client.call(startAgent, { params: { id: agent.id } });
    expect(start).toMatchObject({ status: 200, body: { status: 'starting' } });
    await reach(agent.id, 'running');
    const restart = await client.call(restartAgent, { params: { id: agent.id } });
    expect(restart).toMatchObject({ status: 200, body: { status: 'restarting' } });
    await reach(agent.id, 'running');
    // After a start or a restart the job reads where the machine answers, and waits for it there.
    expect(t.compute.calls.filter((c) => c.id === agent.id).map((c) => c.call)).toEqual([
      'createServer',
      'powerOff',
      'powerOn',
      'getServer',
      'reboot',
      'getServer',
    ]);
  });

  it('answers 409 invalid_state for moves the table does not allow, and changes nothing', async () => {
    const agent = await running();
    expect(await client.callError(startAgent, { params: { id: agent.id } })).toMatchObject({
      status: 409,
      body: { error: 'invalid_state' },
    });
    await client.call(stopAgent, { params: { id: agent.id } });
    await reach(agent.id, 'stopped');
    expect((await client.callError(stopAgent, { params: { id: agent.id } })).status).toBe(409);
    expect((await client.callError(restartAgent, { params: { id: agent.id } })).status).toBe(409);
    expect(await statusOf(agent.id)).toBe('stopped');
  });

  it('refuses DELETE while provisioning, starting or stopping (409)', async () => {
    t.compute.behave('createServer', { latencyMs: 800 });
    const provisioning = (await create()).body;
    expect((await client.callError(deleteAgent, { params: { id: provisioning.id } })).status).toBe(
      409,
    );
    t.compute.behave('createServer', {});
    await reach(provisioning.id, 'running');

    t.compute.behave('powerOff', { latencyMs: 800 });
    await client.call(stopAgent, { params: { id: provisioning.id } });
    expect(await client.callError(deleteAgent, { params: { id: provisioning.id } })).toMatchObject({
      status: 409,
      body: { error: 'invalid_state' },
    });
    t.compute.behave('powerOff', {});
    await reach(provisioning.id, 'stopped');

    t.compute.behave('powerOn', { latencyMs: 800 });
    await client.call(startAgent, { params: { id: provisioning.id } });
    expect((await client.callError(deleteAgent, { params: { id: provisioning.id } })).status).toBe(
      409,
    );
    t.compute.behave('powerOn', {});
    await reach(provisioning.id, 'running');
  });

  it('destroys a running or stopped Agent: 200 destroying, then its id answers 404 and the server is gone', async () => {
    for (const stopFirst of [false, true]) {
      const agent = await running();
      if (stopFirst) {
        await client.call(stopAgent, { params: { id: agent.id } });
        await reach(agent.id, 'stopped');
      }
      expect(await client.call(deleteAgent, { params: { id: agent.id } })).toMatchObject({
        status: 200,
        body: { status: 'destroying' },
      });
      await waitFor(
        async () => (await client.send(getAgent, { params: { id: agent.id } })).status === 404,
      );
      expect(t.compute.servers.has(agent.id)).toBe(false);
      expect((await client.callError(deleteAgent, { params: { id: agent.id } })).status).toBe(404);
    }
  });

  it('times provisioning out: error with provisioning_timeout, whatever the driver made removed', async () => {
    t.compute.behave('createServer', { hang: true });
    const agent = (await create()).body;
    try {
      // The timeout job fires after PROVISION_TIMEOUT_MS of real time and checks the deadline
      // against the service clock, which this test moves.
      t.clock.advance(1_500);
      await waitFor(async () => (await statusOf(agent.id)) === 'error', 15_000);
      const detail = (await client.call(getAgent, { params: { id: agent.id } })).body;
      expect(detail.statusReason).toBe('provisioning_timeout');
      // The owner is mailed (here the outbox): the Agent, its reason and its page.
      const mail = await waitFor(
        () =>
          t.ctx.mail
            .latestInOutbox(email)
            .then((text) => text.includes(`/agents/${agent.id}`) && text)
            .catch(() => undefined),
        15_000,
        'the notice in the outbox',
      );
      expect(mail).toContain(`The Agent ${agent.name} of`);
      expect(mail).toContain('provisioning_timeout');
    } finally {
      t.compute.behave('createServer', {});
      t.compute.release();
    }
    // The hung create finishes late; the provision job must clean up after it.
    await waitFor(() => !t.compute.servers.has(agent.id), 10_000, 'late server removed');
    // An Agent in error can be destroyed.
    expect((await client.call(deleteAgent, { params: { id: agent.id } })).status).toBe(200);
    await waitFor(
      async () => (await client.send(getAgent, { params: { id: agent.id } })).status === 404,
    );
  });

  it('records usage periods back to back and audit events for create and destroy', async () => {
    const agent = await running();
    await client.call(stopAgent, { params: { id: agent.id } });
    await reach(agent.id, 'stopped');
    const periods = await t.ctx.database.db
      .selectFrom('usagePeriods')
      .selectAll()
      .where('resourceId', '=', agent.id)
      .orderBy('seq')
      .execute();
    expect(periods.map((p) => p.state)).toEqual(['provisioning', 'running', 'stopping', 'stopped']);
    for (let i = 1; i < periods.length; i++) {
      expect(periods[i - 1]?.endedAt?.getTime()).toBe(periods[i]?.startedAt.getTime());
    }
    expect(periods.at(-1)?.endedAt).toBeNull();
    await client.call(deleteAgent, { params: { id: agent.id } });
    await waitFor(
      async () => (await client.send(getAgent, { params: { id: agent.id } })).status === 404,
    );
    const open = await t.ctx.database.db
      .selectFrom('usagePeriods')
      .selectAll()
      .where('resourceId', '=', agent.id)
      .where('endedAt', 'is', null)
      .execute();
    expect(open).toEqual([]);
    const audit = await t.ctx.database.db
      .selectFrom('auditEvents')
      .select('action')
      .where('resourceId', '=', agent.id)
      .orderBy('createdAt')
      .execute();
    expect(audit.map((a) => a.action)).toEqual(['agent.create', 'agent.destroy']);
  });

  it('authenticates the Agent by its HMAC token, on its own endpoints only, until it is destroyed', async () => {
    const agent = await running();
    const token = issueAgentToken(t.ctx.secrets.hmacKey, agent.id, 1);
    const bearer = t.newClient();
    const auth = { headers: { authorization: `Bearer ${token}` } };
    expect(await bearer.call(getSelfAgent, {}, auth)).toMatchObject({
      status: 200,
      body: { id: agent.id, accountId: personalId },
    });
    // Agent lifecycle endpoints take a user session only.
    expect(await bearer.callError(getAgent, { params: { id: agent.id } }, auth)).toMatchObject({
      status: 401,
      body: { error: 'unauthorized' },
    });
    expect((await bearer.callError(stopAgent, { params: { id: agent.id } }, auth)).status).toBe(
      401,
    );
    expect((await bearer.callError(getMe, {}, auth)).status).toBe(401);
    // A token of another generation or signed with another key is refused.
    const otherGen = issueAgentToken(t.ctx.secrets.hmacKey, agent.id, 2);
    const otherKey = issueAgentToken(Buffer.alloc(32, 9), agent.id, 1);
    for (const bad of [otherGen, otherKey, 'garbage']) {
      expect(
        (await bearer.callError(getSelfAgent, {}, { headers: { authorization: `Bearer ${bad}` } }))
          .status,
      ).toBe(401);
    }
    expect((await bearer.callError(getSelfAgent)).status).toBe(401);

    // Regenerating hands the machine a new token; the old one stops working.
    const renewed = await t.ctx.agents.agentToken(agent.id, true);
    expect(renewed.token).toBe(otherGen);
    // The machine gets the new token from a job (retried until it lands).
    await waitFor(
      () => t.compute.servers.get(agent.id)?.env.SVC_HMAC_TOKEN === renewed.token,
      10_000,
      'token pushed',
    );
    expect((await bearer.callError(getSelfAgent, {}, auth)).status).toBe(401);
    const renewedAuth = { headers: { authorization: `Bearer ${renewed.token}` } };
    expect((await bearer.call(getSelfAgent, {}, renewedAuth)).status).toBe(200);

    await client.call(deleteAgent, { params: { id: agent.id } });
    expect((await bearer.callError(getSelfAgent, {}, renewedAuth)).status).toBe(401);
    expect((await bearer.callError(getSelfAgent, {}, auth)).status).toBe(401);
    await waitFor(
      async () => (await client.send(getAgent, { params: { id: agent.id } })).status === 404,
    );
    expect((await bearer.callError(getSelfAgent, {}, auth)).status).toBe(401);
  });

  it('reconciles: a move whose job died becomes error with a reason, and servers no live Agent owns are removed', async () => {
    const stuck = await running();
    const longAgo = new Date(Date.now() - 2 * 60 * 60_000);
    await t.ctx.database.db
      .updateTable('agents')
      .set({ state: 'stopping', updatedAt: longAgo })
      .where('id', '=', stuck.id)
      .execute();
    const timedOut = await running();
    // Provisioning gave up, but removing its server failed: the server must still go.
    await t.ctx.database.db
      .updateTable('agents')
      .set({ state: 'error', statusReason: 'provisioning_timeout' })
      .where('id', '=', timedOut.id)
      .execute();
    expect(t.compute.servers.has(timedOut.id)).toBe(true);
    await t.ctx.jobs.enqueue(t.ctx.database.db, AGENT.jobs.reconcile, {});
    await waitFor(async () => (await statusOf(stuck.id)) === 'error', 15_000, 'stuck move failed');
    expect((await client.call(getAgent, { params: { id: stuck.id } })).body.statusReason).toBe(
      'stop_timeout',
    );
    await waitFor(
      () => !t.compute.servers.has(timedOut.id),
      15_000,
      'server of a timed-out Agent removed',
    );
    expect(t.compute.servers.has(stuck.id)).toBe(true);
    // From error the user can destroy it.
    expect((await client.call(deleteAgent, { params: { id: stuck.id } })).status).toBe(200);
  });

  it('answers a billing switch outside running and stopped with 409 before any other rule', async () => {
    t.compute.behave('createServer', { latencyMs: 800 });
    const res = await create();
    const patch = await client.callError(setAgentBilling, {
      params: { id: res.body.id },
      body: {
        billingType: 'subscription',
      },
    });
    expect(patch).toMatchObject({ status: 409, body: { error: 'invalid_state' } });
    t.compute.behave('createServer', {});
    await reach(res.body.id, 'running');
  });
});
