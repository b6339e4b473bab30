import { randomUUID } from 'node:crypto';
import type { Region, Size } from '@svc/contract';
import { sql } from 'kysely';
import type { Executor } from '../db/database.js';
import { AppError } from '../errors.js';
import type { JobQueue } from '../jobs/queue.js';
import { syncSubscriptionLater } from './payment.jobs.js';

export type Product = 'agent' | 'plain_vm';

type Jobs = Pick<JobQueue, 'enqueue'>;

export interface SlotKind {
  readonly accountId: string;
  readonly product: Product;
  readonly size: Size;
  readonly region: Region;
}

/** Whether an Agent or a Plain VM occupies slot `s`. */
const occupied = sql<boolean>`(exists (select 1 from agents a where a.slot_id = s.id)
  or exists (select 1 from plain_vms v where v.slot_id = s.id))`;

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
  await tx
    .selectFrom('accounts')
    .select('id')
    .where('id', '=', kind.accountId)
    .forUpdate()
    .execute();
  const free = await tx
    .selectFrom('subscriptionSlots as s')
    .select('s.id')
    .where('s.accountId', '=', kind.accountId)
    .where('s.product', '=', kind.product)
    .where('s.size', '=', kind.size)
    .where('s.region', '=', kind.region)
    .where('s.removedAt', 'is', null)
    .where(sql<boolean>`not ${occupied}`)
    .orderBy('s.createdAt')
    .orderBy('s.id')
    .limit(1)
    .forUpdate()
    .skipLocked()
    .executeTakeFirst();
  if (free) return { slotId: free.id, addedNewSlot: false };
  const slotId = randomUUID();
  await tx
    .insertInto('subscriptionSlots')
    .values({ id: slotId, ...kind, createdAt: at })
    .execute();
  // The payment processor's subscription follows the slots: its sync commits with the change.
  await syncSubscriptionLater(tx, jobs, kind.accountId);
  return { slotId, addedNewSlot: true };
}

export const listSlots = (db: Executor, accountId: string) =>
  db
    .selectFrom('subscriptionSlots as s')
    .select(['s.id', 's.product', 's.size', 's.region', 's.createdAt', occupied.as('inUse')])
    .where('s.accountId', '=', accountId)
    .where('s.removedAt', 'is', null)
    .orderBy('s.createdAt')
    .orderBy('s.id')
    .execute();

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
  const slot = await tx
    .selectFrom('subscriptionSlots as s')
    .select(['s.id', occupied.as('inUse')])
    .where('s.id', '=', slotId)
    .where('s.accountId', '=', accountId)
    .where('s.removedAt', 'is', null)
    .forUpdate()
    .executeTakeFirst();
  if (!slot) return 'not_found';
  if (slot.inUse) return 'in_use';
  await tx
    .updateTable('subscriptionSlots')
    .set({ removedAt: at })
    .where('id', '=', slotId)
    .execute();
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
