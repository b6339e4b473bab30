import { randomUUID } from 'node:crypto';
import type { Executor } from '../db/database.js';
import { AppError } from '../errors.js';
import type { JobQueue } from '../jobs/queue.js';
import { syncSubscriptionLater } from './payment.jobs.js';
import type { SlotKind } from './slots.repo.js';
import * as repo from './slots.repo.js';

type Jobs = Pick<JobQueue, 'enqueue'>;

/**
 * A slot for one more subscription-billed resource of this kind: a free one if the account has
 * it, else a new one (`addedNewSlot`). Takers of one account queue on its row, so two never get
 * the same slot; the unique index on `slot_id` backs that up.
 */
export async function takeSlot(
  tx: Executor,
  kind: SlotKind,
  at: Date,
  jobs: Jobs,
): Promise<{ slotId: string; addedNewSlot: boolean }> {
  // Serializes slot takers per account: a slot freed and taken concurrently is seen by the next.
  await repo.lockSlotTakers(tx, kind.accountId);
  const free = await repo.takeFreeSlot(tx, kind);
  if (free) return { slotId: free.id, addedNewSlot: false };
  const slotId = randomUUID();
  await repo.insertSlot(tx, slotId, kind, at);
  // The payment processor's subscription follows the slots: its sync commits with the change.
  await syncSubscriptionLater(tx, jobs, kind.accountId);
  return { slotId, addedNewSlot: true };
}

/**
 * Removes a free slot: its charges stop at `at` (the row stays, for the bill), and the payment
 * processor's subscription follows by a job committed with the removal.
 */
export async function removeSlot(
  tx: Executor,
  accountId: string,
  slotId: string,
  at: Date,
  jobs: Jobs,
): Promise<'removed' | 'in_use' | 'not_found'> {
  const slot = await repo.lockHeldSlot(tx, accountId, slotId);
  if (!slot) return 'not_found';
  if (slot.inUse) return 'in_use';
  await repo.markSlotRemoved(tx, slotId, at);
  await syncSubscriptionLater(tx, jobs, accountId);
  return 'removed';
}

/** Subscription billing needs the account's active subscription and a slot of the resource's kind. */
export async function takeSubscriptionSlot(
  tx: Executor,
  account: { id: string; subscriptionActive: boolean },
  kind: Omit<SlotKind, 'accountId'>,
  at: Date,
  jobs: Jobs,
) {
  if (!account.subscriptionActive) throw new AppError('subscription_required');
  return takeSlot(tx, { accountId: account.id, ...kind }, at, jobs);
}

/** The slot a new resource occupies: one for subscription billing, none for metered. */
export const slotForNew = (
  tx: Executor,
  account: { id: string; subscriptionActive: boolean },
  billingType: 'metered' | 'subscription',
  kind: Omit<SlotKind, 'accountId'>,
  at: Date,
  jobs: Jobs,
) =>
  billingType === 'subscription' ? takeSubscriptionSlot(tx, account, kind, at, jobs) : undefined;
