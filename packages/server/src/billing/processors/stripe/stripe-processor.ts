import { createHash } from 'node:crypto';
import type { SubscriptionStatus } from '@svc/contract';
import Stripe from 'stripe';
import type { Clock } from '../../../adapters/clock.js';
import type { Database } from '../../../db/database.js';
import { AppError } from '../../../errors.js';
import * as customers from '../../billing-customers.repo.js';
import { nextMonthStart, second } from '../../money.js';
import {
  type IssuedInvoice,
  type PaymentProcessor,
  ProcessorUnavailable,
  type SlotQuantity,
} from '../../payment-processor.js';
import { STATUS, toProcessorEvent } from './stripe-events.js';

export interface StripeProcessorDeps {
  readonly secretKey: string;
  readonly webhookSecret: string;
  /** `STRIPE_API_URL`: another address for Stripe's API (a stand-in). */
  readonly apiUrl?: string;
  readonly database: Database;
  readonly clock: Clock;
  /** The price book's currency (ISO 4217). */
  readonly currency: string;
}

const ENDED = new Set(['canceled', 'incomplete_expired']);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `svc_agent_small_eu_monthly`: the lookup key of a cell's monthly slot price. */
export const slotLookupKey = (cell: Pick<SlotQuantity, 'product' | 'size' | 'region'>) =>
  `svc_${cell.product}_${cell.size}_${cell.region}_monthly`;

/**
 * `BILLING_PROVIDER=stripe`, through the official SDK: one customer per account (metadata
 * `accountId`), one subscription whose items are the account's slot cells, an invoice of its own
 * for each service invoice's metered lines, and signed webhooks. Every write is found again
 * before it is made again (the database's ids, then Stripe's lists), so retries make no doubles.
 */
