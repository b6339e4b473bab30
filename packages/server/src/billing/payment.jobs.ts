import { z } from 'zod';
import type { Clock } from '../adapters/clock.js';
import type { Database } from '../db/database.js';
import { defineJob } from '../jobs/job.js';
import type { Logger } from '../logger.js';
import { loadIssuedInvoice, recordCollection } from './issued-invoice.js';
import type { PaymentProcessor } from './payment-processor.js';
import type { Prices } from './price-book.js';
import { slotQuantities } from './slot-quantities.js';

/** The payment processor's jobs, by name. */
export const BILLING_JOBS = {
  syncSlots: 'billing.sync-slots',
  cancelSubscription: 'billing.cancel-subscription',
  collectInvoice: 'billing.collect-invoice',
} as const;

/**
 * A processor that cannot be reached fails the attempt; it is retried with backoff, from 30 s
 * doubling with jitter, ten times (the last about eight hours after the first failure). Each run
 * starts from what the database says now, so a late run does the latest work, once.
 */
const RETRIES = { retryLimit: 10, retryDelaySeconds: 30, expireInSeconds: 300 } as const;

export function paymentJobs(deps: {
  database: Database;
  clock: Clock;
  processor: PaymentProcessor;
  prices: Prices;
  log: Logger;
}) {
  const { database, processor } = deps;
  return [
    /** The subscription's items follow the account's slots (while it has a subscription). */
    defineJob({
      name: BILLING_JOBS.syncSlots,
      payload: z.object({ accountId: z.uuid() }),
      ...RETRIES,
      async run({ accountId }) {
        const account = await database.db
          .selectFrom('accounts')
          .select(['id', 'name', 'subscriptionStatus'])
          .where('id', '=', accountId)
          .executeTakeFirst();
        if (!account || account.subscriptionStatus === 'inactive') return;
        const slots = await slotQuantities(database.db, accountId, deps.prices);
        await processor.syncSlots(account, slots);
        deps.log.info({ accountId, cells: slots.length }, 'slots synced to the payment processor');
      },
    }),
    defineJob({
      name: BILLING_JOBS.cancelSubscription,
      payload: z.object({ accountId: z.uuid(), subscriptionId: z.string().min(1) }),
      ...RETRIES,
      async run({ accountId, subscriptionId }) {
        await processor.cancelSubscription(accountId, subscriptionId);
        deps.log.info({ accountId, subscriptionId }, 'subscription cancelled at the processor');
      },
    }),
    /** Enqueued when an invoice is issued: the processor charges what it must. */
    defineJob({
      name: BILLING_JOBS.collectInvoice,
      payload: z.object({ number: z.number().int().positive() }),
      ...RETRIES,
      async run({ number }) {
        const invoice = await loadIssuedInvoice(database.db, number);
        if (!invoice) throw new Error(`invoice ${number} not found`);
        const outcome = await processor.collectInvoice(invoice);
        await recordCollection(database.db, number, outcome, deps.clock.now());
        deps.log.info({ number, ...outcome }, 'invoice handed to the payment processor');
      },
    }),
  ];
}
