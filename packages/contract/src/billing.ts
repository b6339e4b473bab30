import { z } from 'zod';
import { Region, Size } from './agents.js';
import { Id, Timestamp } from './common.js';
import { defineEndpoint } from './endpoint.js';

/** What a price applies to: an Agent or a Plain VM. */
export const Product = z.enum(['agent', 'plain_vm']);
export type Product = z.infer<typeof Product>;

/** An amount of money in the price book's currency, in its minor unit (cents): never a float. */
export const Money = z.number().int();

/**
 * The prices of one cell (product × size × region), in minor units. `monthly`: one subscription
 * slot for a calendar month. `hourly`: a metered machine while it runs (and while it is stopped on
 * the current cohort). `legacyPausedHourly`: a stopped legacy-cohort Agent (Agents only).
 * `monthlyCap`: the most one metered machine costs an account in a month, if set.
 */
export const PriceCell = z.object({
  product: Product,
  size: Size,
  region: Region,
  monthly: Money.nonnegative(),
  hourly: Money.nonnegative(),
  legacyPausedHourly: Money.nonnegative().nullable(),
  monthlyCap: Money.nonnegative().nullable(),
});
export type PriceCell = z.infer<typeof PriceCell>;

export const PriceBook = z.object({
  /** ISO 4217 code. */
  currency: z.string(),
  /** Digits of the minor unit (2 for EUR: amounts are cents). */
  minorUnitDigits: z.number().int().nonnegative(),
  prices: z.array(PriceCell),
  /**
   * Snapshot storage (backups included: they are snapshots), per GB (10^9 bytes) held for a
   * calendar month, by the second, whatever the machine's size or region.
   */
  snapshotGbMonth: Money.nonnegative(),
});
export type PriceBook = z.infer<typeof PriceBook>;

export const getPrices = defineEndpoint({
  id: 'getPrices',
  method: 'GET',
  path: '/api/prices',
  auth: 'none',
  tag: 'billing',
  summary:
    'The price book: every cell’s slot, hourly and paused prices, and caps, and the snapshot storage price (public).',
  response: { status: 200, body: PriceBook },
  errors: [],
});

export const Slot = z.object({
  id: Id,
  product: Product,
  size: Size,
  region: Region,
  inUse: z.boolean(),
  /** What the slot costs a month, which removing it saves (minor units). */
  monthlyPrice: Money,
  createdAt: Timestamp,
});
export type Slot = z.infer<typeof Slot>;

export const listSlots = defineEndpoint({
  id: 'listSlots',
  method: 'GET',
  path: '/api/accounts/{id}/slots',
  auth: 'session',
  tag: 'billing',
  summary: "The subscription's slots, in use or free, with their prices (any member).",
  params: z.object({ id: Id }),
  response: { status: 200, body: z.array(Slot) },
  errors: [],
});

export const deleteSlot = defineEndpoint({
  id: 'deleteSlot',
  method: 'DELETE',
  path: '/api/accounts/{id}/slots/{slotId}',
  auth: 'session',
  tag: 'billing',
  summary: 'Remove a free slot from the subscription (owners and admins); one in use answers 409.',
  params: z.object({ id: Id, slotId: Id }),
  response: { status: 204 },
  errors: ['invalid_state'],
});

/**
 * One machine's usage in the period: how long it was charged under each billing type (the
 * charged states: running, stopping, stopped, starting, restarting).
 */
export const UsageLine = z.object({
  resourceKind: Product,
  resourceId: Id,
  /** Null once the machine is destroyed or moved to another account; its usage here stays. */
  name: z.string().nullable(),
  size: Size,
  region: Region,
  meteredSeconds: z.number().int().nonnegative(),
  subscriptionSeconds: z.number().int().nonnegative(),
  /** Still counting: the machine is on this account and charged now. */
  open: z.boolean(),
});
export type UsageLine = z.infer<typeof UsageLine>;

export const Usage = z.object({
  /** The start of the calendar month (UTC) the usage is counted from. */
  periodStart: Timestamp,
  asOf: Timestamp,
  resources: z.array(UsageLine),
});
export type Usage = z.infer<typeof Usage>;

export const getUsage = defineEndpoint({
  id: 'getUsage',
  method: 'GET',
  path: '/api/accounts/{id}/usage',
  auth: 'session',
  tag: 'billing',
  summary: "This calendar month's usage so far, by machine (any member).",
  params: z.object({ id: Id }),
  response: { status: 200, body: Usage },
  errors: [],
});

/**
 * One line of a bill (docs/billing.md). `slot`: the slots of one cell, `quantity` of them held now
 * (at the period's end on an invoice), `seconds` the slot-seconds held in the period, `unitAmount`
 * the monthly price. `metered`: one machine at one rate, `seconds` charged at `unitAmount` an
 * hour; `rate` says which. `cap`: the monthly cap of one machine's metered lines (a negative
 * amount). `snapshot`: the snapshot storage of one machine (its snapshots and backups while on this
 * account), `quantity` snapshots held now (at the period's end on an invoice), `seconds` the
 * snapshot-seconds held, `unitAmount` the price of a GB-month; its description says the
 * GB-months. Each line's amount is rounded once, half up, to the minor unit; the total is their sum.
 */
