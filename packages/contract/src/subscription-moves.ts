import type { SubscriptionStatus } from './accounts.js';

/**
 * What moves an account's subscription (docs/billing.md):
 * - `invoice_overdue`, `grace_passed`, `invoices_paid`: where its invoices put it with no payment
 *   processor (dunning, and the operator's `invoice paid`): an open invoice past its due date,
 *   one overdue longer than the grace period, none overdue;
 * - `payment_failed`, `payment_succeeded`: the processor failed or collected one of its invoices;
 * - `stands_active`, `stands_past_due`, `stands_inactive`: the processor's subscription stands
 *   there (its event, or the activation that just asked it);
 * - `deactivated`: its owners or admins (or the operator) ended it.
 */
export type SubscriptionMove =
  | 'invoice_overdue'
  | 'grace_passed'
  | 'invoices_paid'
  | 'payment_failed'
  | 'payment_succeeded'
  | 'stands_active'
  | 'stands_past_due'
  | 'stands_inactive'
  | 'deactivated';

type Moves = Readonly<Record<SubscriptionStatus, SubscriptionStatus>>;

/** Every status staying where it is: the moves below name only what changes. */
const STAY: Moves = { inactive: 'inactive', active: 'active', past_due: 'past_due' };

/**
 * The subscription's moves, as data: for each move, where it takes the subscription from each
 * status (the same status: no change). One guarded writer applies them (a compare-and-set from
 * the status read); an inactive subscription leaves inactive only by the processor's standing,
 * which an activation asks for.
 */
export const SUBSCRIPTION_MOVES: Readonly<Record<SubscriptionMove, Moves>> = {
  invoice_overdue: { ...STAY, active: 'past_due' },
  grace_passed: { ...STAY, active: 'inactive', past_due: 'inactive' },
  invoices_paid: { ...STAY, past_due: 'active' },
  payment_failed: { ...STAY, active: 'past_due' },
  payment_succeeded: { ...STAY, past_due: 'active' },
  stands_active: { inactive: 'active', active: 'active', past_due: 'active' },
  stands_past_due: { inactive: 'past_due', active: 'past_due', past_due: 'past_due' },
  stands_inactive: { inactive: 'inactive', active: 'inactive', past_due: 'inactive' },
  deactivated: { inactive: 'inactive', active: 'inactive', past_due: 'inactive' },
};

/** The move that says the processor's subscription stands at `status`. */
export const STANDS_AT: Readonly<Record<SubscriptionStatus, SubscriptionMove>> = {
  inactive: 'stands_inactive',
  active: 'stands_active',
  past_due: 'stands_past_due',
};
