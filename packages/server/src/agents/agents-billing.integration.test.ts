import {
  activateSubscription,
  type BillingType,
  createAgent,
  createOrg,
  deleteAgent,
  deleteSlot,
  getAgent,
  listSlots,
  type MachineState,
  type Region,
  type Size,
  setAgentBilling,
} from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { joinOrganization } from '../../test/mailed-links.js';
import type { TestClient } from '../../test/test-client.js';
import { createTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { databaseKinds } from '../../test/test-db.js';
import { waitFor } from '../../test/wait.js';

describe.each(databaseKinds)('Agent billing and subscription slots on %s', (kind) => {
  let t: TestContext;
  let owner: TestClient;
  let member: TestClient;
  let orgId: string;
  beforeAll(async () => {
    t = await createTestContext(kind);
    owner = t.newClient();
    await signUpUser(owner);
    orgId = (
      await owner.call(createOrg, { body: { name: 'Billing Org', slug: `billing-${kind}` } })
    ).body.id;
    await owner.call(activateSubscription, { params: { id: orgId } });
    member = t.newClient();
    const { user } = await signUpUser(member);
    await joinOrganization(t, { owner, orgId, member, email: user.email, role: 'member' });
  });
  afterAll(() => t?.close());

  const reach = (id: string, state: MachineState) =>
    waitFor(
      async () => (await owner.call(getAgent, { params: { id } })).body.status === state,
      15_000,
      state,
    );
  const running = async (body: { billingType?: BillingType; size?: Size; region?: Region }) => {
    const res = await owner.call(createAgent, {
      body: {
        name: 'billed',
        size: 'small',
        region: 'eu',
        billingType: 'metered',
        accountId: orgId,
        ...body,
      },
    });
    await reach(res.body.id, 'running');
    return res.body;
  };
  const slots = async () => (await owner.call(listSlots, { params: { id: orgId } })).body;
  const billingInput = (id: string, billingType: BillingType) => ({
    params: { id },
    body: { billingType },
  });
  const billing = (id: string, billingType: BillingType, as = owner) =>
    as.call(setAgentBilling, billingInput(id, billingType));
  const billingRefused = (id: string, billingType: BillingType, as = owner) =>
    as.callError(setAgentBilling, billingInput(id, billingType));

  it('takes a slot on create, frees it on switch to metered, reuses it, and adds one only when none is free', async () => {
    const a = await running({ billingType: 'subscription', size: 'medium' });
    expect((await slots()).filter((s) => s.size === 'medium')).toEqual([
      expect.objectContaining({ inUse: true }),
    ]);

    expect(await billing(a.id, 'metered')).toMatchObject({
      status: 200,
      body: { success: true, billingType: 'metered', addedNewSlot: false },
    });
    expect((await slots()).filter((s) => s.size === 'medium')).toEqual([
      expect.objectContaining({ inUse: false }),
    ]);

    const b = await running({ size: 'medium' });
    expect(await billing(b.id, 'subscription')).toMatchObject({
      status: 200,
      body: { billingType: 'subscription', addedNewSlot: false },
    });
    expect(await billing(a.id, 'subscription')).toMatchObject({
      status: 200,
      body: { addedNewSlot: true },
    });
    expect((await slots()).filter((s) => s.size === 'medium').map((s) => s.inUse)).toEqual([
      true,
      true,
    ]);
    // Same billing type again: nothing changes.
    expect(await billing(a.id, 'subscription')).toMatchObject({
      status: 200,
      body: { addedNewSlot: false },
    });
    expect((await owner.call(getAgent, { params: { id: a.id } })).body.billingType).toBe(
      'subscription',
    );
  });

  it("keeps a destroyed subscription Agent's slot, free, until an owner or admin removes it", async () => {
    const a = await running({ billingType: 'subscription', size: 'large' });
    await owner.call(deleteAgent, { params: { id: a.id } });
    await waitFor(
      async () => (await owner.send(getAgent, { params: { id: a.id } })).status === 404,
    );
    const slot = (await slots()).find((s) => s.size === 'large');
    expect(slot).toMatchObject({ inUse: false });
    const input = { params: { id: orgId, slotId: String(slot?.id) } };
    expect((await member.callError(deleteSlot, input)).status).toBe(403);
    expect((await owner.call(deleteSlot, input)).status).toBe(204);
    expect((await slots()).find((s) => s.id === slot?.id)).toBeUndefined();
    expect((await owner.callError(deleteSlot, input)).status).toBe(404);
  });

  it('refuses to remove a slot in use (409) and hides slots from non-members (404)', async () => {
    await running({ billingType: 'subscription', region: 'us' });
    const used = (await slots()).find((s) => s.inUse);
    expect(
      await owner.callError(deleteSlot, { params: { id: orgId, slotId: String(used?.id) } }),
    ).toMatchObject({
      status: 409,
      body: { error: 'invalid_state' },
    });
    const stranger = t.newClient();
    await signUpUser(stranger);
    expect((await stranger.callError(listSlots, { params: { id: orgId } })).status).toBe(404);
    expect((await member.call(listSlots, { params: { id: orgId } })).status).toBe(200);
  });

  it('needs an active subscription (400 subscription_required) and changes nothing without one', async () => {
    const personal = t.newClient();
    await signUpUser(personal);
    const res = await personal.call(createAgent, {
      body: { name: 'p', size: 'small', region: 'eu', billingType: 'metered' },
    });
    const detail = async () =>
      (await personal.call(getAgent, { params: { id: res.body.id } })).body;
    await waitFor(async () => (await detail()).status === 'running');
    expect(await billingRefused(res.body.id, 'subscription', personal)).toMatchObject({
      status: 400,
      body: { error: 'subscription_required' },
    });
    expect((await detail()).billingType).toBe('metered');
  });

  it('refuses subscription billing for a legacy Agent (400 legacy_cohort) but lets it go metered', async () => {
    const a = await running({});
    await t.ctx.database.db
      .updateTable('agents')
      .set({ cohort: 'legacy', provider: 'fly' })
      .where('id', '=', a.id)
      .execute();
    expect(await billingRefused(a.id, 'subscription')).toMatchObject({
      status: 400,
      body: { error: 'legacy_cohort' },
    });
    expect((await billing(a.id, 'metered')).status).toBe(200);
  });

  it('answers 409 outside running and stopped, and 400 for an unknown billing type', async () => {
    t.compute.behave('createServer', { latencyMs: 1_000 });
    const res = await owner.call(createAgent, {
      body: { name: 'slow', size: 'small', region: 'eu', billingType: 'metered', accountId: orgId },
    });
    expect(await billingRefused(res.body.id, 'subscription')).toMatchObject({
      status: 409,
      body: { error: 'invalid_state' },
    });
    t.compute.behave('createServer', {});
    await reach(res.body.id, 'running');
    // A billing type the schema does not know, sent on purpose.
    expect((await billingRefused(res.body.id, 'free' as BillingType)).status).toBe(400);
    expect((await owner.call(getAgent, { params: { id: res.body.id } })).body.billingType).toBe(
      'metered',
    );
  });
});
