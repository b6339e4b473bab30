import type { Clock } from '../adapters/clock.js';
import type { Prices } from '../config/price-book.js';
import type { Database } from '../db/database.js';
import type { JobQueue } from '../jobs/queue.js';
import type { Logger } from '../logger.js';
import { collectInvoice } from './billing.job-types.js';
import * as invoices from './invoices.repo.js';
import { accountLedger, accountsToBill } from './ledger.repo.js';
import { billLines, monthStart, nextMonthStart, totalOf } from './money.js';

/**
 * A month is closed this long after it ends, so that a state change written at its end by a
 * process whose clock runs a little late still lands in it before its invoices are issued.
 */
export const CLOSE_DELAY_MS = 5 * 60_000;

/** After downtime, or at the first close, months are caught up this far back at most. */
export const MAX_CATCH_UP_MONTHS = 12;

/** Accounts read per page of the ledger's accounts. */
const ACCOUNTS_PAGE = 200;

const DAY_MS = 86_400_000;

export interface PeriodCloseDeps {
  readonly database: Database;
  readonly clock: Clock;
  readonly jobs: Pick<JobQueue, 'enqueue'>;
  readonly prices: Prices;
  /** `INVOICE_DUE_DAYS`: an invoice is due this many days after it is issued. */
  readonly invoiceDueDays: number;
  readonly log: Logger;
}

export interface PeriodCloseResult {
  /** The months closed, by their first instant. */
  readonly months: string[];
  /** Invoices issued by this run. */
  readonly issued: number;
  /** Accounts whose invoice for a month existed already (another run issued it). */
  readonly existing: number;
}

/**
 * The months to close at `now`, by their first instant: every calendar month (UTC) that ended at
 * least CLOSE_DELAY_MS ago and is not closed yet. `closedThrough`: where the last close ended;
 * without one, the ledger's first month. At most MAX_CATCH_UP_MONTHS of them.
 */
export function monthsToClose(
  now: Date,
  closedThrough: Date | null,
  ledgerStart: Date | null,
): Date[] {
  const end = monthStart(new Date(now.getTime() - CLOSE_DELAY_MS));
  const from = closedThrough ?? (ledgerStart && monthStart(ledgerStart));
  if (!from) return [];
  const earliest = new Date(
    Date.UTC(end.getUTCFullYear(), end.getUTCMonth() - MAX_CATCH_UP_MONTHS, 1),
  );
  const months: Date[] = [];
  for (let month = from < earliest ? earliest : from; month < end; month = nextMonthStart(month)) {
    months.push(month);
  }
  return months;
}

/**
 * Closes every finished month not closed yet: each account with lines in it gets one invoice,
 * numbered from the one counter, with its lines, in one transaction that also enqueues the
 * invoice's collection. Safe to run twice at once, or again after being killed: an account's
 * invoice for a month is issued once (the counter's lock serializes issuers, who look again
 * under it; the unique (account, period) constraint backs that), and a number is taken only by
 * a transaction that commits, so numbers have no gaps. A month counts as closed for every account
 * (`closed_through`) only once all of its accounts are done.
 */
export async function closePeriods(
  deps: PeriodCloseDeps,
  options: {
    /** Called after each invoice is committed (tools and tests watching a long close). */
    onIssued?: (number: number) => void | Promise<void>;
  } = {},
): Promise<PeriodCloseResult> {
  const { db } = deps.database;
  const months = monthsToClose(
    deps.clock.now(),
    await invoices.closedThrough(db),
    await invoices.ledgerStart(db),
  );
  let issued = 0;
  let existing = 0;
  for (const periodStart of months) {
    const periodEnd = nextMonthStart(periodStart);
    let after: string | null = null;
    for (;;) {
      const page = await accountsToBill(db, periodStart, periodEnd, after, ACCOUNTS_PAGE);
      for (const accountId of page) {
        const outcome = await closeAccountPeriod(deps, accountId, periodStart, periodEnd);
        if (outcome === 'existing') existing += 1;
        if (typeof outcome === 'number') {
          issued += 1;
          await options.onIssued?.(outcome);
        }
      }
      if (page.length < ACCOUNTS_PAGE) break;
      after = page[page.length - 1] as string;
    }
    await invoices.markClosedThrough(db, periodEnd);
    deps.log.info({ periodStart, issued, existing }, 'billing period closed');
  }
  return { months: months.map((month) => month.toISOString()), issued, existing };
}

/**
 * One account's invoice for one month: its number, `existing` when the account has it already,
 * or `empty` when the month has no line for it (no invoice then).
 */
export async function closeAccountPeriod(
  deps: PeriodCloseDeps,
  accountId: string,
  periodStart: Date,
  periodEnd: Date,
): Promise<number | 'existing' | 'empty'> {
  const { db } = deps.database;
  // The cheap look first: a second run passes over what the first one issued.
  if (await invoices.hasInvoiceFor(db, accountId, periodStart)) return 'existing';
  // The month is over: its ledger no longer changes, so it is read before the counter is taken.
  const { periods, slots, snapshots } = await accountLedger(db, accountId, periodStart, periodEnd);
  const window = { periodStart, periodEnd, asOf: periodEnd };
  const lines = billLines(deps.prices, window, periods, slots, snapshots);
  if (lines.length === 0) return 'empty';
  return deps.database.transaction(async (tx) => {
    await invoices.lockInvoiceCounter(tx);
    // Another issuer may have committed this invoice while this one waited for the counter.
    if (await invoices.hasInvoiceFor(tx, accountId, periodStart)) return 'existing';
    const number = await invoices.takeInvoiceNumber(tx);
    const issuedAt = deps.clock.now();
    await invoices.insertInvoice(
      tx,
      {
        number,
        accountId,
        periodStart,
        periodEnd,
        currency: deps.prices.book.currency,
        minorUnitDigits: deps.prices.book.minorUnitDigits,
        total: totalOf(lines),
        status: 'open',
        issuedAt,
        dueAt: new Date(issuedAt.getTime() + deps.invoiceDueDays * DAY_MS),
      },
      lines,
    );
    await deps.jobs.enqueue(tx, collectInvoice, { number });
    return number;
  });
}
