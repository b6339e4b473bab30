import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../../test/test-context.js';
import { databaseKinds } from '../../test/test-db.js';
import { withBillingLease } from './billing-lease.repo.js';
import { ProcessorUnavailable } from './payment-processor.js';

describe.each(databaseKinds)('the billing lease on %s', (kind) => {
  let t: TestContext;
  beforeAll(async () => {
    t = await createTestContext(kind);
  });
  afterAll(() => t?.close());

  /** Work that records how many holders overlap. */
  function overlapMeter() {
    const meter = { inFlight: 0, most: 0 };
    const work = async () => {
      meter.inFlight += 1;
      meter.most = Math.max(meter.most, meter.inFlight);
      await sleep(30);
      meter.inFlight -= 1;
    };
    return { meter, work };
  }

  it('lets one holder at a time work on an account, and different accounts side by side', async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    const one = overlapMeter();
    await Promise.all([1, 2, 3, 4].map(() => withBillingLease(t.ctx, a, 5_000, one.work)));
    expect(one.meter.most).toBe(1);
    const two = overlapMeter();
    await Promise.all([a, b].map((id) => withBillingLease(t.ctx, id, 5_000, two.work)));
    expect(two.meter.most).toBe(2);
    // Released: nothing left behind.
    const left = await t.ctx.database.db
      .selectFrom('billingLeases')
      .select('accountId')
      .where('accountId', 'in', [a, b])
      .execute();
    expect(left).toEqual([]);
  });

  it('takes over a lease whose holder died, and gives up on a live one after the wait', async () => {
    const [dead, live] = [randomUUID(), randomUUID()];
    const now = t.clock.now().getTime();
    await t.ctx.database.db
      .insertInto('billingLeases')
      .values([
        { accountId: dead, holder: 'gone', heldUntil: new Date(now - 1) },
        { accountId: live, holder: 'busy', heldUntil: new Date(now + 60_000) },
      ])
      .execute();
    expect(await withBillingLease(t.ctx, dead, 1_000, async () => 'done')).toBe('done');
    await expect(withBillingLease(t.ctx, live, 300, async () => 'done')).rejects.toBeInstanceOf(
      ProcessorUnavailable,
    );
  });
});
