import type { InvoiceLine } from '@svc/contract';
import type { Selectable } from 'kysely';
import { sql } from 'kysely';
import type { Executor } from '../db/database.js';
import type { InvoiceLinesTable, InvoicesTable } from '../db/schema.js';

/** An invoice as the service reads it: amounts as numbers (bigint columns come back as strings). */
export interface InvoiceRow extends Omit<InvoicesTable, 'total'> {
  readonly total: number;
}

const INVOICE_COLUMNS = [
  'number',
  'accountId',
  'periodStart',
  'periodEnd',
  'currency',
  'minorUnitDigits',
  'total',
  'status',
  'issuedAt',
  'dueAt',
  'paidAt',
  'providerInvoiceId',
] as const;

const toInvoice = <R extends { total: string }>(row: R) => ({ ...row, total: Number(row.total) });

/** The invoice counter, locked until the caller's transaction ends: issuers take turns here. */
export async function lockInvoiceCounter(tx: Executor) {
  return tx
    .selectFrom('invoiceCounter')
    .select(['lastNumber', 'closedThrough'])
    .forUpdate()
    .executeTakeFirstOrThrow();
}

/** The next invoice number; in the issuing transaction, so a rollback gives it back (no gaps). */
export async function takeInvoiceNumber(tx: Executor): Promise<number> {
  const row = await tx
    .updateTable('invoiceCounter')
    .set((eb) => ({ lastNumber: eb('lastNumber', '+', 1) }))
    .returning('lastNumber')
    .executeTakeFirstOrThrow();
  return row.lastNumber;
}

/** The end of the latest month closed for every account (null before the first close). */
export async function closedThrough(db: Executor): Promise<Date | null> {
  const row = await db
    .selectFrom('invoiceCounter')
    .select('closedThrough')
    .executeTakeFirstOrThrow();
  return row.closedThrough;
}

/** Records that every account's period up to `end` is closed; never moves it back. */
export async function markClosedThrough(db: Executor, end: Date): Promise<void> {
  await db
    .updateTable('invoiceCounter')
    .set({ closedThrough: end })
    .where((eb) => eb.or([eb('closedThrough', 'is', null), eb('closedThrough', '<', end)]))
    .execute();
}

/** Whether the account has its invoice for the period starting at `periodStart`. */
export async function hasInvoiceFor(
  db: Executor,
  accountId: string,
  periodStart: Date,
): Promise<boolean> {
  const row = await db
    .selectFrom('invoices')
    .select('number')
    .where('accountId', '=', accountId)
    .where('periodStart', '=', periodStart)
    .executeTakeFirst();
  return row !== undefined;
}

/** Inserts an invoice and its lines (positions 0…n-1, in the order given). */
export async function insertInvoice(
  tx: Executor,
  invoice: Omit<InvoicesTable, 'total' | 'paidAt' | 'providerInvoiceId'> & { total: number },
  lines: readonly InvoiceLine[],
): Promise<void> {
  await tx
    .insertInto('invoices')
    .values({ ...invoice, paidAt: null, providerInvoiceId: null })
    .execute();
  if (lines.length === 0) return;
  await tx
    .insertInto('invoiceLines')
    .values(lines.map((line, position) => ({ ...line, invoiceNumber: invoice.number, position })))
    .execute();
}

/** One invoice by its number, if it is the account's (another account's is not found). */
export async function findInvoice(
  db: Executor,
  number: number,
  accountId?: string,
): Promise<InvoiceRow | undefined> {
  let query = db.selectFrom('invoices').select(INVOICE_COLUMNS).where('number', '=', number);
  if (accountId !== undefined) query = query.where('accountId', '=', accountId);
  const row = await query.executeTakeFirst();
  return row && toInvoice(row);
}

/** An invoice's lines, in their order. */
export async function invoiceLines(db: Executor, number: number): Promise<InvoiceLine[]> {
  const rows = await db
    .selectFrom('invoiceLines')
    .selectAll()
    .where('invoiceNumber', '=', number)
    .orderBy('position')
    .execute();
  return rows.map(toLine);
}

