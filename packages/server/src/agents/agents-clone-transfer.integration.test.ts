import type { Agent, MachineState } from '@svc/contract';
import {
  activateSubscription,
  cloneAgent,
  createAgent,
  createOrg,
  deleteAgent,
  getAgent,
  listSlots,
  restartAgent,
  stopAgent,
  transferAgent,
} from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestClient } from '../../test/test-client.js';
import { createTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { databaseKinds } from '../../test/test-db.js';
import { waitFor } from '../../test/wait.js';

describe.each(databaseKinds)('clone and transfer on %s', (kind) => {
  let t: TestContext;
  let user: TestClient;
  let personalId: string;
  let billedOrg: string;
  let unbilledOrg: string;
  let foreignOrg: string;
  let n = 0;
  beforeAll(async () => {
    t = await createTestContext(kind, { env: { PROVISION_TIMEOUT_MS: '60000' } });
    user = t.newClient();
    personalId = (await signUpUser(user)).account.id;
    const org = async (as: TestClient, billed: boolean) => {
      n += 1;
      const id = (await as.call(createOrg, { body: { name: `Org ${n}`, slug: `ct-${kind}-${n}` } }))
        .body.id as string;
      if (billed) await as.call(activateSubscription, { params: { id } });
      return id;
    };
    billedOrg = await org(user, true);
    unbilledOrg = await org(user, false);
    const other = t.newClient();
    await signUpUser(other);
    foreignOrg = await org(other, true);
  });
  afterAll(() => t?.close());

  const get = async (id: string) => (await user.call(getAgent, { params: { id } })).body as Agent;
  const reach = (id: string, state: MachineState) =>
    waitFor(async () => (await get(id)).status === state, 15_000, state);
  const running = async (body: Record<string, unknown> = {}) => {
    const res = await user.call(createAgent, {
      body: {
        name: 'source',
        size: 'medium',
        region: 'us',
        billingType: 'metered',
        ...body,
      },
    });
    expect(res.status).toBe(201);
    await reach(res.body.id, 'running');
    return res.body as Agent;
  };
  const cloneInput = (id: string, body: Record<string, unknown>) => ({
    params: { id },
    body: { name: 'copy', size: 'medium' as const, billingType: 'metered' as const, ...body },
  });
  /** A clone expected to be accepted (201), its body typed. */
  const cloned = (id: string, body: Record<string, unknown> = {}) =>
    user.call(cloneAgent, cloneInput(id, body));
  /** A clone whose answer the test checks itself. */
  const clone = (id: string, body: Record<string, unknown> = {}) =>
    user.send(cloneAgent, cloneInput(id, body));

  it('clones a running or stopped Agent: 201 provisioning, same region and provider, disk copied', async () => {
    const source = await running();
    const res = await cloned(source.id, { size: 'large' });
    expect(res).toMatchObject({
      status: 201,
      body: {
        status: 'provisioning',
        region: 'us',
        provider: source.provider,
        size: 'large',
        accountId: personalId,
      },
    });
    await reach(res.body.id, 'running');
    expect(t.compute.servers.get(res.body.id)?.sourceServerId).toBe(source.id);

    await user.call(stopAgent, { params: { id: source.id } });
    await reach(source.id, 'stopped');
    const fromStopped = await cloned(source.id);
    expect(fromStopped.status).toBe(201);
    await reach(fromStopped.body.id, 'running');
  });

  it('refuses a legacy source (400), a smaller size (400), a busy source (409) and a foreign account (404)', async () => {
    const source = await running();
    expect(await clone(source.id, { size: 'small' })).toMatchObject({
      status: 400,
      body: { error: 'size_downgrade' },
    });
    expect((await clone(source.id, { accountId: foreignOrg })).status).toBe(404);
    await t.ctx.database.db
      .updateTable('agents')
      .set({ cohort: 'legacy', provider: 'fly' })
      .where('id', '=', source.id)
      .execute();
    expect(await clone(source.id)).toMatchObject({ status: 400, body: { error: 'legacy_cohort' } });

    t.compute.behave('createServer', { latencyMs: 1_000 });
    const provisioning = (
      await user.call(createAgent, {
        body: {
          name: 'p',
          size: 'small',
          region: 'eu',
          billingType: 'metered',
        },
      })
    ).body;
    expect(await clone(provisioning.id, { size: 'small' })).toMatchObject({
      status: 409,
      body: { error: 'invalid_state' },
    });
    t.compute.behave('createServer', {});
    await reach(provisioning.id, 'running');
  });

  it('holds the source "being cloned" until the disk is copied: DELETE, stop, restart and a second clone get 409', async () => {
    const source = await running();
    t.compute.behave('createServer', { hang: true });
    let copy: Agent;
    try {
      const res = await cloned(source.id);
      expect(res.status).toBe(201);
      copy = res.body;
      for (const [action, attempt] of [
        ['destroy', () => user.send(deleteAgent, { params: { id: source.id } })],
        ['stop', () => user.send(stopAgent, { params: { id: source.id } })],
        ['restart', () => user.send(restartAgent, { params: { id: source.id } })],
        ['clone', () => clone(source.id)],
      ] as const) {
        // The answer says why, not only that it was refused.
        expect(await attempt()).toMatchObject({
          status: 409,
          body: {
            error: 'invalid_state',
            detail: `cannot ${action} the Agent while it is being cloned`,
          },
        });
      }
      expect((await get(source.id)).status).toBe('running');
    } finally {
      t.compute.behave('createServer', {});
      t.compute.release();
    }
    await reach(copy.id, 'running');
    expect((await user.call(stopAgent, { params: { id: source.id } })).status).toBe(200);
    await reach(source.id, 'stopped');
  });

  it('lets exactly one of several concurrent clones of one source through', async () => {
    const source = await running();
    t.compute.behave('createServer', { latencyMs: 500 });
    const results = await Promise.all(Array.from({ length: 5 }, () => clone(source.id)));
    t.compute.behave('createServer', {});
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409]);
    const winner = results.find((r) => r.status === 201)?.body as Agent;
    await reach(winner.id, 'running');
  });

  it('transfers to an organization with active billing: 200, metered, usage split, audited on both sides', async () => {
    const agent = await running({ accountId: billedOrg, billingType: 'subscription' });
    const res = await user.callError(transferAgent, {
      params: { id: agent.id },
      body: {
        targetAccountId: unbilledOrg,
      },
    });
    expect(res).toMatchObject({ status: 400, body: { error: 'target_billing_inactive' } });
    const otherBilled = (
      await user.call(createOrg, { body: { name: 'Second', slug: `ct-${kind}-second` } })
    ).body.id;
    await user.call(activateSubscription, { params: { id: otherBilled } });
    const moved = await user.call(transferAgent, {
      params: { id: agent.id },
      body: {
        targetAccountId: otherBilled,
      },
    });
    expect(moved).toMatchObject({
      status: 200,
      body: { id: agent.id, accountId: otherBilled, billingType: 'metered', status: 'running' },
    });
    // One info line, for the transfer that happened (not the refused one).
    const logged = t.logs
      .entries()
      .filter((entry) => entry.agentId === agent.id && entry.move === 'transfer');
    expect(logged).toEqual([
      expect.objectContaining({ level: 30, accountId: otherBilled, driver: agent.provider }),
    ]);
    const slots = (await user.call(listSlots, { params: { id: billedOrg } })).body;
    expect(slots).toEqual([expect.objectContaining({ inUse: false })]);
    const periods = await t.ctx.database.db
      .selectFrom('usagePeriods')
      .select(['accountId', 'billingType', 'startedAt', 'endedAt'])
      .where('resourceId', '=', agent.id)
      .orderBy('seq')
      .execute();
    const last = periods.at(-1);
    const before = periods.at(-2);
    expect(last).toMatchObject({ accountId: otherBilled, billingType: 'metered', endedAt: null });
    expect(before).toMatchObject({ accountId: billedOrg, billingType: 'subscription' });
    expect(before?.endedAt?.getTime()).toBe(last?.startedAt.getTime());
    const audit = await t.ctx.database.db
      .selectFrom('auditEvents')
      .select('accountId')
      .where('resourceId', '=', agent.id)
      .where('action', '=', 'agent.transfer')
      .execute();
    expect(audit.map((a) => a.accountId).sort()).toEqual([billedOrg, otherBilled].sort());
  });

  it('refuses transfers by the decided codes and changes nothing', async () => {
    const agent = await running({ accountId: billedOrg });
    const transfer = (targetAccountId: string) =>
      user.send(transferAgent, { params: { id: agent.id }, body: { targetAccountId } });
    expect(await transfer(personalId)).toMatchObject({
      status: 400,
      body: { error: 'target_not_organization' },
    });
    expect(await transfer(unbilledOrg)).toMatchObject({
      status: 400,
      body: { error: 'target_billing_inactive' },
    });
    expect(await transfer(foreignOrg)).toMatchObject({ status: 403, body: { error: 'forbidden' } });
    expect(await transfer(billedOrg)).toMatchObject({
      status: 400,
      body: { error: 'invalid_request' },
    });
    expect((await transfer(crypto.randomUUID())).status).toBe(404);
    expect(
      (
        await user.callError(transferAgent, {
          params: { id: agent.id },
          body: { targetAccountId: 'x' },
        })
      ).status,
    ).toBe(400);
    t.compute.behave('powerOff', { latencyMs: 800 });
    await user.call(stopAgent, { params: { id: agent.id } });
    const second = (
      await user.call(createOrg, { body: { name: 'Third', slug: `ct-${kind}-third` } })
    ).body.id;
    await user.call(activateSubscription, { params: { id: second } });
    expect(await transfer(second)).toMatchObject({ status: 409, body: { error: 'invalid_state' } });
    t.compute.behave('powerOff', {});
    await reach(agent.id, 'stopped');
    expect((await get(agent.id)).accountId).toBe(billedOrg);
  });
});
