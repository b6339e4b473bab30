import { activateSubscription, createOrg, deactivateSubscription } from '@svc/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, signUpUser, type TestContext } from '../../test/test-context.js';

// A change of an account's subscription is one info line, once its transaction committed.

describe('the log of a subscription', () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await createTestContext('pglite');
  });
  afterAll(() => t?.close());

  it('logs activate and deactivate once each, with the account and the statuses', async () => {
    const owner = t.newClient();
    await signUpUser(owner);
    const body = { name: 'Logged Org', slug: 'logged-org' };
    const org = (await owner.call(createOrg, { body })).body;
    t.logs.lines.length = 0;
    const params = { id: org.id };
    await owner.call(activateSubscription, { params });
    // Again: nothing moves, nothing is logged.
    await owner.call(activateSubscription, { params });
    await owner.call(deactivateSubscription, { params });

    const moves = t.logs.entries().filter((entry) => entry.cause !== undefined);
    expect(moves).toEqual([
      expect.objectContaining({ level: 30, accountId: org.id, from: 'inactive', to: 'active' }),
      expect.objectContaining({ level: 30, accountId: org.id, from: 'active', to: 'inactive' }),
    ]);
    expect(moves.map((entry) => entry.cause)).toEqual(['activate', 'deactivate']);
    for (const entry of moves) expect(entry.durationMs).toBeGreaterThanOrEqual(0);
  });
});
