import type { Region, Size } from '@svc/contract';
import {
  activateSubscription,
  deactivateSubscription,
  deleteMe,
  stripeWebhook,
} from '@svc/contract';
import { sql } from 'kysely';
import type Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metricValue } from '../../../../test/metric-value.js';
import { StripeStandIn } from '../../../../test/stripe-stand-in.js';
import { errorOf } from '../../../../test/test-client.js';
import { createTestContext, signUpUser, type TestContext } from '../../../../test/test-context.js';
import { databaseKinds } from '../../../../test/test-db.js';
import { waitFor } from '../../../../test/wait.js';
import { collectInvoice, syncSubscription } from '../../billing.job-types.js';
import { nextMonthStart, second } from '../../money.js';
import { syncSubscriptionLater } from '../../payment.jobs.js';
import { slotQuantities } from '../../slot-quantities.js';
import { removeSlot, takeSlot } from '../../slots.js';

const SECRET_KEY = 'sk_test_never_in_a_log_4f1d';
const WEBHOOK_SECRET = 'whsec_never_in_a_log_9c2e';
const DAY = 86_400_000;
// Sent by path: its body is Stripe's signed bytes and its signature header Stripe's, which the
// descriptor does not name (and a forged or tampered delivery is what some tests send).
const WEBHOOK = stripeWebhook.path;

