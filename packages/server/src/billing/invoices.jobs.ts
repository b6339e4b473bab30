import { handleJob } from '../jobs/job.js';
import { closePeriod, dunning } from './billing.job-types.js';
import type { BillingService } from './billing.service.js';
import type { PaymentProcessor } from './payment-processor.js';

/**
 * `closePeriod`, hourly: closes every finished month not yet invoiced (a month closes a few
 * minutes after it ends, period-close.ts). `dunning`, hourly with
 * BILLING_PROVIDER=none: subscriptions follow their invoices (dunning.ts); with a processor, its
 * webhooks move them instead, and the job does nothing.
 */
export function invoicesJobs(deps: {
  billing: Pick<BillingService, 'closePeriods' | 'runDunning'>;
  processor: Pick<PaymentProcessor, 'subscriptionsFollowInvoices'>;
}) {
  return [
    handleJob(closePeriod, async () => {
      await deps.billing.closePeriods();
    }),
    handleJob(dunning, async () => {
      if (!deps.processor.subscriptionsFollowInvoices) return;
      await deps.billing.runDunning();
    }),
  ];
}
