import { buildPath, getInvoicePage, type InvoiceSummary } from '@svc/contract';
import { useQuery } from '@tanstack/react-query';
import { Receipt } from 'lucide-react';
import { invoicesQuery } from '../../api/queries/billing.js';
import { Empty } from '../../components/Empty.js';
import { QueryView } from '../../components/QueryView.js';
import { TableScroll } from '../../components/TableScroll.js';
import { useCurrentAccount } from '../../modules/account-context.js';
import { formatDay, formatMoney, formatPeriod } from '../../modules/format.js';

/** Past invoices (owners and admins), newest first, each with its printable page. */
export function InvoicesSection() {
  const { account } = useCurrentAccount();
  const invoices = useQuery(invoicesQuery(account.id));
  return (
    <>
      <h2>Invoices</h2>
      <QueryView query={invoices} what="invoices">
        {(list) =>
          list.length === 0 ? (
            <Empty title="No invoices yet." icon={Receipt}>
              Each month’s invoice is issued when the month ends.
            </Empty>
          ) : (
            <TableScroll label="Invoices">
              <table aria-label="Invoices">
                <thead>
                  <tr>
                    <th scope="col">Number</th>
                    <th scope="col">Period</th>
                    <th scope="col" className="amount">
                      Total
                    </th>
                    <th scope="col">Status</th>
                    <th scope="col">Due</th>
                    <th scope="col">
                      <span className="visually-hidden">Printable invoice</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {list.map((invoice) => (
                    <InvoiceRow key={invoice.number} invoice={invoice} />
                  ))}
                </tbody>
              </table>
            </TableScroll>
          )
        }
      </QueryView>
    </>
  );
}

function InvoiceRow({ invoice }: { invoice: InvoiceSummary }) {
  const overdue = invoice.status === 'open' && new Date(invoice.dueAt).getTime() < Date.now();
  const print = buildPath(getInvoicePage.path, {
    id: invoice.accountId,
    number: String(invoice.number),
  });
  return (
    <tr>
      <th scope="row">{invoice.number}</th>
      <td>{formatPeriod(invoice.periodStart, invoice.periodEnd)}</td>
      <td className="amount">{formatMoney(invoice.total, invoice)}</td>
      <td>
        <span
          className={`badge badge-${invoice.status === 'paid' ? 'ok' : overdue ? 'bad' : 'idle'}`}
        >
          {invoice.status === 'paid' ? 'paid' : overdue ? 'open, overdue' : 'open'}
        </span>
      </td>
      <td>{formatDay(invoice.dueAt)}</td>
      <td>
        <a href={print}>Print invoice {invoice.number}</a>
      </td>
    </tr>
  );
}
