import { describe, expect, it } from 'vitest';
import type { SubscriptionStatus } from './accounts.js';
import { STANDS_AT, SUBSCRIPTION_MOVES, type SubscriptionMove } from './subscription-moves.js';

// docs/billing.md's moves, written out here rather than read from the code: where each move takes
// the subscription from inactive, active and past due.
const expected: Record<
  SubscriptionMove,
  [SubscriptionStatus, SubscriptionStatus, SubscriptionStatus]
> = {
  invoice_overdue: ['inactive', 'past_due', 'past_due'],
  grace_passed: ['inactive', 'inactive', 'inactive'],
  invoices_paid: ['inactive', 'active', 'active'],
  payment_failed: ['inactive', 'past_due', 'past_due'],
  payment_succeeded: ['inactive', 'active', 'active'],
  stands_active: ['active', 'active', 'active'],
  stands_past_due: ['past_due', 'past_due', 'past_due'],
  stands_inactive: ['inactive', 'inactive', 'inactive'],
  deactivated: ['inactive', 'inactive', 'inactive'],
};

describe('the subscription moves table', () => {
  for (const move of Object.keys(expected) as SubscriptionMove[]) {
    it(`${move} from inactive, active, past due`, () => {
      const row = SUBSCRIPTION_MOVES[move];
      expect([row.inactive, row.active, row.past_due]).toEqual(expected[move]);
    });
  }

  it('names the standing each processor status stands at', () => {
    for (const status of ['inactive', 'active', 'past_due'] as const) {
      expect(SUBSCRIPTION_MOVES[STANDS_AT[status]].active).toBe(status);
    }
  });
});
