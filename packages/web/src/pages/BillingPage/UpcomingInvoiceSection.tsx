import type { InvoiceLine, UpcomingInvoice } from '@svc/contract';
import { useQuery } from '@tanstack/react-query';
import { Receipt } from 'lucide-react';
import { upcomingInvoiceQuery } from '../../api/queries/billing.js';
import { Empty } from '../../components/Empty.js';
import { QueryView } from '../../components/QueryView.js';
import { TableScroll } from '../../components/TableScroll.js';
import { useCurrentAccount } from '../../modules/account-context.js';
import {
  type Currency,
  formatDate,
  formatHours,
  formatMoney,
  formatPeriod,
} from '../../modules/format.js';

/** The running bill (owners and admins): the cost so far, the projection, and its lines. */
export function UpcomingInvoiceSection() {
  const { account } = useCurrentAccount();
  const upcoming = useQuery(upcomingInvoiceQuery(account.id));
  return (
    <>
      <h2>This month</h2>
      <QueryView query={upcoming} what="the running bill">
        {(bill) => <UpcomingInvoiceView bill={bill} />}
      </QueryView>
    </>
  );
}

function UpcomingInvoiceView({ bill }: { bill: UpcomingInvoice }) {
  const money = (amount: number) => formatMoney(amount, bill);
  return (
    <>
      <dl className="facts" data-testid="running-bill">
        <dt>Cost so far</dt>
        <dd>
          <strong>{money(bill.total)}</strong>{' '}
          <span className="muted">(as of {formatDate(bill.asOf)})</span>
        </dd>
        <dt>Projected</dt>
        <dd>
          {money(bill.projectedTotal)}{' '}
          <span className="muted">by the period’s end, if nothing changes</span>
        </dd>
        <dt>Period</dt>
        <dd>{formatPeriod(bill.periodStart, bill.periodEnd)} (UTC)</dd>
      </dl>
      {bill.lines.length === 0 ? (
        <Empty title="Nothing charged this month yet." icon={Receipt} />
      ) : (
        <InvoiceLinesTable lines={bill.lines} total={bill.total} currency={bill} />
      )}
    </>
  );
}

/** A bill's lines, with what each counts and costs, and their total. */
export function InvoiceLinesTable(props: {
  lines: readonly InvoiceLine[];
  total: number;
  currency: Currency;
}) {
  const money = (amount: number) => formatMoney(amount, props.currency);
  return (
    <TableScroll label="Invoice lines">
      <table aria-label="Invoice lines">
        <thead>
          <tr>
            <th scope="col">Line</th>
            <th scope="col">Counted</th>
            <th scope="col">Price</th>
            <th scope="col" className="amount">
              Amount
            </th>
          </tr>
        </thead>
        <tbody>
          {props.lines.map((line, index) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: lines have no id; the list is replaced whole
            <tr key={index}>
              <th scope="row">{line.description}</th>
              <td>{counted(line)}</td>
              <td>{unitPrice(line, money)}</td>
              <td className="amount">{money(line.amount)}</td>
            </tr>
          ))}
        </tbody>
        <tfoot>
          <tr>
            <th scope="row" colSpan={3}>
              Total
            </th>
            <td className="amount">
              <strong>{money(props.total)}</strong>
            </td>
          </tr>
        </tfoot>
      </table>
    </TableScroll>
  );
}

function counted(line: InvoiceLine): string {
  const hours = formatHours(line.seconds);
  if (line.kind === 'slot')
    return `${hours} slot-hours (${line.quantity === 1 ? 'one slot' : `${line.quantity} slots`} held)`;
  if (line.kind === 'metered') return `${hours} hours${line.rate === 'paused' ? ' stopped' : ''}`;
  if (line.kind === 'snapshot')
    return `${hours} snapshot-hours (${line.quantity === 1 ? 'one snapshot' : `${line.quantity} snapshots`} held)`;
  return '';
}

function unitPrice(line: InvoiceLine, money: (amount: number) => string): string {
  if (line.kind === 'slot') return `${money(line.unitAmount)}/month a slot`;
  if (line.kind === 'metered') return `${money(line.unitAmount)}/hour`;
  if (line.kind === 'snapshot') return `${money(line.unitAmount)}/GB-month`;
  return 'monthly cap';
}
