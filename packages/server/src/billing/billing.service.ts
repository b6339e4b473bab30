import type { Invoice, InvoiceSummary, Slot, UpcomingInvoice, Usage } from '@svc/contract';
import type { Membership } from '../accounts/membership.js';
import type { Clock } from '../adapters/clock.js';
import { recordAuditEvent } from '../audit/audit.js';
import type { BillingConfig } from '../config/config.js';
import type { Prices } from '../config/price-book.js';
import type { Database } from '../db/database.js';
import { AppError } from '../errors.js';
import type { JobQueue } from '../jobs/queue.js';
import type { Logger } from '../logger.js';
import type { Notices } from '../notices/notices.service.js';
import { applyStanding, runDunning } from './dunning.js';
import { invoicePage } from './invoice-page.html.js';
import * as invoices from './invoices.repo.js';
import { accountLedger } from './ledger.repo.js';
import { billLines, monthStart, nextMonthStart, totalOf } from './money.js';
import type { PaymentProcessor } from './payment-processor.js';
import { closePeriods, type PeriodCloseDeps } from './period-close.js';
import { removeSlot } from './slots.js';
import { listSlots } from './slots.repo.js';
import { lockSubscriptionStatus } from './subscription.repo.js';
import { logSubscriptionMove } from './subscription-log.js';
import { usageByResource } from './usage.js';

const toSummary = ({ providerInvoiceId: _, ...row }: invoices.InvoiceRow): InvoiceSummary => ({
  ...row,
  periodStart: row.periodStart.toISOString(),
  periodEnd: row.periodEnd.toISOString(),
  issuedAt: row.issuedAt.toISOString(),
  dueAt: row.dueAt.toISOString(),
  paidAt: row.paidAt?.toISOString() ?? null,
});

