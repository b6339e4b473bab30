import type { Executor } from '../db/database.js';
import {
  findInvoice,
  invoiceAccountName,
  invoiceLines,
  markInvoicePaid,
  setProviderInvoiceId,
} from './invoices.repo.js';
import type { IssuedInvoice } from './payment-processor.js';

/** An issued invoice with its lines and status, as a payment processor collects it. */
export async function loadIssuedInvoice(
  db: Executor,
  number: number,
): Promise<(IssuedInvoice & { status: 'open' | 'paid' }) | undefined> {
  const invoice = await findInvoice(db, number);
  if (!invoice) return undefined;
  const account = await invoiceAccountName(db, invoice.accountId);
  const lines = await invoiceLines(db, number);
  return {
    ...invoice,
    accountName: account?.name ?? invoice.accountId,
    // Stored in this order, from position 0 (invoices.repo.ts).
    lines: lines.map((line, position) => ({ ...line, position })),
  };
}

/** Records what the processor made of an invoice: its own invoice's id, and paid if settled. */
export async function recordCollection(
  db: Executor,
  number: number,
  outcome: { providerInvoiceId: string | null; settled: boolean },
  at: Date,
): Promise<void> {
  if (outcome.providerInvoiceId) {
    await setProviderInvoiceId(db, number, outcome.providerInvoiceId);
  }
  if (outcome.settled) await markInvoicePaid(db, number, at);
}