export const InvoiceLine = z.object({
  kind: z.enum(['slot', 'metered', 'cap', 'snapshot']),
  description: z.string(),
  product: Product,
  size: Size,
  region: Region,
  /** The machine (`metered`, `cap`, `snapshot`); null for slots. */
  resourceId: Id.nullable(),
  /** Running rate or paused rate (`metered`); null otherwise. */
  rate: z.enum(['running', 'paused']).nullable(),
  quantity: z.number().int().nonnegative(),
  seconds: z.number().int().nonnegative(),
  unitAmount: Money,
  amount: Money,
});
export type InvoiceLine = z.infer<typeof InvoiceLine>;

/** The bill of the current period so far, and what it comes to if nothing changes. */
export const UpcomingInvoice = z.object({
  accountId: Id,
  currency: z.string(),
  minorUnitDigits: z.number().int().nonnegative(),
  periodStart: Timestamp,
  periodEnd: Timestamp,
  asOf: Timestamp,
  lines: z.array(InvoiceLine),
  /** The sum of `lines`: what the period has cost so far. */
  total: Money,
  /** The total at `periodEnd` if every machine and slot stays as it is now. */
  projectedTotal: Money,
});
export type UpcomingInvoice = z.infer<typeof UpcomingInvoice>;

export const InvoiceStatus = z.enum(['open', 'paid']);
export type InvoiceStatus = z.infer<typeof InvoiceStatus>;

export const InvoiceSummary = z.object({
  /** One sequence for the whole service, without gaps. */
  number: z.number().int().positive(),
  accountId: Id,
  periodStart: Timestamp,
  periodEnd: Timestamp,
  currency: z.string(),
  minorUnitDigits: z.number().int().nonnegative(),
  total: Money,
  status: InvoiceStatus,
  issuedAt: Timestamp,
  dueAt: Timestamp,
  paidAt: Timestamp.nullable(),
});
export type InvoiceSummary = z.infer<typeof InvoiceSummary>;

export const Invoice = InvoiceSummary.extend({ lines: z.array(InvoiceLine) });
export type Invoice = z.infer<typeof Invoice>;

const InvoiceParams = z.object({ id: Id, number: z.coerce.number().int().positive() });

export const getUpcomingInvoice = defineEndpoint({
  id: 'getUpcomingInvoice',
  method: 'GET',
  path: '/api/accounts/{id}/invoices/upcoming',
  auth: 'session',
  tag: 'billing',
  summary:
    'The running bill of this period: slot, metered and snapshot storage lines, the total so far and a projection (owners and admins).',
  params: z.object({ id: Id }),
  response: { status: 200, body: UpcomingInvoice },
  errors: [],
});

export const listInvoices = defineEndpoint({
  id: 'listInvoices',
  method: 'GET',
  path: '/api/accounts/{id}/invoices',
  auth: 'session',
  tag: 'billing',
  summary: "The account's invoices, newest first (owners and admins).",
  params: z.object({ id: Id }),
  response: { status: 200, body: z.array(InvoiceSummary) },
  errors: [],
});

export const getInvoice = defineEndpoint({
  id: 'getInvoice',
  method: 'GET',
  path: '/api/accounts/{id}/invoices/{number}',
  auth: 'session',
  tag: 'billing',
  summary: 'One invoice with its lines (owners and admins); another account’s number answers 404.',
  params: InvoiceParams,
  response: { status: 200, body: Invoice },
  errors: [],
});

export const getInvoicePage = defineEndpoint({
  id: 'getInvoicePage',
  method: 'GET',
  path: '/api/accounts/{id}/invoices/{number}/print',
  auth: 'session',
  tag: 'billing',
  summary: 'One invoice as a printable HTML page (owners and admins).',
  params: InvoiceParams,
  response: { status: 200, description: 'An HTML page.' },
  errors: [],
});

export const stripeWebhook = defineEndpoint({
  id: 'stripeWebhook',
  method: 'POST',
  path: '/api/billing/stripe/webhook',
  auth: 'none',
  tag: 'billing',
  summary:
    "Stripe's events (BILLING_PROVIDER=stripe): signed with STRIPE_WEBHOOK_SECRET; a bad signature answers 400 and changes nothing.",
  response: { status: 200, body: z.object({ received: z.literal(true) }) },
  errors: ['not_found', 'invalid_signature'],
});

export const billingEndpoints = [
  getPrices,
  listSlots,
  deleteSlot,
  getUsage,
  getUpcomingInvoice,
  listInvoices,
  getInvoice,
  getInvoicePage,
  stripeWebhook,
] as const;