export function createStripeProcessor(deps: StripeProcessorDeps): PaymentProcessor {
  const { database, clock } = deps;
  const currency = deps.currency.toLowerCase();
  const url = deps.apiUrl ? new URL(deps.apiUrl) : undefined;
  const stripe = new Stripe(deps.secretKey, {
    maxNetworkRetries: 1,
    timeout: 15_000,
    telemetry: false,
    ...(url && {
      host: url.hostname,
      port: url.port || (url.protocol === 'http:' ? 80 : 443),
      protocol: url.protocol === 'http:' ? 'http' : 'https',
    }),
  });

  /** The account's customer made by an earlier try whose answer was lost, if any. */
  async function searchCustomer(accountId: string) {
    // Ids are UUIDs (validated at every entry): nothing in them can change the query.
    if (!UUID.test(accountId)) throw new Error(`not an account id: ${accountId}`);
    const found = await stripe.customers.search({
      query: `metadata['accountId']:'${accountId}'`,
      limit: 1,
    });
    return found.data[0];
  }

  async function ensureCustomer(account: { id: string; name: string }): Promise<string> {
    const row = await customers.findBillingCustomer(database.db, account.id);
    if (row) return row.customerId;
    const customer =
      (await searchCustomer(account.id)) ??
      (await stripe.customers.create(
        { name: account.name, metadata: { accountId: account.id } },
        // The name is not part of the key's request on purpose: a rename between two tries
        // would make Stripe refuse the second as a different request.
        { idempotencyKey: `svc-customer-${account.id}` },
      ));
    return customers.saveCustomer(
      database.db,
      { accountId: account.id, provider: 'stripe', customerId: customer.id },
      clock.now(),
    );
  }

  /** The price of each cell's slot, made (or replaced, if the book changed) when missing. */
  async function slotPrices(slots: readonly SlotQuantity[]): Promise<Map<string, string>> {
    const keys = slots.map(slotLookupKey);
    const ids = new Map<string, string>();
    if (keys.length === 0) return ids;
    const existing: Stripe.Price[] = [];
    // Stripe takes at most ten lookup keys a request.
    for (let i = 0; i < keys.length; i += 10) {
      const page = await stripe.prices.list({
        lookup_keys: keys.slice(i, i + 10),
        active: true,
        limit: 100,
      });
      existing.push(...page.data);
    }
    for (const slot of slots) {
      const key = slotLookupKey(slot);
      const price = existing.find(
        (p) =>
          p.lookup_key === key &&
          p.unit_amount === slot.monthly &&
          p.currency === currency &&
          p.recurring?.interval === 'month',
      );
      ids.set(
        key,
        price?.id ??
          (
            await stripe.prices.create({
              currency,
              unit_amount: slot.monthly,
              recurring: { interval: 'month' },
              lookup_key: key,
              transfer_lookup_key: true,
              product_data: { name: `${slot.product} ${slot.size} ${slot.region} slot` },
            })
          ).id,
      );
    }
    return ids;
  }

  /** The account's live subscription: the one on record, else one an unanswered try made. */
  async function liveSubscription(accountId: string, customerId: string) {
    const row = await customers.findBillingCustomer(database.db, accountId);
    if (row?.subscriptionId) {
      const sub = await stripe.subscriptions
        .retrieve(row.subscriptionId)
        .catch(notFoundAsUndefined);
      if (sub && !ENDED.has(sub.status)) return { sub, recorded: true };
    }
    const list = await stripe.subscriptions.list({
      customer: customerId,
      status: 'all',
      limit: 100,
    });
    const sub = list.data.find((s) => !ENDED.has(s.status) && s.metadata.accountId === accountId);
    return { sub, recorded: false, count: list.data.length };
  }

  /** The subscription's items become the slots: changed, added, and removed (but the last). */
  async function updateItems(sub: Stripe.Subscription, slots: readonly SlotQuantity[]) {
    const wanted = slots.filter((slot) => slot.quantity > 0);
    const prices = await slotPrices(wanted);
    const quantities = new Map(
      wanted.map((slot) => [prices.get(slotLookupKey(slot)), slot.quantity]),
    );
    const current = await stripe.subscriptionItems.list({ subscription: sub.id, limit: 100 });
    const items: Stripe.SubscriptionUpdateParams.Item[] = [];
    for (const item of current.data) {
      const quantity = quantities.get(item.price.id) ?? 0;
      quantities.delete(item.price.id);
      if (quantity === 0) items.push({ id: item.id, deleted: true });
      else if (quantity !== item.quantity) items.push({ id: item.id, quantity });
    }
    for (const [price, quantity] of quantities) items.push({ price, quantity });
    // Stripe keeps at least one item: the last one stays, at quantity 0.
    const deleted = items.filter((item) => item.deleted);
    const last = deleted[0];
    if (last && current.data.length - deleted.length + quantities.size === 0) {
      const wasZero = current.data.find((item) => item.id === last.id)?.quantity === 0;
      items.splice(items.indexOf(last), 1, ...(wasZero ? [] : [{ id: last.id, quantity: 0 }]));
    }
    if (items.length === 0) return sub;
    return stripe.subscriptions.update(sub.id, {
      items,
      proration_behavior: 'create_prorations',
    });
  }

  /**
   * Customer, then subscription (once there are slots), then its items. `record`: `always`
   * (activation, which then checks that its subscription is still the account's) or
   * `unless_inactive` (a job: an account deactivated meanwhile keeps none; the job its
   * deactivation enqueued ends what this made).
   */
  async function reconcile(
    account: { id: string; name: string },
    slots: readonly SlotQuantity[],
    record: 'always' | 'unless_inactive',
  ): Promise<{ status: SubscriptionStatus; subscriptionId: string | null }> {
    const customerId = await ensureCustomer(account);
    const live = await liveSubscription(account.id, customerId);
    let sub = live.sub;
    if (sub) {
      sub = await updateItems(sub, slots);
    } else {
      const wanted = slots.filter((slot) => slot.quantity > 0);
      // No slot yet: the subscription comes with the first one (Stripe wants an item).
      if (wanted.length === 0) return { status: 'active', subscriptionId: null };
      const prices = await slotPrices(wanted);
      const params: Stripe.SubscriptionCreateParams = {
        customer: customerId,
        items: wanted.map((slot) => ({
          price: prices.get(slotLookupKey(slot)) as string,
          quantity: slot.quantity,
        })),
        billing_cycle_anchor: second(nextMonthStart(clock.now())),
        proration_behavior: 'create_prorations',
        collection_method: 'charge_automatically',
        payment_behavior: 'allow_incomplete',
        metadata: { accountId: account.id },
      };
      // The n-th subscription of the customer with these items: two tries make one (one
      // process at a time reconciles an account: billing-lease.repo.ts).
      const digest = createHash('sha256').update(JSON.stringify(params)).digest('hex');
      sub = await stripe.subscriptions.create(params, {
        idempotencyKey: `svc-subscription-${account.id}-${live.count ?? 0}-${digest.slice(0, 16)}`,
      });
    }
    const status = STATUS[sub.status] ?? 'past_due';
    if (!live.recorded) {
      if (record === 'always') {
        await customers.saveSubscription(database.db, account.id, sub.id);
      } else if (!(await customers.saveSubscriptionUnlessInactive(database, account.id, sub.id))) {
        return { status: 'inactive', subscriptionId: null };
      }
    }
    return { status, subscriptionId: sub.id };
  }

  /** The Stripe invoice that collects service invoice `number`, made (as a draft) if missing. */
  async function collectingInvoice(
    invoice: IssuedInvoice,
    customerId: string,
    subscription?: string,
  ) {
    const number = String(invoice.number);
    for await (const found of stripe.invoices.list({ customer: customerId, limit: 100 })) {
      if (found.metadata?.svcInvoiceNumber === number) return found;
    }
    return stripe.invoices.create(
      {
        customer: customerId,
        ...(subscription && { subscription }),
        currency,
        collection_method: 'charge_automatically',
        auto_advance: false,
        pending_invoice_items_behavior: 'exclude',
        description: `Invoice ${number}: usage ${invoice.periodStart.toISOString().slice(0, 7)}`,
        metadata: { svcInvoiceNumber: number },
      },
      // Numbers restart with a new database: the customer makes the key this operator's own.
      { idempotencyKey: `svc-invoice-${customerId}-${number}` },
    );
  }

  return {
    subscriptionsFollowInvoices: false,

    activateSubscription: (account) =>
      unavailableOnFailure(() => reconcile(account, account.slots, 'always')),

    detachSubscription: (tx, accountId) => customers.detachSubscription(tx, accountId),

    syncSlots: (account, slots) =>
      unavailableOnFailure(async () => {
        await reconcile(account, slots, 'unless_inactive');
      }),

    endSubscriptions: (accountId) =>
      unavailableOnFailure(async () => {
        const row = await customers.findBillingCustomer(database.db, accountId);
        const customerId = row?.customerId ?? (await searchCustomer(accountId))?.id;
        if (!customerId) return;
        for await (const sub of stripe.subscriptions.list({
          customer: customerId,
          status: 'all',
          limit: 100,
        })) {
          if (ENDED.has(sub.status) || sub.metadata.accountId !== accountId) continue;
          await stripe.subscriptions.cancel(sub.id, { invoice_now: true, prorate: true });
        }
      }),

    collectInvoice: (invoice) =>
      unavailableOnFailure(async () => {
        const lines = invoice.lines.filter((line) => line.kind !== 'slot' && line.amount !== 0);
        if (lines.length === 0) return { providerInvoiceId: null, settled: true };
        const customerId = await ensureCustomer({
          id: invoice.accountId,
          name: invoice.accountName,
        });
        const row = await customers.findBillingCustomer(database.db, invoice.accountId);
        const draft = await collectingInvoice(
          invoice,
          customerId,
          row?.subscriptionId ?? undefined,
        );
        if (draft.status !== 'draft') return { providerInvoiceId: draft.id, settled: false };
        const sent = new Set<string | undefined>();
        for await (const item of stripe.invoiceItems.list({ invoice: draft.id, limit: 100 })) {
          sent.add(item.metadata?.svcLinePosition);
        }
        const period = {
          start: Math.floor(invoice.periodStart.getTime() / 1000),
          end: Math.floor(invoice.periodEnd.getTime() / 1000),
        };
        for (const line of lines) {
          if (sent.has(String(line.position))) continue;
          await stripe.invoiceItems.create(
            {
              customer: customerId,
              invoice: draft.id,
              amount: line.amount,
              currency,
              description: line.description,
              period,
              metadata: {
                svcInvoiceNumber: String(invoice.number),
                svcLinePosition: String(line.position),
              },
            },
            { idempotencyKey: `svc-invoice-${draft.id}-line-${line.position}` },
          );
        }
        await stripe.invoices.finalizeInvoice(draft.id, { auto_advance: true });
        return { providerInvoiceId: draft.id, settled: false };
      }),

    readWebhook(body, signature) {
      let event: Stripe.Event;
      try {
        event = stripe.webhooks.constructEvent(
          Buffer.from(body),
          signature ?? '',
          deps.webhookSecret,
          300,
          undefined,
          clock.now().getTime(),
        );
      } catch {
        throw new AppError('invalid_signature');
      }
      return toProcessorEvent(event);
    },
  };
}

const notFoundAsUndefined = (error: unknown): undefined => {
  if (error instanceof Stripe.errors.StripeInvalidRequestError && error.statusCode === 404) {
    return undefined;
  }
  throw error;
};

/**
 * Stripe's failures become `ProcessorUnavailable`: the caller answers 503 or its job retries.
 * The message names Stripe's error type and code, never the key (an authentication error's
 * message quotes part of it).
 */
async function unavailableOnFailure<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof Stripe.errors.StripeError) {
      // Authentication and permission errors quote part of the key: their message is left out.
      const quotesKey =
        error instanceof Stripe.errors.StripeAuthenticationError ||
        error instanceof Stripe.errors.StripePermissionError;
      const detail = quotesKey ? '' : `: ${error.message}`;
      throw new ProcessorUnavailable(
        `stripe ${error.type}${error.code ? ` ${error.code}` : ''} (${error.statusCode ?? 'no answer'})${detail}`,
      );
    }
    throw error;
  }
}
