import { z } from 'zod';
import { defineJob } from '../jobs/job.js';

/**
 * The billing jobs, declared apart from their handlers (invoices.jobs.ts, payment.jobs.ts) so that
 * a producer (period-close.ts, slot and subscription changes) enqueues them without the handlers'
 * dependencies.
 */

/** Hourly: closes every finished month not yet invoiced. */
export const closePeriod = defineJob({
  name: 'billing.close-period',
  payload: z.object({}),
  cron: '7 * * * *',
  // The next hour's run picks up where a failed one stopped.
  retryLimit: 0,
  // A first close, or one after downtime, may issue months of invoices for every account.
  expireInSeconds: 3600,
  concurrency: 1,
});

/** Hourly with BILLING_PROVIDER=none: subscriptions follow their invoices. */
export const dunning = defineJob({
  name: 'billing.dunning',
  payload: z.object({}),
  cron: '37 * * * *',
  retryLimit: 0,
  concurrency: 1,
});

/**
 * A processor that cannot be reached fails the attempt; it is retried with backoff, from 30 s
 * doubling with jitter, ten times (the last about eight hours after the first failure). Each run
 * starts from what the database says now, so a late run does the latest work, once; the daily
 * sweep (`syncAllSubscriptions`) catches what the last retry still could not do.
 */
const PROCESSOR_RETRIES = { retryLimit: 10, retryDelaySeconds: 30, expireInSeconds: 300 } as const;

/** The processor's subscription of one account follows the account. */
export const syncSubscription = defineJob({
  name: 'billing.sync-subscription',
  payload: z.object({ accountId: z.uuid() }),
  ...PROCESSOR_RETRIES,
});

/** Daily, with a processor: every account it knows is synced again. */
export const syncAllSubscriptions = defineJob({
  name: 'billing.sync-all',
  payload: z.object({}),
  cron: '23 3 * * *',
  retryLimit: 0,
  concurrency: 1,
});

/** Enqueued when an invoice is issued: the processor charges what it must. */
export const collectInvoice = defineJob({
  name: 'billing.collect-invoice',
  payload: z.object({ number: z.number().int().positive() }),
  ...PROCESSOR_RETRIES,
});
