import { randomUUID } from 'node:crypto';
import type { Usage } from '@svc/contract';
import { createAgent, getAgent, getUsage } from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestClient } from '../../test/test-client.js';
import { createTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { databaseKinds } from '../../test/test-db.js';
import { waitFor } from '../../test/wait.js';

const HOUR = 3_600_000;
/** The service's "now" in this test: mid-month, so periods can start before the month. */
const NOW = Date.UTC(2026, 2, 15, 12);
const MONTH = Date.UTC(2026, 2, 1);

describe.each(databaseKinds)('Usage so far this month on %s', (kind) => {
  let t: TestContext;
  let owner: TestClient;
  let accountId: string;
  let otherAccountId: string;
  let agentId: string;
  let movedId: string;
  beforeAll(async () => {
    t = await createTestContext(kind);
    t.clock.advance(NOW - Date.now());
    owner = t.newClient();
    accountId = (await signUpUser(owner)).account.id;
    const other = t.newClient();
    otherAccountId = (await signUpUser(other)).account.id;
    const create = async (client: TestClient, name: string) => {
      const res = await client.call(createAgent, {
        body: {
          name,
          size: 'medium',
          region: 'us',
          billingType: 'metered',
        },
      });
      expect(res.status).toBe(201);
      await waitFor(
        async () =>
          (await client.call(getAgent, { params: { id: res.body.id } })).body.status === 'running',
        15_000,
        'running',
      );
      return res.body.id as string;
    };
    agentId = await create(owner, 'Meter me');
    // Stands for a machine moved from this account to the other one.
    movedId = await create(other, 'Moved away');
    // Provisioning opened periods at "now"; this test writes the Agent's history itself.
    await t.ctx.database.db.deleteFrom('usagePeriods').execute();
  });
  afterAll(() => t?.close());

  const period = (
    resourceId: string,
    billingType: 'metered' | 'subscription',
    from: number,
    to: number | null,
    { account = accountId, state = 'running' } = {},
  ) =>
    t.ctx.database.db
      .insertInto('usagePeriods')
      .values({
        id: randomUUID(),
        resourceKind: 'agent',
        resourceId,
        accountId: account,
        state,
        billingType,
        size: 'medium',
        region: 'us',
        startedAt: new Date(from),
        endedAt: to === null ? null : new Date(to),
      })
      .execute();

  it('counts each machine from the start of the month, split by billing type', async () => {
    // The Agent: metered since before the month, an hour in error (not charged), subscription
    // for the last two hours (open).
    await period(agentId, 'metered', MONTH - 48 * HOUR, NOW - 3 * HOUR);
    await period(agentId, 'metered', NOW - 3 * HOUR, NOW - 2 * HOUR, { state: 'error' });
    await period(agentId, 'subscription', NOW - 2 * HOUR, null);
    // A machine moved to another account after an hour here: its hour stays, its name goes.
    await period(movedId, 'metered', MONTH + 2 * HOUR, MONTH + 3 * HOUR);
    await period(movedId, 'metered', MONTH + 3 * HOUR, null, { account: otherAccountId });
    // A destroyed machine: its row is gone, half an hour of metered use stays.
    const gone = randomUUID();
    await period(gone, 'metered', MONTH + HOUR, MONTH + 1.5 * HOUR);
    // Neither counts: ended before the month, or on another account.
    await period(randomUUID(), 'metered', MONTH - 5 * HOUR, MONTH - HOUR);
    await period(randomUUID(), 'metered', MONTH, null, { account: otherAccountId });
    // Destroying is not charged: charges stop when the destroy is asked for.
    await period(gone, 'metered', MONTH + 1.5 * HOUR, MONTH + 2 * HOUR, { state: 'destroying' });

    const res = await owner.call(getUsage, { params: { id: accountId } });
    expect(res.status).toBe(200);
    const usage = res.body as Usage;
    expect(usage.periodStart).toBe(new Date(MONTH).toISOString());
    const asOf = Date.parse(usage.asOf);
    expect(asOf).toBeGreaterThanOrEqual(NOW);
    const byId = new Map(usage.resources.map((r) => [r.resourceId, r]));
    expect(byId.size).toBe(3);
    expect(byId.get(agentId)).toEqual({
      resourceKind: 'agent',
      resourceId: agentId,
      name: 'Meter me',
      size: 'medium',
      region: 'us',
      meteredSeconds: (NOW - 3 * HOUR - MONTH) / 1000,
      subscriptionSeconds: Math.floor((asOf - (NOW - 2 * HOUR)) / 1000),
      open: true,
    });
    expect(byId.get(movedId)).toMatchObject({
      name: null,
      meteredSeconds: 3600,
      subscriptionSeconds: 0,
      open: false,
    });
    expect(byId.get(gone)).toMatchObject({
      name: null,
      meteredSeconds: 1800,
      subscriptionSeconds: 0,
      open: false,
    });
  });

  it("hides an account's usage from non-members (404)", async () => {
    const stranger = t.newClient();
    await signUpUser(stranger);
    expect((await stranger.callError(getUsage, { params: { id: accountId } })).status).toBe(404);
    expect((await t.newClient().callError(getUsage, { params: { id: accountId } })).status).toBe(
      401,
    );
  });
});
