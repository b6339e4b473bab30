import type { Database, Executor } from '../db/database.js';
import { lockSubscriptionStatus } from './subscription.repo.js';

/** An account's customer (and subscription, once it has one) at the payment processor. */
export const findBillingCustomer = (db: Executor, accountId: string) =>
  db
    .selectFrom('billingCustomers')
    .selectAll()
    .where('accountId', '=', accountId)
    .executeTakeFirst();

/**
 * Records the processor's customer of an account, unless one is recorded already; returns the
 * one recorded (a concurrent first try may have recorded its own).
 */
export async function saveCustomer(
  db: Executor,
  row: { accountId: string; provider: string; customerId: string },
  at: Date,
): Promise<string> {
  await db
    .insertInto('billingCustomers')
    .values({ ...row, createdAt: at })
    .onConflict((c) => c.column('accountId').doNothing())
    .execute();
  const saved = await findBillingCustomer(db, row.accountId);
  return saved?.customerId ?? row.customerId;
}

/** The account's subscription is now this one: its events speak for the account from now on. */
export const saveSubscription = (db: Executor, accountId: string, subscriptionId: string) =>
  db
    .updateTable('billingCustomers')
    .set({ subscriptionId, statusEventAt: null })
    .where('accountId', '=', accountId)
    .where((eb) =>
      eb.or([eb('subscriptionId', 'is', null), eb('subscriptionId', '<>', subscriptionId)]),
    )
    .execute();

/**
 * Records the subscription a job made or found, unless the account was deactivated (or deleted)
 * meanwhile; false then. The account's row stays locked till commit, so a deactivation either
 * comes before (nothing recorded) or after (it detaches this subscription).
 */
export const saveSubscriptionUnlessInactive = (
  database: Database,
  accountId: string,
  subscriptionId: string,
) =>
  database.transaction(async (tx) => {
    const account = await lockSubscriptionStatus(tx, accountId);
    if (!account || account.subscriptionStatus === 'inactive') return false;
    await saveSubscription(tx, accountId, subscriptionId);
    return true;
  });

/** Forgets the account's subscription: its events no longer speak for the account. */
export async function detachSubscription(tx: Executor, accountId: string): Promise<void> {
  await tx
    .updateTable('billingCustomers')
    .set({ subscriptionId: null, statusEventAt: null })
    .where('accountId', '=', accountId)
    .execute();
}

/** The row a processor event is about (by customer or subscription), locked for the event. */
export const lockBillingCustomer = (
  tx: Executor,
  by: { customerId: string } | { subscriptionId: string },
) =>
  tx
    .selectFrom('billingCustomers')
    .selectAll()
    .where((eb) =>
      'customerId' in by
        ? eb('customerId', '=', by.customerId)
        : eb('subscriptionId', '=', by.subscriptionId),
    )
    .forUpdate()
    .executeTakeFirst();

export const setStatusEventAt = (tx: Executor, accountId: string, at: Date) =>
  tx
    .updateTable('billingCustomers')
    .set({ statusEventAt: at })
    .where('accountId', '=', accountId)
    .execute();

/** Records an event as handled; false if it already was (a duplicate delivery). */
export async function recordEvent(
  tx: Executor,
  event: { id: string; type: string; occurredAt: Date },
  at: Date,
): Promise<boolean> {
  const inserted = await tx
    .insertInto('billingEvents')
    .values({ id: event.id, type: event.type, occurredAt: event.occurredAt, receivedAt: at })
    .onConflict((c) => c.column('id').doNothing())
    .returning('id')
    .executeTakeFirst();
  return inserted !== undefined;
}

/** Marks the account's open invoices among `numbers` (or collected by `providerInvoiceId`) paid. */
export const markInvoicesPaid = (
  tx: Executor,
  accountId: string,
  match: { numbers: readonly number[]; providerInvoiceId: string },
  at: Date,
) =>
  tx
    .updateTable('invoices')
    .set({ status: 'paid', paidAt: at })
    .where('accountId', '=', accountId)
    .where('status', '=', 'open')
    .where((eb) =>
      eb.or([
        eb('providerInvoiceId', '=', match.providerInvoiceId),
        ...(match.numbers.length > 0 ? [eb('number', 'in', match.numbers)] : []),
      ]),
    )
    .returning(['number', 'total', 'currency'])
    .execute();

/** The accounts with a customer at the processor, a page at a time by id after `afterId`. */
export async function customerAccounts(
  db: Executor,
  afterId: string | undefined,
  limit: number,
): Promise<string[]> {
  let query = db
    .selectFrom('billingCustomers')
    .select('accountId')
    .orderBy('accountId')
    .limit(limit);
  if (afterId) query = query.where('accountId', '>', afterId);
  return (await query.execute()).map((row) => row.accountId);
}
