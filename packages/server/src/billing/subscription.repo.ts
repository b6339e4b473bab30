import { SUBSCRIPTION_MOVES, type SubscriptionMove, type SubscriptionStatus } from '@svc/contract';
import type { Executor } from '../db/database.js';

/** The account's subscription status, its row locked until the caller's transaction ends. */
export const lockSubscriptionStatus = (tx: Executor, accountId: string) =>
  tx
    .selectFrom('accounts')
    .select(['id', 'subscriptionStatus', 'subscriptionActive'])
    .where('id', '=', accountId)
    .forUpdate()
    .executeTakeFirst();

/**
 * The one writer of an account's subscription status: applies `move` to the status the caller
 * read (`from`, SUBSCRIPTION_MOVES), as a compare-and-set. Returns the new status, or null when
 * the move changes nothing or the status no longer is `from` (someone moved it first).
 */
export async function moveSubscriptionStatus(
  tx: Executor,
  account: { id: string; subscriptionStatus: SubscriptionStatus },
  move: SubscriptionMove,
  at: Date,
): Promise<SubscriptionStatus | null> {
  const from = account.subscriptionStatus;
  const to = SUBSCRIPTION_MOVES[move][from];
  if (to === from) return null;
  const result = await tx
    .updateTable('accounts')
    .set({ subscriptionStatus: to, updatedAt: at })
    .where('id', '=', account.id)
    .where('subscriptionStatus', '=', from)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n ? to : null;
}

/** The account's name and subscription status, as the processor's jobs read them. */
export const findSubscriber = (db: Executor, accountId: string) =>
  db
    .selectFrom('accounts')
    .select(['id', 'name', 'subscriptionStatus'])
    .where('id', '=', accountId)
    .executeTakeFirst();
