import { z } from 'zod';
import { defineJob } from '../jobs/job.js';
import type { BillingService } from './billing.service.js';
import type { PaymentProcessor } from './payment-processor.js';

/**
 * `billing.close-period`, hourly: closes every finished month not yet invoiced (a month closes
 * a few minutes after it ends, period-close.ts). `billing.dunning`, hourly with
 * BILLING_PROVIDER=none: subscriptions follow their invoices (dunning.ts); with a processor, its
 * webhooks move them instead, and the job does nothing.
 */
export function invoicesJobs(deps: {
  billing: Pick<BillingService, 'closePeriods' | 'runDunning'>;
  processor: Pick<PaymentProcessor, 'subscriptionsFollowInvoices'>;
}) {
  return [
    defineJob({
      name: 'billing.close-period',
      payload: z.object({}),
      cron: '7 * * * *',
      // The next hour's run picks up where a failed one stopped.
      retryLimit: 0,
      // A first close, or one after downtime, may issue months of invoices for every account.
      expireInSeconds: 3600,
      concurrency: 1,
      async run() {
        await deps.billing.closePeriods();
      },
    }),
    defineJob({
      name: 'billing.dunning',
      payload: z.object({}),
      cron: '37 * * * *',
      retryLimit: 0,
      concurrency: 1,
      async run() {
        if (!deps.processor.subscriptionsFollowInvoices) return;
        await deps.billing.runDunning();
      },
    }),
  ];
}
