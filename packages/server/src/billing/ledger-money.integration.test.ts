import type { Agent, MachineState } from '@svc/contract';
import {
  activateSubscription,
  createAgent,
  createOrg,
  deleteAgent,
  getAgent,
  restartAgent,
  setAgentBilling,
  startAgent,
  stopAgent,
  transferAgent,
  updateAgent,
} from '@svc/contract';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestClient } from '../../test/test-client.js';
import { createTestContext, signUpUser, type TestContext } from '../../test/test-context.js';
import { databaseKinds } from '../../test/test-db.js';
import { waitFor } from '../../test/wait.js';
import { accountLedger } from './ledger.repo.js';
import { billLines, monthStart, nextMonthStart } from './money.js';

/** What the test does to an Agent, `afterMs` after the previous step (the service's clock). */
type Step = {
  afterMs: number;
  action: 'stop' | 'idle' | 'start' | 'restart' | 'metered' | 'subscription' | 'transfer';
};

const step: fc.Arbitrary<Step> = fc.record({
  afterMs: fc.integer({ min: 0, max: 6 * 3_600_000 }),
  action: fc.constantFrom(
    'stop' as const,
    'idle' as const,
    'start' as const,
    'restart' as const,
    'metered' as const,
    'subscription' as const,
    'transfer' as const,
  ),
});

/** What the Agent is charged as from one instant on, as the test expects it. */
interface Expected {
  at: number;
  account: string;
  rate: 'running' | 'paused' | null;
}

/**
 * The ledger the service writes as an Agent lives through random moves, billing switches and
 * transfers, priced by the bill's code: every second from its first run to now is charged
 * exactly once, to the account it was on, at the rate of its state (the expectation is kept here,
 * step by step, apart from the service's periods).
 */
describe.each(databaseKinds)('the ledger and the money on %s', (kind) => {
  let t: TestContext;
  let user: TestClient;
  let orgs: [string, string];
  beforeAll(async () => {
    t = await createTestContext(kind);
    // A few hours before a month's end, so lives cross it.
    t.clock.advance(Date.UTC(2026, 4, 31, 20, 0, 0, 250) - t.clock.now().getTime());
    // Every change happens at the instant the test notes it.
    t.clock.freeze();
    user = t.newClient();
    await signUpUser(user);
    const org = async (slug: string) => {
      const id = (await user.call(createOrg, { body: { name: slug, slug: `${slug}-${kind}` } }))
        .body.id as string;
      await user.call(activateSubscription, { params: { id } });
      return id;
    };
    orgs = [await org('ledger-a'), await org('ledger-b')];
  });
  afterAll(() => t?.close());

  const get = async (id: string) => (await user.call(getAgent, { params: { id } })).body as Agent;
  const reach = (id: string, state: MachineState) =>
    waitFor(async () => (await get(id)).status === state, 15_000, state);

  it('charges every second once, to the right account, at the right rate', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 7 }), async (steps) => {
        const created = await user.call(createAgent, {
          body: {
            name: 'ledger',
            size: 'small',
            region: 'eu',
            billingType: 'metered',
            accountId: orgs[0],
          },
        });
        expect(created.status).toBe(201);
        const id = created.body.id as string;
        await reach(id, 'running');
        let account = orgs[0];
        let billing: 'metered' | 'subscription' = 'metered';
        let state: 'running' | 'stopped' = 'running';
        const expected: Expected[] = [];
        const note = () =>
          expected.push({
            at: t.clock.now().getTime(),
            account,
            rate: billing === 'subscription' ? null : state === 'running' ? 'running' : 'paused',
          });
        note();
        for (const { afterMs, action } of steps) {
          t.clock.advance(afterMs);
          if (action === 'stop' && state === 'running') {
            expect((await user.call(stopAgent, { params: { id } })).status).toBe(200);
            await reach(id, 'stopped');
            state = 'stopped';
          } else if (action === 'idle' && state === 'running') {
            // Nobody uses it for its idle time: the service stops it as a person's stop would.
            const idle = { idleStopMinutes: 1 };
            await user.call(updateAgent, { params: { id }, body: idle });
            t.clock.advance(60_000);
            await t.ctx.agents.stopIdle();
            await reach(id, 'stopped');
            expect((await get(id)).stoppedReason).toBe('idle');
            // Not again after a later start, where the scheduled sweep could run at any time.
            await user.call(updateAgent, { params: { id }, body: { idleStopMinutes: 0 } });
            state = 'stopped';
          } else if (action === 'start' && state === 'stopped') {
            expect((await user.call(startAgent, { params: { id } })).status).toBe(200);
            await reach(id, 'running');
            state = 'running';
          } else if (action === 'restart' && state === 'running') {
            expect((await user.call(restartAgent, { params: { id } })).status).toBe(200);
            await reach(id, 'running');
          } else if (action === 'metered' || action === 'subscription') {
            const res = await user.call(setAgentBilling, {
              params: { id },
              body: { billingType: action },
            });
            expect(res.status).toBe(200);
            billing = action;
          } else if (action === 'transfer') {
            const target = account === orgs[0] ? orgs[1] : orgs[0];
            const res = await user.call(transferAgent, {
              params: { id },
              body: { targetAccountId: target },
            });
            expect(res.status).toBe(200);
            account = target;
            billing = 'metered';
          }
          note();
        }
        t.clock.advance(1_500);
        const end = t.clock.now();
        // The bill's code, over every month and account the life touched.
        const billed = new Map<string, number>();
        const from = monthStart(new Date(expected[0]?.at ?? 0));
        for (const accountId of orgs) {
          for (
            let periodStart = from;
            periodStart < end;
            periodStart = nextMonthStart(periodStart)
          ) {
            const periodEnd = nextMonthStart(periodStart);
            const asOf = end < periodEnd ? end : periodEnd;
            const ledger = await accountLedger(t.ctx.database.db, accountId, periodStart, asOf);
            const own = ledger.periods.filter((p) => p.resourceId === id);
            const window = { periodStart, periodEnd, asOf };
            for (const line of billLines(t.ctx.config.billing.prices, window, own, [])) {
              if (line.kind !== 'metered') continue;
              const key = `${accountId}/${line.rate}`;
              billed.set(key, (billed.get(key) ?? 0) + line.seconds);
            }
          }
        }
        // The expectation: each second to the status noted last at or before its end.
        const want = new Map<string, number>();
        for (const [index, e] of expected.entries()) {
          const until = expected[index + 1]?.at ?? end.getTime();
          const seconds = Math.floor(until / 1000) - Math.floor(e.at / 1000);
          if (e.rate === null || seconds === 0) continue;
          const key = `${e.account}/${e.rate}`;
          want.set(key, (want.get(key) ?? 0) + seconds);
        }
        expect(Object.fromEntries(billed)).toEqual(Object.fromEntries(want));
        await user.call(deleteAgent, { params: { id } });
      }),
      { numRuns: 4 },
    );
  }, 240_000);
});
