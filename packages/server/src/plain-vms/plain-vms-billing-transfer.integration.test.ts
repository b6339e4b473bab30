import type { BillingType, PlainVm } from '@svc/contract';
import {
  activateSubscription,
  createAgent,
  createOrg,
  createPlainVm,
  getPlainVm,
  listSlots,
  restartPlainVm,
  setPlainVmBilling,
  stopPlainVm,
  transferPlainVm,
} from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestClient } from '../../test/test-client.js';
import { createTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { databaseKinds } from '../../test/test-db.js';
import { waitFor } from '../../test/wait.js';
import { TRANSFER_NOTE } from './plain-vm-view.js';

describe.each(databaseKinds)('Plain VM billing and transfer on %s', (kind) => {
  let t: TestContext;
  let user: TestClient;
  let personalId: string;
  let billedOrg: string;
  let unbilledOrg: string;
  let foreignOrg: string;
  beforeAll(async () => {
    t = await createTestContext(kind);
    user = t.newClient();
    personalId = (await signUpUser(user)).account.id;
    const org = async (client: TestClient, slug: string, billed: boolean) => {
      const id = (await client.call(createOrg, { body: { name: slug, slug: `${slug}-${kind}` } }))
        .body.id;
      if (billed) await client.call(activateSubscription, { params: { id } });
      return id as string;
    };
    billedOrg = await org(user, 'vm-billed', true);
    unbilledOrg = await org(user, 'vm-unbilled', false);
    const stranger = t.newClient();
    await signUpUser(stranger);
    foreignOrg = await org(stranger, 'vm-foreign', true);
  });
  afterAll(() => t?.close());

  const get = async (id: string) =>
    (await user.call(getPlainVm, { params: { id } })).body as PlainVm;
  const reach = (id: string, state: string) =>
    waitFor(async () => (await get(id)).status === state, 15_000, state);
  const running = async (overrides: Record<string, unknown> = {}) => {
    const res = await user.call(createPlainVm, {
      body: {
        name: 'billed',
        tier: 'medium',
        region: 'us',
        osImageKey: 'alma-10',
        billingType: 'metered',
        access: { passwordEnabled: true, vaultEntryIds: [] },
        accountId: billedOrg,
        ...overrides,
      },
    });
    expect(res.status).toBe(201);
    await reach(res.body.id, 'running');
    return res.body as PlainVm;
  };
  const slots = async (accountId = billedOrg) =>
    (await user.call(listSlots, { params: { id: accountId } })).body as {
      product: string;
      inUse: boolean;
    }[];
  const billing = (id: string, billingType: BillingType) =>
    user.call(setPlainVmBilling, { params: { id }, body: { billingType } });

  it('takes a plain_vm slot, frees it on metered, reuses it, and never hands an Agent slot to a VM', async () => {
    const agent = await user.call(createAgent, {
      body: {
        name: 'agent',
        size: 'medium',
        region: 'us',
        billingType: 'subscription',
        accountId: billedOrg,
      },
    });
    expect(agent.status).toBe(201);
    const vm = await running({ billingType: 'subscription' });
    expect((await slots()).filter((s) => s.product === 'plain_vm')).toEqual([
      expect.objectContaining({ inUse: true }),
    ]);
    expect(await billing(vm.id, 'metered')).toMatchObject({
      status: 200,
      body: { success: true, billingType: 'metered', addedNewSlot: false },
    });
    expect((await slots()).filter((s) => s.product === 'plain_vm')).toEqual([
      expect.objectContaining({ inUse: false }),
    ]);
    expect((await billing(vm.id, 'subscription')).body.addedNewSlot).toBe(false);
    const second = await running();
    expect((await billing(second.id, 'subscription')).body.addedNewSlot).toBe(true);
    expect((await slots()).filter((s) => s.product === 'plain_vm').map((s) => s.inUse)).toEqual([
      true,
      true,
    ]);
  });

  it('refuses subscription without an active subscription (400) and billing changes outside running/stopped (409)', async () => {
    const vm = await running({ accountId: personalId });
    const subscription = { params: { id: vm.id }, body: { billingType: 'subscription' as const } };
    expect(await user.callError(setPlainVmBilling, subscription)).toMatchObject({
      status: 400,
      body: { error: 'subscription_required' },
    });
    expect((await get(vm.id)).billingType).toBe('metered');
    t.compute.behave('powerOff', { latencyMs: 600 });
    await user.call(stopPlainVm, { params: { id: vm.id } });
    const metered = { params: { id: vm.id }, body: { billingType: 'metered' as const } };
    expect(await user.callError(setPlainVmBilling, metered)).toMatchObject({
      status: 409,
      body: { error: 'invalid_state' },
    });
    t.compute.behave('powerOff', {});
    await reach(vm.id, 'stopped');
    expect((await billing(vm.id, 'metered')).status).toBe(200);
  });

  it('transfers a running VM: 200 with the transferNote, metered, server untouched, usage split, audited on both sides', async () => {
    const vm = await running({ billingType: 'subscription' });
    const target = (await user.call(createOrg, { body: { name: 'Dest', slug: `vm-dest-${kind}` } }))
      .body.id;
    await user.call(activateSubscription, { params: { id: target } });
    const callsBefore = t.compute.calls.filter((c) => c.id === vm.id).length;
    const res = await user.call(transferPlainVm, {
      params: { id: vm.id },
      body: { targetAccountId: target },
    });
    expect(res).toMatchObject({
      status: 200,
      body: {
        id: vm.id,
        accountId: target,
        billingType: 'metered',
        status: 'running',
        transferNote: TRANSFER_NOTE,
      },
    });
    expect(res.body.transferNote).toMatch(/keeps running/);
    expect(res.body.transferNote).toMatch(/metered/);
    expect(res.body.transferNote).toMatch(/not rotated/);
    // The server keeps running: nothing was asked of the provider.
    expect(t.compute.calls.filter((c) => c.id === vm.id)).toHaveLength(callsBefore);
    const periods = await t.ctx.database.db
      .selectFrom('usagePeriods')
      .select(['accountId', 'billingType', 'startedAt', 'endedAt'])
      .where('resourceId', '=', vm.id)
      .orderBy('seq')
      .execute();
    const [before, last] = periods.slice(-2);
    expect(last).toMatchObject({ accountId: target, billingType: 'metered', endedAt: null });
    expect(before).toMatchObject({ accountId: billedOrg, billingType: 'subscription' });
    expect(before?.endedAt?.getTime()).toBe(last?.startedAt.getTime());
    const audit = await t.ctx.database.db
      .selectFrom('auditEvents')
      .select('accountId')
      .where('resourceId', '=', vm.id)
      .where('action', '=', 'plain_vm.transfer')
      .execute();
    expect(audit.map((a) => a.accountId).sort()).toEqual([billedOrg, target].sort());
  });

  it('refuses transfers by the decided codes, 400 when not running or stopped, and changes nothing', async () => {
    const vm = await running();
    const transfer = (targetAccountId: string) =>
      user.send(transferPlainVm, { params: { id: vm.id }, body: { targetAccountId } });
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
    const other = (
      await user.call(createOrg, { body: { name: 'Other', slug: `vm-other-${kind}` } })
    ).body.id;
    await user.call(activateSubscription, { params: { id: other } });
    t.compute.behave('reboot', { latencyMs: 600 });
    await user.call(restartPlainVm, { params: { id: vm.id } });
    expect(await transfer(other)).toMatchObject({
      status: 400,
      body: { error: 'not_transferable' },
    });
    t.compute.behave('reboot', {});
    await reach(vm.id, 'running');
    expect((await get(vm.id)).accountId).toBe(billedOrg);
  });
});
