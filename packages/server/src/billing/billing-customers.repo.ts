import type { Executor } from '../db/database.js';

/** An account's customer (and subscription, once it has one) at the payment processor. */
export const findBillingCustomer = (db: Executor, accountId: string) =>
  db
    .selectFrom('billingCustomers')
    .selectAll()
    .where('accountId', '=', accountId)
    .executeTakeFirst();

/** Records the processor's customer of an account (a repeat with the same customer is harmless). */
export async function saveCustomer(
  db: Executor,
  row: { accountId: string; provider: string; customerId: string },
  at: Date,
): Promise<void> {
  await db
    .insertInto('billingCustomers')
    .values({ ...row, createdAt: at })
    .onConflict((c) => c.column('accountId').doUpdateSet({ customerId: row.customerId }))
    .execute();
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

/** Forgets the account's subscription; returns the one it had. */
export async function detachSubscription(tx: Executor, accountId: string): Promise<string | null> {
  const row = await tx
    .selectFrom('billingCustomers')
    .select('subscriptionId')
    .where('accountId', '=', accountId)
    .forUpdate()
    .executeTakeFirst();
  if (!row?.subscriptionId) return null;
  await tx
    .updateTable('billingCustomers')
    .set({ subscriptionId: null, statusEventAt: null })
    .where('accountId', '=', accountId)
    .execute();
  return row.subscriptionId;
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
    .returning('number')
    .execute();
