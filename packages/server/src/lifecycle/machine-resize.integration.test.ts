import type { Agent, PlainVm } from '@svc/contract';
import {
  activateSubscription,
  createAgent,
  createOrg,
  createPlainVm,
  getAgent,
  getPlainVm,
  listSlots,
  resizeAgent,
  resizePlainVm,
  setPlainVmBilling,
  stopAgent,
  stopPlainVm,
} from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestClient } from '../../test/test-client.js';
import { createTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { databaseKinds } from '../../test/test-db.js';
import { waitFor } from '../../test/wait.js';

// Resize on the local driver: only a stopped machine, the disk only up, a subscription machine
// into a free slot of the new size (its old slot left free), usage split at the resize's second.

describe.each(databaseKinds)('Resize on %s', (kind) => {
  let t: TestContext;
  let user: TestClient;
  let billedOrg: string;
  beforeAll(async () => {
    t = await createTestContext(kind);
    user = t.newClient();
    await signUpUser(user);
    billedOrg = (await user.call(createOrg, { body: { name: 'rs', slug: `resize-${kind}` } })).body
      .id;
    await user.call(activateSubscription, { params: { id: billedOrg } });
  });
  afterAll(() => t?.close());

  const agentNow = async (id: string) =>
    (await user.call(getAgent, { params: { id } })).body as Agent;
  const vmNow = async (id: string) =>
    (await user.call(getPlainVm, { params: { id } })).body as PlainVm;

  async function stoppedAgent(): Promise<Agent> {
    const body = { name: 'grows', size: 'small', region: 'us', billingType: 'metered' } as const;
    const { id } = (await user.call(createAgent, { body })).body;
    await waitFor(async () => (await agentNow(id)).status === 'running', 15_000, 'running');
    expect(
      await user.callError(resizeAgent, { params: { id }, body: { size: 'medium' } }),
    ).toMatchObject({ status: 409, body: { error: 'invalid_state' } });
    await user.call(stopAgent, { params: { id } });
    await waitFor(async () => (await agentNow(id)).status === 'stopped', 15_000, 'stopped');
    return agentNow(id);
  }

  async function stoppedVm(
    billingType: 'metered' | 'subscription',
    tier: 'small' | 'medium' = 'small',
  ) {
    const { id } = (
      await user.call(createPlainVm, {
        body: {
          name: 'vm',
          tier,
          region: 'us',
          osImageKey: 'alma-10',
          billingType,
          access: { passwordEnabled: true, vaultEntryIds: [] },
          accountId: billedOrg,
        },
      })
    ).body;
    await waitFor(async () => (await vmNow(id)).status === 'running', 15_000, 'running');
    await user.call(stopPlainVm, { params: { id } });
    await waitFor(async () => (await vmNow(id)).status === 'stopped', 15_000, 'stopped');
    return id;
  }

  const periods = (resourceId: string) =>
    t.ctx.database.db
      .selectFrom('usagePeriods')
      .select(['size', 'startedAt', 'endedAt'])
      .where('resourceId', '=', resourceId)
      .orderBy('seq')
      .execute();

  it('resizes a stopped metered Agent, charges the new size from that second, audits it', async () => {
    const { id } = await stoppedAgent();
    const resized = (await user.call(resizeAgent, { params: { id }, body: { size: 'medium' } }))
      .body;
    expect(resized).toMatchObject({ size: 'medium', status: 'stopped' });
    expect(resized.specs).toEqual({ vcpu: 4, ramGb: 8, diskGb: 160 });
    expect((await agentNow(id)).size).toBe('medium');

    const [before, last] = (await periods(id)).slice(-2);
    expect(before).toMatchObject({ size: 'small' });
    expect(last).toMatchObject({ size: 'medium', endedAt: null });
    expect(before?.endedAt?.getTime()).toBe(last?.startedAt.getTime());

    const audit = await t.ctx.database.db
      .selectFrom('auditEvents')
      .select(['data', 'createdAt'])
      .where('resourceId', '=', id)
      .where('action', '=', 'agent.resize')
      .execute();
    expect(audit.map((a) => a.data)).toEqual([{ from: 'small', to: 'medium' }]);
    expect(audit[0]?.createdAt.getTime()).toBe(last?.startedAt.getTime());
  });

  it('refuses a smaller disk with disk_shrink and changes nothing', async () => {
    const { id } = await stoppedAgent();
    await user.call(resizeAgent, { params: { id }, body: { size: 'large' } });
    expect(
      await user.callError(resizeAgent, { params: { id }, body: { size: 'medium' } }),
    ).toMatchObject({ status: 400, body: { error: 'disk_shrink' } });
    expect((await agentNow(id)).size).toBe('large');
  });

  it('resizes a metered Plain VM by tier', async () => {
    const id = await stoppedVm('metered');
    const vm = (await user.call(resizePlainVm, { params: { id }, body: { tier: 'large' } })).body;
    expect(vm.tier).toBe('large');
    expect((await periods(id)).at(-1)).toMatchObject({ size: 'large', endedAt: null });
  });

  it('needs a free slot of the new size for a subscription VM, and leaves its old slot free', async () => {
    const id = await stoppedVm('subscription');
    const vmSlots = async () =>
      (await user.call(listSlots, { params: { id: billedOrg } })).body
        .filter((s) => s.product === 'plain_vm')
        .map((s) => ({ size: s.size, inUse: s.inUse }));
    const refused = await user.callError(resizePlainVm, {
      params: { id },
      body: { tier: 'medium' },
    });
    expect(refused).toMatchObject({ status: 409, body: { error: 'invalid_state' } });
    expect(refused.body.detail).toContain('no free medium subscription slot');
    expect((await vmNow(id)).tier).toBe('small');

    // A medium VM on the subscription switched to metered leaves its medium slot free.
    const other = await stoppedVm('subscription', 'medium');
    await user.call(setPlainVmBilling, { params: { id: other }, body: { billingType: 'metered' } });
    const resized = (await user.call(resizePlainVm, { params: { id }, body: { tier: 'medium' } }))
      .body;
    expect(resized).toMatchObject({ tier: 'medium', billingType: 'subscription' });
    expect((await vmSlots()).sort((a, b) => a.size.localeCompare(b.size))).toEqual([
      { size: 'medium', inUse: true },
      { size: 'small', inUse: false },
    ]);
  });
});
