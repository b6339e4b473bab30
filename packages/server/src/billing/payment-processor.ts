import type { InvoiceLine, Product, Region, Size, SubscriptionStatus } from '@svc/contract';

/** One cell's slots on an account: what a processor's subscription item holds. */
export interface SlotQuantity {
  readonly product: Product;
  readonly size: Size;
  readonly region: Region;
  readonly quantity: number;
  /** The cell's monthly price in minor units. */
  readonly monthly: number;
}

/** An issued invoice, as a processor collects it. */
export interface IssuedInvoice {
  readonly number: number;
  readonly accountId: string;
  readonly periodStart: Date;
  readonly periodEnd: Date;
  readonly currency: string;
  readonly total: number;
  readonly lines: readonly InvoiceLine[];
}

/**
 * Who collects the money (`BILLING_PROVIDER`): `none` (the operator marks invoices paid) or
 * `stripe`. Every call may be retried: a processor must make repeats harmless (idempotency keys,
 * lookups before creates). Calls that reach the processor over the network run in jobs, except
 * activation, which the customer waits for.
 */
export interface PaymentProcessor {
  readonly kind: 'none' | 'stripe';
  /** The account's subscription starts: a customer and a subscription at the processor. */
  activateSubscription(account: {
    id: string;
    name: string;
    slots: readonly SlotQuantity[];
  }): Promise<{ status: SubscriptionStatus }>;
  /** The account's subscription ends at the processor. */
  deactivateSubscription(accountId: string): Promise<void>;
  /** The account's slot quantities per cell changed (job). */
  syncSlots(accountId: string, slots: readonly SlotQuantity[]): Promise<void>;
  /** An invoice was issued: collect it (job); the processor's invoice id, if it has one. */
  collectInvoice(invoice: IssuedInvoice): Promise<{ providerInvoiceId: string | null }>;
}