export function createBillingService({
  database,
  clock,
  membership,
  prices,
  jobs,
  billing,
  processor,
  publicUrl,
  log,
  notices,
}: {
  database: Database;
  clock: Clock;
  membership: Membership;
  prices: Prices;
  jobs: Pick<JobQueue, 'enqueue'>;
  billing: Pick<BillingConfig, 'invoiceDueDays' | 'graceDays'>;
  processor: Pick<PaymentProcessor, 'subscriptionsFollowInvoices'>;
  publicUrl: string;
  log: Logger;
  notices: Pick<Notices, 'subscriptionPastDue'>;
}) {
  const closeDeps: PeriodCloseDeps = {
    database,
    clock,
    jobs,
    prices,
    invoiceDueDays: billing.invoiceDueDays,
    log,
  };
  const dunningDeps = { database, clock, graceDays: billing.graceDays, log, notices };

  /** The account's invoice by its number, with its lines (owners and admins). */
  async function invoiceOf(userId: string, accountId: string, number: number) {
    const { account } = await membership.requireManager(database.db, { userId }, accountId);
    const row = await invoices.findInvoice(database.db, number, accountId);
    if (!row) throw new AppError('not_found');
    const invoice: Invoice = {
      ...toSummary(row),
      lines: await invoices.invoiceLines(database.db, number),
    };
    return { invoice, account };
  }

  return {
    /**
     * The current calendar month so far, and its projection: every open period, held slot and
     * stored snapshot running on to the month's end, "if nothing changes" (owners and admins).
     */
    async upcomingInvoice(userId: string, accountId: string): Promise<UpcomingInvoice> {
      await membership.requireManager(database.db, { userId }, accountId);
      const asOf = clock.now();
      const periodStart = monthStart(asOf);
      const periodEnd = nextMonthStart(asOf);
      const { periods, slots, snapshots } = await accountLedger(
        database.db,
        accountId,
        periodStart,
        asOf,
      );
      const lines = billLines(prices, { periodStart, periodEnd, asOf }, periods, slots, snapshots);
      const projected = billLines(
        prices,
        { periodStart, periodEnd, asOf: periodEnd },
        periods,
        slots,
        snapshots,
      );
      return {
        accountId,
        currency: prices.book.currency,
        minorUnitDigits: prices.book.minorUnitDigits,
        periodStart: periodStart.toISOString(),
        periodEnd: periodEnd.toISOString(),
        asOf: asOf.toISOString(),
        lines,
        total: totalOf(lines),
        projectedTotal: totalOf(projected),
      };
    },

    /** The account's invoices, newest first (owners and admins). */
    async listInvoices(userId: string, accountId: string): Promise<InvoiceSummary[]> {
      await membership.requireManager(database.db, { userId }, accountId);
      return (await invoices.listInvoices(database.db, { accountId })).map(toSummary);
    },

    async getInvoice(userId: string, accountId: string, number: number): Promise<Invoice> {
      return (await invoiceOf(userId, accountId, number)).invoice;
    },

    /** The invoice as a printable HTML page. */
    async invoicePage(userId: string, accountId: string, number: number): Promise<string> {
      const { invoice, account } = await invoiceOf(userId, accountId, number);
      return invoicePage({ invoice, accountName: account.name, publicUrl });
    },

    /** Every invoice, or one account's, newest first (the operator's list). */
    async listAllInvoices(filter: { accountId?: string }) {
      const rows = await invoices.listInvoices(database.db, filter);
      return rows.map((row) => ({ ...toSummary(row), accountSlug: row.accountSlug }));
    },

    /**
     * The operator records a payment: the invoice is paid, audited as `account.invoice_paid`, and with
     * BILLING_PROVIDER=none the account's subscription stands where its invoices put it now.
     */
    async markInvoicePaid(number: number): Promise<InvoiceSummary> {
      const { summary, moved } = await database.transaction(async (tx) => {
        const paid = await invoices.markInvoicePaid(tx, number, clock.now());
        if (!paid) {
          const found = await invoices.findInvoice(tx, number);
          if (!found) throw new AppError('not_found', { message: `no invoice ${number}` });
          throw new AppError('invalid_state', { message: `invoice ${number} is paid already` });
        }
        await recordAuditEvent(
          tx,
          {
            accountId: paid.accountId,
            actorUserId: null,
            action: 'account.invoice_paid',
            resourceKind: 'account',
            resourceId: paid.accountId,
            data: { number, total: paid.total, currency: paid.currency },
          },
          clock.now(),
        );
        // The standing it puts the subscription in, logged once this commits.
        let move = null;
        if (processor.subscriptionsFollowInvoices) {
          const account = await lockSubscriptionStatus(tx, paid.accountId);
          if (account) {
            const overdue = await invoices.oldestOverdueDueAt(tx, paid.accountId, clock.now());
            const to = await applyStanding(tx, dunningDeps, account, overdue);
            if (to) move = { accountId: account.id, from: account.subscriptionStatus, to };
          }
        }
        return { summary: toSummary(paid), moved: move };
      });
      if (moved) logSubscriptionMove(log, { ...moved, cause: 'invoices' });
      return summary;
    },

    /** Closes every finished month not yet invoiced (job and operator). */
    closePeriods: (options?: Parameters<typeof closePeriods>[1]) =>
      closePeriods(closeDeps, options),

    /** BILLING_PROVIDER=none: subscriptions follow their invoices (job). */
    runDunning: () => runDunning(dunningDeps),

    async listSlots(userId: string, accountId: string): Promise<Slot[]> {
      await membership.requireMember(database.db, { userId }, accountId);
      const slots = await listSlots(database.db, accountId);
      return slots.map((slot) => ({
        ...slot,
        monthlyPrice: prices.cell(slot.product, slot.size, slot.region).monthly,
        createdAt: slot.createdAt.toISOString(),
      }));
    },

    /** This calendar month's usage so far, by machine (any member). */
    async usage(userId: string, accountId: string): Promise<Usage> {
      await membership.requireMember(database.db, { userId }, accountId);
      const asOf = clock.now();
      const periodStart = monthStart(asOf);
      const resources = await usageByResource(database.db, accountId, periodStart, asOf);
      return { periodStart: periodStart.toISOString(), asOf: asOf.toISOString(), resources };
    },

    /** Owners and admins remove free slots; a slot in use answers 409. */
    async removeSlot(userId: string, accountId: string, slotId: string): Promise<void> {
      await database.transaction(async (tx) => {
        await membership.requireManager(tx, { userId }, accountId);
        const outcome = await removeSlot(tx, accountId, slotId, clock.now(), jobs);
        if (outcome === 'not_found') throw new AppError('not_found');
        if (outcome === 'in_use') throw new AppError('invalid_state', { message: 'slot in use' });
      });
    },
  };
}

export type BillingService = ReturnType<typeof createBillingService>;
