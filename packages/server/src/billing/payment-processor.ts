import type { InvoiceLine, Product, Region, Size, SubscriptionStatus } from '@svc/contract';
import type { Executor } from '../db/database.js';

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
  /** The account's name, or its id once the account is gone. */
  readonly accountName: string;
  readonly periodStart: Date;
  readonly periodEnd: Date;
  readonly currency: string;
  readonly total: number;
  /** In their order on the invoice, each with its position (from 0). */
  readonly lines: readonly (InvoiceLine & { readonly position: number })[];
}

/**
 * What a processor's webhook said, in the service's words. `subscription`: the subscription's
 * standing at the processor changed. `invoice_paid` / `invoice_failed`: a payment of one of the
 * processor's invoices succeeded or failed; `invoiceNumbers` are the service's invoices it
 * collects. `ignored`: acknowledged, nothing to do.
 */
export type ProcessorEvent = {
  /** The processor's event id: each is applied once. */
  readonly id: string;
  readonly type: string;
  /** When it happened at the processor: orders events about one subscription. */
  readonly occurredAt: Date;
} & (
  | {
      readonly kind: 'subscription';
      readonly subscriptionId: string;
      readonly status: SubscriptionStatus;
    }
  | {
      readonly kind: 'invoice_paid' | 'invoice_failed';
      readonly customerId: string;
      readonly subscriptionId: string | null;
      readonly providerInvoiceId: string;
      readonly invoiceNumbers: readonly number[];
    }
  | { readonly kind: 'ignored' }
);

/**
 * Who collects the money (`BILLING_PROVIDER`, chosen once in `create-payment-processor.ts`):
 * `none` (processors/none.ts: the operator marks invoices paid) or `stripe` (processors/stripe/). Every call may be retried: a processor must make repeats harmless (idempotency keys,
 * lookups before creates). Calls that reach the processor over the network run in jobs, except
 * activation, which the customer waits for. A processor that cannot be reached throws
 * `ProcessorUnavailable`.
 */
export interface PaymentProcessor {
  /**
   * Whether the service moves subscriptions by their invoices (dunning, the operator's
   * `invoice paid`): a processor with no subscriptions of its own. One with them moves them by its
   * webhooks instead, and the daily sweep syncs them.
   */
  readonly subscriptionsFollowInvoices: boolean;
  /**
   * Activation, while the caller waits: the processor's customer and, once the account has
   * slots, its subscription of them, recorded for the account. Returns where the subscription
   * stands and the one recorded (null: none yet).
   */
  activateSubscription(account: {
    id: string;
    name: string;
    slots: readonly SlotQuantity[];
  }): Promise<{ status: SubscriptionStatus; subscriptionId: string | null }>;
  /**
   * Inside the deactivating transaction: the processor's subscription stops speaking for the
   * account (its later events change nothing); `endSubscriptions` then ends it, in a job.
   */
  detachSubscription(tx: Executor, accountId: string): Promise<void>;
  /**
   * Job, for an account whose subscription is not inactive: the processor's subscription has
   * the slots as its items, made if missing. A subscription made or found here is recorded only
   * while the account is still not inactive.
   */
  syncSlots(account: { id: string; name: string }, slots: readonly SlotQuantity[]): Promise<void>;
  /** Job, for an inactive or deleted account: every live subscription of it is cancelled. */
  endSubscriptions(accountId: string): Promise<void>;
  /**
   * An invoice was issued: collect it (job). Returns the processor's invoice that collects it,
   * if any, and whether it is settled already (nothing left for the processor to charge).
   */
  collectInvoice(
    invoice: IssuedInvoice,
  ): Promise<{ providerInvoiceId: string | null; settled: boolean }>;
  /**
   * Checks a webhook delivery's signature over its raw bytes and reads it; a bad or missing
   * signature throws `AppError('invalid_signature')`. Absent: the processor sends no webhooks.
   */
  readWebhook?(body: Uint8Array, signature: string | undefined): ProcessorEvent;
}

/** The processor could not be reached or failed: nothing was decided, try again later. */
export class ProcessorUnavailable extends Error {
  override name = 'ProcessorUnavailable';
}
