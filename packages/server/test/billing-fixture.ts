import { randomUUID } from 'node:crypto';
import { collectInvoice } from '../src/billing/billing.job-types.js';
import { insertInvoice, takeInvoiceNumber } from '../src/billing/invoices.repo.js';
import type { Database, Executor } from '../src/db/database.js';
import { handleJob } from '../src/jobs/job.js';

/**
 * Stands for the payment processor's `billing.collect-invoice` while a test context has none of
 * its own: the period close enqueues it in the issuing transaction.
 */
export const collectInvoiceStand = handleJob(collectInvoice, async () => {});

/** One usage period of a machine on an account, written into the ledger directly. */
export function insertPeriod(
  db: Executor,
  period: {
    accountId: string;
    resourceId: string;
    from: number;
    to: number | null;
    state?: string;
    billingType?: 'metered' | 'subscription';
    size?: 'small' | 'medium' | 'large';
    region?: 'eu' | 'us';
  },
) {
  return db
    .insertInto('usagePeriods')
    .values({
      id: randomUUID(),
      resourceKind: 'agent',
      resourceId: period.resourceId,
      accountId: period.accountId,
      state: period.state ?? 'running',
      billingType: period.billingType ?? 'metered',
      size: period.size ?? 'medium',
      region: period.region ?? 'us',
      startedAt: new Date(period.from),
      endedAt: period.to === null ? null : new Date(period.to),
    })
    .execute();
}

/** One subscription slot of an account, held from `from` until `to` (null: still held). */
export function insertSlot(
  db: Executor,
  slot: { accountId: string; from: number; to: number | null; size?: 'small' | 'medium' },
) {
  return db
    .insertInto('subscriptionSlots')
    .values({
      id: randomUUID(),
      accountId: slot.accountId,
      product: 'agent',
      size: slot.size ?? 'small',
      region: 'eu',
      createdAt: new Date(slot.from),
      removedAt: slot.to === null ? null : new Date(slot.to),
    })
    .execute();
}

/** The account's subscription status, as the database holds it. */
export const subscriptionStatusOf = async (db: Executor, accountId: string) =>
  (
    await db
      .selectFrom('accounts')
      .select('subscriptionStatus')
      .where('id', '=', accountId)
      .executeTakeFirstOrThrow()
  ).subscriptionStatus;

/** An open invoice of the account for last month, of one slot line; its number. */
export function insertTestInvoice(database: Database, accountId: string, now: Date) {
  const periodEnd = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const periodStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1));
  return database.transaction(async (tx) => {
    const number = await takeInvoiceNumber(tx);
    await insertInvoice(
      tx,
      {
        number,
        accountId,
        periodStart,
        periodEnd,
        currency: 'EUR',
        minorUnitDigits: 2,
        total: 1200,
        status: 'open',
        issuedAt: now,
        dueAt: new Date(now.getTime() + 14 * 86_400_000),
      },
      [
        {
          kind: 'slot',
          description: 'Agent slot, small, eu',
          product: 'agent',
          size: 'small',
          region: 'eu',
          resourceId: null,
          rate: null,
          quantity: 1,
          seconds: (periodEnd.getTime() - periodStart.getTime()) / 1000,
          unitAmount: 1200,
          amount: 1200,
        },
      ],
    );
    return number;
  });
}
