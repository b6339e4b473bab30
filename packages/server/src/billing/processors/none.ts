import type { PaymentProcessor } from '../payment-processor.js';

/** `BILLING_PROVIDER=none`: subscriptions just start and end; the operator marks invoices paid. */
export const noPaymentProcessor: PaymentProcessor = {
  subscriptionsFollowInvoices: true,
  activateSubscription: async () => ({ status: 'active', subscriptionId: null }),
  detachSubscription: async () => {},
  syncSlots: async () => {},
  endSubscriptions: async () => {},
  collectInvoice: async () => ({ providerInvoiceId: null, settled: false }),
};