describe.each(databaseKinds)('Stripe payment processor on %s', (kind) => {
  const standIn = new StripeStandIn(WEBHOOK_SECRET);
  let t: TestContext;
  let invoiceNumber = 9000;

  beforeAll(async () => {
    const url = await standIn.start();
    t = await createTestContext(kind, {
      env: {
        BILLING_PROVIDER: 'stripe',
        STRIPE_SECRET_KEY: SECRET_KEY,
        STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
        STRIPE_API_URL: url,
      },
      overrides: { immediateJobRetries: true },
    });
  });
  afterAll(async () => {
    await t?.close();
    await standIn.close();
  });

  const db = () => t.ctx.database.db;
  const webhookEvents = (labels: Record<string, string>) =>
    metricValue(t.ctx.metrics.registry, 'svc_webhook_events_total', labels);
  const status = async (accountId: string) =>
    (
      await db()
        .selectFrom('accounts')
        .select('subscriptionStatus')
        .where('id', '=', accountId)
        .executeTakeFirstOrThrow()
    ).subscriptionStatus;

  async function signUp() {
    const client = t.newClient();
    const { account } = await signUpUser(client);
    return { client, accountId: account.id };
  }

  const insertSlots = (
    accountId: string,
    size: Size,
    region: Region,
    count: number,
    product: 'agent' | 'plain_vm' = 'agent',
  ) =>
    db()
      .insertInto('subscriptionSlots')
      .values(
        Array.from({ length: count }, () => ({
          id: crypto.randomUUID(),
          accountId,
          product,
          size,
          region,
          createdAt: t.clock.now(),
        })),
      )
      .execute();

  const subscriptionOf = async (accountId: string) => {
    const row = await db()
      .selectFrom('billingCustomers')
      .selectAll()
      .where('accountId', '=', accountId)
      .executeTakeFirst();
    return row?.subscriptionId ? standIn.subscriptions.get(row.subscriptionId) : undefined;
  };
  const quantities = (sub: Record<string, any> | undefined) =>
    Object.fromEntries(
      (sub?.items ?? []).map((item: { price: { lookup_key: string }; quantity: number }) => [
        item.price.lookup_key,
        item.quantity,
      ]),
    );

  const deliver = (event: Stripe.Event, signature?: string) => {
    const signed = standIn.sign(event, t.clock.now().getTime());
    return t.newClient().request('POST', WEBHOOK, {
      rawBody: signed.body,
      headers: {
        'content-type': 'application/json',
        ...(signature !== '' && { 'stripe-signature': signature ?? signed.signature }),
      },
      origin: null,
    });
  };

  /** An issued invoice of a slot, a metered and a cap line (the period close is not under test). */
  async function issueInvoice(
    accountId: string,
    dueAt = new Date(t.clock.now().getTime() + 14 * DAY),
  ) {
    invoiceNumber += 1;
    const number = invoiceNumber;
    const line = {
      invoiceNumber: number,
      product: 'agent' as const,
      size: 'small' as const,
      region: 'eu' as const,
    };
    await db()
      .insertInto('invoices')
      .values({
        number,
        accountId,
        periodStart: new Date(Date.UTC(2026, 0, 1)),
        periodEnd: new Date(Date.UTC(2026, 1, 1)),
        currency: 'EUR',
        minorUnitDigits: 2,
        total: 1200 + 2000 - 560,
        status: 'open',
        issuedAt: t.clock.now(),
        dueAt,
        paidAt: null,
        providerInvoiceId: null,
      })
      .execute();
    await db()
      .insertInto('invoiceLines')
      .values([
        {
          ...line,
          position: 0,
          kind: 'slot',
          description: 'Agent small eu slot',
          resourceId: null,
          rate: null,
          quantity: 1,
          seconds: 2_678_400,
          unitAmount: 1200,
          amount: 1200,
        },
        {
          ...line,
          position: 1,
          kind: 'metered',
          description: 'Agent a1 running',
          resourceId: crypto.randomUUID(),
          rate: 'running',
          quantity: 1,
          seconds: 3_600_000,
          unitAmount: 2,
          amount: 2000,
        },
        {
          ...line,
          position: 2,
          kind: 'cap',
          description: 'Agent a1 monthly cap',
          resourceId: crypto.randomUUID(),
          rate: null,
          quantity: 1,
          seconds: 0,
          unitAmount: -560,
          amount: -560,
        },
      ])
      .execute();
    return number;
  }

  const collect = (number: number) =>
    t.ctx.database.transaction((tx) => t.ctx.jobs.enqueue(tx, collectInvoice, { number }));

  const jobState = async (id: string | null) =>
    (await sql<{ state: string }>`select state from pgboss.job where id = ${id}`.execute(db()))
      .rows[0]?.state;

  const invoiceRow = (number: number) =>
    db().selectFrom('invoices').selectAll().where('number', '=', number).executeTakeFirstOrThrow();

  const jobFailures = (job: string) =>
    t.logs.entries().filter((entry) => entry.msg === 'job failed' && entry.job === job).length;

  it('activates with one customer and a subscription of the slot cells, anchored at the next month', async () => {
    const { client, accountId } = await signUp();
    await insertSlots(accountId, 'small', 'eu', 2);
    await insertSlots(accountId, 'medium', 'us', 1);
    const res = await client.call(activateSubscription, { params: { id: accountId } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ accountId, subscriptionActive: true, subscriptionStatus: 'active' });
    // Again: the same customer and subscription, found rather than made twice.
    expect((await client.call(activateSubscription, { params: { id: accountId } })).status).toBe(
      200,
    );

    const mine = [...standIn.customers.values()].filter((c) => c.metadata.accountId === accountId);
    expect(mine).toHaveLength(1);
    const subs = [...standIn.subscriptions.values()].filter((s) => s.customer === mine[0]?.id);
    expect(subs).toHaveLength(1);
    const sub = subs[0] as NonNullable<(typeof subs)[0]>;
    expect(quantities(sub)).toEqual({
      svc_agent_small_eu_monthly: 2,
      svc_agent_medium_us_monthly: 1,
    });
    const prices = t.ctx.config.billing.prices;
    const price = sub.items.find(
      (i: { price: { lookup_key: string } }) => i.price.lookup_key === 'svc_agent_small_eu_monthly',
    ).price;
    expect(price).toMatchObject({
      unit_amount: prices.cell('agent', 'small', 'eu').monthly,
      currency: 'eur',
      recurring: { interval: 'month' },
    });
    expect(sub.billing_cycle_anchor).toBe(second(nextMonthStart(t.clock.now())));
    expect(sub.metadata).toEqual({ accountId });
    const audit = await db()
      .selectFrom('auditEvents')
      .select('data')
      .where('accountId', '=', accountId)
      .where('action', '=', 'account.subscription')
      .execute();
    expect(audit.map((a) => a.data)).toContainEqual({ active: true, status: 'active' });
  });

  it('keeps the quantities in step with the slots by a job enqueued with each slot change', async () => {
    const { client, accountId } = await signUp();
    await insertSlots(accountId, 'small', 'eu', 1);
    expect((await client.call(activateSubscription, { params: { id: accountId } })).status).toBe(
      200,
    );
    const kind = { accountId, product: 'agent', size: 'large', region: 'us' } as const;
    await t.ctx.database.transaction((tx) => takeSlot(tx, kind, t.clock.now(), t.ctx.jobs));
    await waitFor(
      async () => quantities(await subscriptionOf(accountId)).svc_agent_large_us_monthly === 1,
      15_000,
      'item added',
    );
    const small = await db()
      .selectFrom('subscriptionSlots')
      .select('id')
      .where('accountId', '=', accountId)
      .where('size', '=', 'small')
      .executeTakeFirstOrThrow();
    await t.ctx.database.transaction((tx) =>
      removeSlot(tx, accountId, small.id, t.clock.now(), t.ctx.jobs),
    );
    await waitFor(
      async () => !('svc_agent_small_eu_monthly' in quantities(await subscriptionOf(accountId))),
      15_000,
      'item removed',
    );
    expect(quantities(await subscriptionOf(accountId))).toEqual({
      svc_agent_large_us_monthly: 1,
    });
  });

  it('collects the metered and cap lines; a declined payment makes the account past due, paying makes it active and the invoice paid', async () => {
    const { client, accountId } = await signUp();
    await insertSlots(accountId, 'small', 'eu', 1);
    expect((await client.call(activateSubscription, { params: { id: accountId } })).status).toBe(
      200,
    );
    const number = await issueInvoice(accountId);
    standIn.declinePayments = true;
    const eventsBefore = standIn.events.length;
    await collect(number);
    const providerInvoiceId = await waitFor(
      async () => (await invoiceRow(number)).providerInvoiceId ?? undefined,
      15_000,
      'collected',
    );
    standIn.declinePayments = false;
    const items = [...standIn.invoiceItems.values()].filter((i) => i.invoice === providerInvoiceId);
    expect(items.map((i) => [i.amount, i.currency, i.metadata])).toEqual([
      [2000, 'eur', { svcInvoiceNumber: String(number), svcLinePosition: '1' }],
      [-560, 'eur', { svcInvoiceNumber: String(number), svcLinePosition: '2' }],
    ]);
    const failed = standIn.events
      .slice(eventsBefore)
      .find((e) => e.type === 'invoice.payment_failed');
    expect(failed).toBeDefined();
    expect((await deliver(failed as Stripe.Event)).status).toBe(200);
    expect(await status(accountId)).toBe('past_due');
    expect((await invoiceRow(number)).status).toBe('open');
    // The webhook's move enqueued the past-due notice to the account's owners and admins.
    await waitFor(
      () =>
        t.ctx.database.db
          .selectFrom('noticeEvents')
          .select('kind')
          .where('accountId', '=', accountId)
          .where('kind', '=', 'subscription_past_due')
          .executeTakeFirst(),
      15_000,
      'the past-due notice',
    );

    // Collecting again (a retry after a lost answer) finds the Stripe invoice: no second one,
    // no item twice.
    await collect(number);
    await waitFor(
      () =>
        t.logs
          .entries()
          .filter((e) => e.msg === 'invoice handed to the payment processor' && e.number === number)
          .length === 2,
      15_000,
      'collected again',
    );
    expect(
      [...standIn.invoiceItems.values()].filter(
        (i) => i.metadata.svcInvoiceNumber === String(number),
      ),
    ).toHaveLength(2);

    const paid = standIn.pay(providerInvoiceId);
    expect((await deliver(paid)).body).toEqual({ received: true });
    expect(await status(accountId)).toBe('active');
    expect(await invoiceRow(number)).toMatchObject({
      status: 'paid',
      paidAt: new Date(paid.created * 1000),
    });
    const paidAudit = await db()
      .selectFrom('auditEvents')
      .select('data')
      .where('accountId', '=', accountId)
      .where('action', '=', 'account.invoice_paid')
      .execute();
    expect(paidAudit.map((a) => a.data)).toEqual([
      { number, total: 2640, currency: 'EUR', processorEvent: paid.id },
    ]);

    // A duplicate delivery is acknowledged and applied once.
    const audits = async () =>
      (
        await db()
          .selectFrom('auditEvents')
          .select('id')
          .where('accountId', '=', accountId)
          .execute()
      ).length;
    const before = await audits();
    expect((await deliver(paid)).status).toBe(200);
    expect((await deliver(failed as Stripe.Event)).status).toBe(200);
    expect(await status(accountId)).toBe('active');
    expect(await audits()).toBe(before);
    const recorded = await db()
      .selectFrom('billingEvents')
      .select('id')
      .where('id', 'in', [paid.id, (failed as Stripe.Event).id])
      .execute();
    expect(recorded).toHaveLength(2);

    // Paid: collecting it again asks Stripe nothing.
    const requests = standIn.requests.length;
    const job = await collect(number);
    await waitFor(async () => (await jobState(job)) === 'completed', 15_000, 'collected again');
    expect(standIn.requests.length).toBe(requests);
  });

  it('applies subscription events in the order they happened, whatever order they come in', async () => {
    const { client, accountId } = await signUp();
    await insertSlots(accountId, 'small', 'us', 1);
    expect((await client.call(activateSubscription, { params: { id: accountId } })).status).toBe(
      200,
    );
    const sub = standIn.subscriptions.get((await subscriptionOf(accountId))?.id) as Record<
      string,
      unknown
    >;
    const applied = { type: 'subscription', outcome: 'applied' };
    const ignored = { type: 'ignored', outcome: 'ignored' };
    const before = { applied: await webhookEvents(applied), ignored: await webhookEvents(ignored) };
    const now = t.clock.now().getTime();
    const newer = standIn.event(
      'customer.subscription.updated',
      { ...sub, items: undefined, status: 'past_due' },
      now + 20_000,
    );
    const older = standIn.event(
      'customer.subscription.updated',
      { ...sub, items: undefined, status: 'active' },
      now + 10_000,
    );
    expect((await deliver(newer)).status).toBe(200);
    expect(await status(accountId)).toBe('past_due');
    expect((await deliver(older)).status).toBe(200);
    expect(await status(accountId)).toBe('past_due');
    const latest = standIn.event(
      'customer.subscription.updated',
      { ...sub, items: undefined, status: 'unpaid' },
      now + 30_000,
    );
    expect((await deliver(latest)).status).toBe(200);
    expect(await status(accountId)).toBe('inactive');
    // Unknown event types: acknowledged, ignored.
    expect((await deliver(standIn.event('customer.created', { id: 'cus_x' }))).status).toBe(200);
    // Counted by the service's type of event and what became of it (`/metrics`).
    expect(await webhookEvents(applied)).toBe(before.applied + 3);
    expect(await webhookEvents(ignored)).toBe(before.ignored + 1);
  });

  it('refuses a webhook with a bad or missing signature (400) and changes nothing', async () => {
    const { client, accountId } = await signUp();
    await insertSlots(accountId, 'large', 'eu', 1);
    expect((await client.call(activateSubscription, { params: { id: accountId } })).status).toBe(
      200,
    );
    const sub = (await subscriptionOf(accountId)) as Record<string, unknown>;
    const event = standIn.event('customer.subscription.deleted', {
      ...sub,
      items: undefined,
      status: 'canceled',
    });
    const rejected = { type: 'unknown', outcome: 'rejected' };
    const rejectedBefore = await webhookEvents(rejected);
    const forged = new StripeStandIn('whsec_someone_else').sign(event).signature;
    for (const signature of [forged, '', 't=1,v1=00']) {
      const res = await deliver(event, signature);
      expect(res.status).toBe(400);
      expect(errorOf(res).error).toBe('invalid_signature');
    }
    const signed = standIn.sign(event);
    const tampered = await t.newClient().request('POST', WEBHOOK, {
      rawBody: signed.body.replace('canceled', 'cancelled'),
      headers: { 'content-type': 'application/json', 'stripe-signature': signed.signature },
      origin: null,
    });
    expect(tampered.status).toBe(400);
    expect(await webhookEvents(rejected)).toBe(rejectedBefore + 4);
    expect(await status(accountId)).toBe('active');
    expect(
      await db().selectFrom('billingEvents').select('id').where('id', '=', event.id).execute(),
    ).toEqual([]);
  });

  it('deactivates at once and cancels at Stripe by a job; the old subscription’s events change nothing', async () => {
    const { client, accountId } = await signUp();
    await insertSlots(accountId, 'medium', 'eu', 1);
    expect((await client.call(activateSubscription, { params: { id: accountId } })).status).toBe(
      200,
    );
    const sub = (await subscriptionOf(accountId)) as Record<string, unknown>;
    const res = await client.call(deactivateSubscription, { params: { id: accountId } });
    expect(res.body).toEqual({
      accountId,
      subscriptionActive: false,
      subscriptionStatus: 'inactive',
    });
    await waitFor(
      () => standIn.subscriptions.get(sub.id as string)?.status === 'canceled',
      15_000,
      'cancelled',
    );
    const late = standIn.event(
      'customer.subscription.updated',
      { ...sub, items: undefined, status: 'active' },
      t.clock.now().getTime() + 60_000,
    );
    expect((await deliver(late)).status).toBe(200);
    expect(await status(accountId)).toBe('inactive');
    // Activated again: a new subscription.
    expect((await client.call(activateSubscription, { params: { id: accountId } })).status).toBe(
      200,
    );
    expect((await subscriptionOf(accountId))?.id).not.toBe(sub.id);
  });

  it('refuses activation while an invoice is unpaid past its due date and the grace period (409)', async () => {
    const { client, accountId } = await signUp();
    const grace = t.ctx.config.billing.graceDays;
    await issueInvoice(accountId, new Date(t.clock.now().getTime() - (grace + 1) * DAY));
    const requests = standIn.requests.length;
    const res = await client.callError(activateSubscription, { params: { id: accountId } });
    expect(res.status).toBe(409);
    expect(res.body.error).toBe('invoices_overdue');
    expect(standIn.requests.length).toBe(requests);
    expect(await status(accountId)).toBe('inactive');
  });

  it('activates with a slot in every cell: twelve prices, looked up ten at a time', async () => {
    const { client, accountId } = await signUp();
    for (const product of ['agent', 'plain_vm'] as const) {
      for (const size of ['small', 'medium', 'large'] as const) {
        for (const region of ['us', 'eu'] as const) {
          await insertSlots(accountId, size, region, 1, product);
        }
      }
    }
    expect((await client.call(activateSubscription, { params: { id: accountId } })).status).toBe(
      200,
    );
    const items = quantities(await subscriptionOf(accountId));
    expect(Object.keys(items)).toHaveLength(12);
    expect(Object.values(items)).toEqual(Array(12).fill(1));
  });

  it('a sync for an account that is inactive records no subscription, and the next sync cancels what it made', async () => {
    const { accountId } = await signUp();
    await insertSlots(accountId, 'small', 'eu', 1);
    const slots = await slotQuantities(db(), accountId, t.ctx.config.billing.prices);
    // As a sync job would that read the account just before its deactivation.
    await t.ctx.paymentProcessor.syncSlots({ id: accountId, name: 'Late' }, slots);
    const made = [...standIn.subscriptions.values()].filter(
      (sub) => sub.metadata.accountId === accountId,
    );
    expect(made.map((sub) => sub.status)).toEqual(['active']);
    expect(await subscriptionOf(accountId)).toBeUndefined();
    expect(await status(accountId)).toBe('inactive');
    await t.ctx.database.transaction((tx) => syncSubscriptionLater(tx, t.ctx.jobs, accountId));
    await waitFor(() => made[0]?.status === 'canceled', 15_000, 'cancelled');
  });

  it('an activation whose answer from Stripe is lost answers 503, stays inactive, and what Stripe made is cancelled', async () => {
    const { client, accountId } = await signUp();
    await insertSlots(accountId, 'medium', 'eu', 1);
    standIn.loseAnswersTo.add('POST subscriptions');
    try {
      const res = await client.callError(activateSubscription, { params: { id: accountId } });
      expect(res.status).toBe(503);
      expect(res.body.error).toBe('billing_unavailable');
    } finally {
      standIn.loseAnswersTo.delete('POST subscriptions');
    }
    expect(await status(accountId)).toBe('inactive');
    const made = [...standIn.subscriptions.values()].filter(
      (sub) => sub.metadata.accountId === accountId,
    );
    expect(made).toHaveLength(1);
    await waitFor(() => made[0]?.status === 'canceled', 15_000, 'cancelled');
    expect(await status(accountId)).toBe('inactive');
  });

  it('deleting the account cancels its subscription at Stripe', async () => {
    const { client, accountId } = await signUp();
    await insertSlots(accountId, 'large', 'us', 1);
    expect((await client.call(activateSubscription, { params: { id: accountId } })).status).toBe(
      200,
    );
    const sub = (await subscriptionOf(accountId)) as Record<string, unknown>;
    expect(sub.status).toBe('active');
    expect((await client.call(deleteMe)).status).toBe(204);
    await waitFor(
      () => standIn.subscriptions.get(sub.id as string)?.status === 'canceled',
      15_000,
      'cancelled',
    );
  });

  it('with Stripe down: activation answers 503 and changes nothing; sync and collect jobs fail, then complete once it is back', async () => {
    const { client, accountId } = await signUp();
    await insertSlots(accountId, 'small', 'eu', 1);
    expect((await client.call(activateSubscription, { params: { id: accountId } })).status).toBe(
      200,
    );
    const number = await issueInvoice(accountId);

    standIn.down = true;
    try {
      const other = await signUp();
      await insertSlots(other.accountId, 'small', 'eu', 1);
      const res = await other.client.callError(activateSubscription, {
        params: { id: other.accountId },
      });
      expect(res.status).toBe(503);
      expect(res.body.error).toBe('billing_unavailable');
      expect(await status(other.accountId)).toBe('inactive');
      expect(
        await db()
          .selectFrom('billingCustomers')
          .select('customerId')
          .where('accountId', '=', other.accountId)
          .execute(),
      ).toEqual([]);

      const syncFailures = jobFailures(syncSubscription.name);
      const collectFailures = jobFailures(collectInvoice.name);
      const kind = { accountId, product: 'plain_vm', size: 'small', region: 'eu' } as const;
      await t.ctx.database.transaction((tx) => takeSlot(tx, kind, t.clock.now(), t.ctx.jobs));
      await collect(number);
      await waitFor(() => jobFailures(syncSubscription.name) > syncFailures, 30_000, 'sync failed');
      await waitFor(
        () => jobFailures(collectInvoice.name) > collectFailures,
        30_000,
        'collect failed',
      );
    } finally {
      standIn.down = false;
    }
    await waitFor(
      async () => quantities(await subscriptionOf(accountId)).svc_plain_vm_small_eu_monthly === 1,
      30_000,
      'synced after the outage',
    );
    const providerInvoiceId = await waitFor(
      async () => (await invoiceRow(number)).providerInvoiceId ?? undefined,
      30_000,
      'collected after the outage',
    );
    expect(
      [...standIn.invoiceItems.values()].filter((i) => i.invoice === providerInvoiceId),
    ).toHaveLength(2);
    expect(standIn.invoices.get(providerInvoiceId)?.status).toBe('paid');
    const logs = t.logs.text();
    expect(logs).not.toContain(SECRET_KEY);
    expect(logs).not.toContain(WEBHOOK_SECRET);
  });
});

describe.each(databaseKinds)('No payment processor on %s', (kind) => {
  let t: TestContext;
  beforeAll(async () => {
    t = await createTestContext(kind);
  });
  afterAll(() => t?.close());

  it('activates at once, and has no webhook (404)', async () => {
    const client = t.newClient();
    const { account } = await signUpUser(client);
    const res = await client.call(activateSubscription, { params: { id: account.id } });
    expect(res.body).toEqual({
      accountId: account.id,
      subscriptionActive: true,
      subscriptionStatus: 'active',
    });
    const webhook = await t.newClient().request('POST', WEBHOOK, {
      rawBody: '{}',
      headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=00' },
      origin: null,
    });
    expect(webhook.status).toBe(404);
    expect(errorOf(webhook).error).toBe('not_found');
  });
});
