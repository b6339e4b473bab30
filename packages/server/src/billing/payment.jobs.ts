import type { Clock } from '../adapters/clock.js';
import type { Prices } from '../config/price-book.js';
import type { Database } from '../db/database.js';
import { handleJob, type JobRun } from '../jobs/job.js';
import type { JobQueue } from '../jobs/queue.js';
import type { Logger } from '../logger.js';
import { collectInvoice, syncAllSubscriptions, syncSubscription } from './billing.job-types.js';
import { customerAccounts } from './billing-customers.repo.js';
import { withBillingLease } from './billing-lease.repo.js';
import { loadIssuedInvoice, recordCollection } from './issued-invoice.js';
import type { PaymentProcessor } from './payment-processor.js';
import { slotQuantities } from './slot-quantities.js';
import { findSubscriber } from './subscription.repo.js';

type Jobs = Pick<JobQueue, 'enqueue'>;

/**
 * The processor's subscription of the account follows it (a slot change, a deactivation, a
 * deletion, a failed activation): enqueued in the transaction of the change. One queued job per
 * account is enough: it reads the account when it runs.
 */
export const syncSubscriptionLater = (
  tx: Parameters<Jobs['enqueue']>[0],
  jobs: Jobs,
  accountId: string,
) => jobs.enqueue(tx, syncSubscription, { accountId }, { singletonKey: accountId });

/** How long a job waits for another process's work on the same account before retrying. */
const LEASE_WAIT_MS = 30_000;

/** Accounts read per page by the sweep. */
const SWEEP_PAGE = 500;

export function paymentJobs(deps: {
  database: Database;
  clock: Clock;
  jobs: Jobs;
  processor: PaymentProcessor;
  prices: Prices;
  log: Logger;
}) {
  const { database, processor, log } = deps;

  /** A failure on the last attempt is logged as an error: only the daily sweep is left. */
  async function reportingGiveUp(run: JobRun, what: object, work: () => Promise<void>) {
    try {
      await work();
    } catch (error) {
      if (run.isLastAttempt) {
        log.error({ ...what, err: error }, 'payment processor work gave up after its retries');
      }
      throw error;
    }
  }

  return [
    /**
     * An account whose subscription is not inactive: the processor's subscription has its slots.
     * An inactive or deleted one: no live subscription at the processor.
     */
    handleJob(syncSubscription, ({ accountId }, run) =>
      reportingGiveUp(run, { accountId }, () =>
        withBillingLease(deps, accountId, LEASE_WAIT_MS, async () => {
          const account = await findSubscriber(database.db, accountId);
          if (!account || account.subscriptionStatus === 'inactive') {
            await processor.endSubscriptions(accountId);
            log.info({ accountId }, 'no live subscription at the payment processor');
            return;
          }
          const slots = await slotQuantities(database.db, accountId, deps.prices);
          await processor.syncSlots(account, slots);
          log.info({ accountId, cells: slots.length }, 'slots synced to the payment processor');
        }),
      ),
    ),
    /** Daily, with a processor: every account it knows is synced again. */
    handleJob(syncAllSubscriptions, async () => {
      // Without subscriptions at the processor there is nothing to sync.
      if (processor.subscriptionsFollowInvoices) return;
      let after: string | undefined;
      for (;;) {
        const page = await customerAccounts(database.db, after, SWEEP_PAGE);
        if (page.length === 0) break;
        await database.transaction(async (tx) => {
          for (const accountId of page) await syncSubscriptionLater(tx, deps.jobs, accountId);
        });
        after = page.at(-1);
      }
    }),
    /** Enqueued when an invoice is issued: the processor charges what it must. */
    handleJob(collectInvoice, ({ number }, run) =>
      reportingGiveUp(run, { number }, async () => {
        const invoice = await loadIssuedInvoice(database.db, number);
        if (!invoice) throw new Error(`invoice ${number} not found`);
        // Paid meanwhile (the operator recorded a payment): nothing to charge.
        if (invoice.status !== 'open') return;
        const outcome = await processor.collectInvoice(invoice);
        await recordCollection(database.db, number, outcome, deps.clock.now());
        log.info({ number, ...outcome }, 'invoice handed to the payment processor');
      }),
    ),
  ];
}
