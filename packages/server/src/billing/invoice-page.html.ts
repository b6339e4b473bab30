import type { Invoice } from '@svc/contract';
import { escapeHtml } from '../util/escape-html.js';

/**
 * The page's own policy: its styles are inline, and nothing else loads (no script, no image).
 * The route sets it; the app's default (`default-src 'self'`) would refuse the inline styles.
 */
export const INVOICE_PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export interface InvoicePageInput {
  readonly invoice: Invoice;
  /** The account billed; null once it is gone (an invoice outlives its account). */
  readonly accountName: string | null;
  /** The service's public URL: the operator who issues the invoice. */
  readonly publicUrl: string;
}

const STYLE = `
body { font: 14px/1.45 system-ui, sans-serif; color: #111; margin: 2rem auto; max-width: 60rem; padding: 0 1rem; }
header { display: flex; justify-content: space-between; gap: 2rem; border-bottom: 2px solid #111; padding-bottom: 1rem; }
h1 { font-size: 1.6rem; margin: 0 0 .25rem; }
dl { display: grid; grid-template-columns: max-content auto; gap: .2rem 1rem; margin: 1rem 0; }
dt { color: #555; }
dd { margin: 0; }
table { width: 100%; border-collapse: collapse; margin-top: 1rem; }
th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid #ddd; vertical-align: top; }
th.num, td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tfoot td { font-weight: 600; border-bottom: none; border-top: 2px solid #111; }
.status { display: inline-block; padding: .1rem .5rem; border: 1px solid currentColor; border-radius: .25rem; text-transform: uppercase; font-size: .8rem; }
.status.paid { color: #1a7f37; }
.status.open { color: #9a6700; }
.note { color: #555; font-size: .85rem; margin-top: 1.5rem; }
@media print {
  body { margin: 0; max-width: none; font-size: 11pt; }
  .status { border-color: #111; color: #111; }
  .note { display: none; }
  tr { break-inside: avoid; }
  a { color: inherit; text-decoration: none; }
}
`;

/** `2026-10-01`: dates of the invoice, the same for every reader. */
const day = (iso: string) => iso.slice(0, 10);

/** Amounts in the invoice's currency, from its minor units (cents). */
function moneyFormat(invoice: Invoice) {
  const format = new Intl.NumberFormat('en', {
    style: 'currency',
    currency: invoice.currency,
    minimumFractionDigits: invoice.minorUnitDigits,
    maximumFractionDigits: invoice.minorUnitDigits,
  });
  return (minor: number) => format.format(minor / 10 ** invoice.minorUnitDigits);
}

/** Charged time as hours, minutes and seconds: `2 h 03 min 07 s`. */
export function formatSeconds(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  const pad = (n: number) => String(n).padStart(2, '0');
  return h > 0 ? `${h} h ${pad(m)} min ${pad(s)} s` : m > 0 ? `${m} min ${pad(s)} s` : `${s} s`;
}

const UNIT: Readonly<Record<Invoice['lines'][number]['kind'], string>> = {
  slot: '/ month',
  metered: '/ hour',
  cap: '',
  snapshot: '/ GB-month',
};

/** One invoice as a page to read and print: every value from the database is escaped. */
export function invoicePage({ invoice, accountName, publicUrl }: InvoicePageInput): string {
  const money = moneyFormat(invoice);
  const operator = new URL(publicUrl).host;
  const rows = invoice.lines
    .map(
      (line) =>
        `<tr><td>${escapeHtml(line.description)}</td>` +
        `<td class="num">${line.kind === 'cap' ? '' : escapeHtml(formatSeconds(line.seconds))}</td>` +
        `<td class="num">${line.quantity}</td>` +
        `<td class="num">${escapeHtml(`${money(line.unitAmount)} ${UNIT[line.kind]}`.trim())}</td>` +
        `<td class="num">${escapeHtml(money(line.amount))}</td></tr>`,
    )
    .join('\n');
  const title = `Invoice ${invoice.number}`;
  const paid = invoice.paidAt ? `<dt>Paid</dt><dd>${escapeHtml(day(invoice.paidAt))}</dd>` : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body>
<header>
<div><h1>${escapeHtml(title)}</h1><span class="status ${escapeHtml(invoice.status)}">${escapeHtml(invoice.status)}</span></div>
<div><strong>${escapeHtml(operator)}</strong><br><a href="${escapeHtml(publicUrl)}">${escapeHtml(publicUrl)}</a></div>
</header>
<dl>
<dt>Billed to</dt><dd>${escapeHtml(accountName ?? invoice.accountId)}</dd>
<dt>Period</dt><dd>${escapeHtml(day(invoice.periodStart))} to ${escapeHtml(day(new Date(Date.parse(invoice.periodEnd) - 1).toISOString()))} (UTC)</dd>
<dt>Issued</dt><dd>${escapeHtml(day(invoice.issuedAt))}</dd>
<dt>Due</dt><dd>${escapeHtml(day(invoice.dueAt))}</dd>
${paid}
</dl>
<table>
<thead><tr><th>Description</th><th class="num">Time</th><th class="num">Quantity</th><th class="num">Unit price</th><th class="num">Amount</th></tr></thead>
<tbody>
${rows}
</tbody>
<tfoot><tr><td colspan="4">Total (${escapeHtml(invoice.currency)})</td><td class="num">${escapeHtml(money(invoice.total))}</td></tr></tfoot>
</table>
<p class="note">Each line is rounded once, half up, to the minor unit; the total is the sum of the lines. Print this page to keep a copy.</p>
</body></html>`;
}
