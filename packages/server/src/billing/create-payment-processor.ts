import type { Clock } from '../adapters/clock.js';
import type { BillingConfig } from '../config/config.js';
import type { Secrets } from '../config/secrets.js';
import type { Database } from '../db/database.js';
import type { PaymentProcessor } from './payment-processor.js';
import { noPaymentProcessor } from './processors/none.js';
import { createStripeProcessor } from './processors/stripe/stripe-processor.js';

/**
 * The payment processor `BILLING_PROVIDER` names (its keys from the secrets): the one place that
 * asks which is configured; everything else speaks to the port.
 */
export function createPaymentProcessor(
  billing: BillingConfig,
  secrets: Secrets,
  deps: { database: Database; clock: Clock },
): PaymentProcessor {
  if (billing.provider.kind === 'none') return noPaymentProcessor;
  // loadConfig refuses BILLING_PROVIDER=stripe without both keys.
  if (!secrets.stripe) throw new Error('BILLING_PROVIDER=stripe needs its keys');
  return createStripeProcessor({
    ...secrets.stripe,
    ...(billing.provider.apiUrl && { apiUrl: billing.provider.apiUrl }),
    currency: billing.prices.book.currency,
    ...deps,
  });
}
