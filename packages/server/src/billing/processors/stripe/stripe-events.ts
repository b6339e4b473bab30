import type { SubscriptionStatus } from '@svc/contract';
import type Stripe from 'stripe';
import type { ProcessorEvent } from '../../payment-processor.js';

/** Stripe's subscription statuses in the service's words (docs/billing.md). */
export const STATUS: Readonly<Record<string, SubscriptionStatus>> = {
  active: 'active',
  trialing: 'active',
  past_due: 'past_due',
  incomplete: 'past_due',
  canceled: 'inactive',
  unpaid: 'inactive',
  incomplete_expired: 'inactive',
  paused: 'inactive',
};
/** A Stripe event in the service's words (docs/billing.md, "Payment processors"). */
export function toProcessorEvent(event: Stripe.Event): ProcessorEvent {
  const base = { id: event.id, type: event.type, occurredAt: new Date(event.created * 1000) };
  switch (event.type) {
    case 'customer.subscription.updated':
    case 'customer.subscription.deleted': {
      const sub = event.data.object;
      const status =
        event.type === 'customer.subscription.deleted'
          ? 'inactive'
          : (STATUS[sub.status] ?? 'past_due');
      return { ...base, kind: 'subscription', subscriptionId: sub.id, status };
    }
    case 'invoice.paid':
    case 'invoice.payment_failed': {
      const invoice = event.data.object;
      // Only the invoice's own metadata names the service's invoice it collects (the service
      // set it when it made the invoice); its lines' metadata is not read.
      const number = Number(invoice.metadata?.svcInvoiceNumber);
      const numbers = Number.isSafeInteger(number) && number > 0 ? [number] : [];
      // `parent.subscription_details` since API version 2025-03-31; `subscription` before it,
      // for a webhook endpoint pinned to an older version.
      const subscription =
        invoice.parent?.subscription_details?.subscription ??
        (invoice as { subscription?: string | { id?: string } | null }).subscription;
      return {
        ...base,
        kind: event.type === 'invoice.paid' ? 'invoice_paid' : 'invoice_failed',
        customerId: idOf(invoice.customer),
        subscriptionId: subscription ? idOf(subscription) : null,
        providerInvoiceId: invoice.id ?? '',
        invoiceNumbers: numbers,
      };
    }
    default:
      return { ...base, kind: 'ignored' };
  }
}

const idOf = (value: string | { id?: string } | null): string =>
  typeof value === 'string' ? value : (value?.id ?? '');