function toLine({
  invoiceNumber: _,
  position: __,
  ...row
}: Selectable<InvoiceLinesTable>): InvoiceLine {
  return {
    ...row,
    seconds: Number(row.seconds),
    unitAmount: Number(row.unitAmount),
    amount: Number(row.amount),
  };
}

/** Invoices newest first: one account's, or every account's (the operator's list). */
export async function listInvoices(
  db: Executor,
  filter: { accountId?: string; limit?: number },
): Promise<(InvoiceRow & { accountSlug: string | null })[]> {
  let query = db
    .selectFrom('invoices as i')
    .leftJoin('accounts as a', 'a.id', 'i.accountId')
    .select(INVOICE_COLUMNS.map((column) => `i.${column}` as const))
    .select('a.slug as accountSlug')
    .orderBy('i.number', 'desc');
  if (filter.accountId !== undefined) query = query.where('i.accountId', '=', filter.accountId);
  if (filter.limit !== undefined) query = query.limit(filter.limit);
  return (await query.execute()).map(toInvoice);
}

/** Marks an open invoice paid; undefined when it is not open (paid already, or no such number). */
export async function markInvoicePaid(tx: Executor, number: number, at: Date) {
  const row = await tx
    .updateTable('invoices')
    .set({ status: 'paid', paidAt: at })
    .where('number', '=', number)
    .where('status', '=', 'open')
    .returning(INVOICE_COLUMNS)
    .executeTakeFirst();
  return row && toInvoice(row);
}

/** When the account's oldest open invoice that is past due fell due; null when none is. */
export async function oldestOverdueDueAt(
  db: Executor,
  accountId: string,
  now: Date,
): Promise<Date | null> {
  const row = await db
    .selectFrom('invoices')
    .select((eb) => eb.fn.min('dueAt').as('dueAt'))
    .where('accountId', '=', accountId)
    .where('status', '=', 'open')
    .where('dueAt', '<=', now)
    .executeTakeFirst();
  return row?.dueAt ? new Date(row.dueAt) : null;
}

/**
 * The first instant of the ledger: its earliest metered period, slot or snapshot storage period
 * (null when empty).
 */
export async function ledgerStart(db: Executor): Promise<Date | null> {
  const row = await sql<{ at: Date | null }>`select least(
      (select min(started_at) from usage_periods where billing_type = 'metered'),
      (select min(created_at) from subscription_slots),
      (select min(started_at) from snapshot_usage)) as at`.execute(db);
  const at = row.rows[0]?.at;
  return at ? new Date(at) : null;
}

/**
 * Accounts whose subscription standing may have to change: active with an open invoice past its
 * due date, or past due. With the due date of each one's oldest overdue open invoice (null: none).
 */
export async function dunningCandidates(db: Executor, now: Date) {
  const overdue = db
    .selectFrom('invoices')
    .select('accountId')
    .select((eb) => eb.fn.min('dueAt').as('dueAt'))
    .where('status', '=', 'open')
    .where('dueAt', '<=', now)
    .groupBy('accountId');
  return db
    .selectFrom('accounts as a')
    .leftJoin(overdue.as('o'), 'o.accountId', 'a.id')
    .select(['a.id', 'a.subscriptionStatus', 'o.dueAt'])
    .where((eb) =>
      eb.or([
        eb('a.subscriptionStatus', '=', 'past_due'),
        eb.and([eb('a.subscriptionStatus', '=', 'active'), eb('o.dueAt', 'is not', null)]),
      ]),
    )
    .orderBy('a.id')
    .execute();
}

/** The name of an invoice's account, while it exists. */
export const invoiceAccountName = (db: Executor, accountId: string) =>
  db.selectFrom('accounts').select('name').where('id', '=', accountId).executeTakeFirst();

/** Records the processor's invoice that collects ours, once. */
export async function setProviderInvoiceId(
  db: Executor,
  number: number,
  providerInvoiceId: string,
): Promise<void> {
  await db
    .updateTable('invoices')
    .set({ providerInvoiceId })
    .where('number', '=', number)
    .where('providerInvoiceId', 'is', null)
    .execute();
}
