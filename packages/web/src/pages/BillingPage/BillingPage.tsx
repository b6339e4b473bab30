import { useQuery } from '@tanstack/react-query';
import { usageQuery } from '../../api/queries/billing.js';
import { QueryView } from '../../components/QueryView.js';
import { canManage, useCurrentAccount } from '../../modules/account-context.js';
import { useTitle } from '../../modules/use-title.js';
import { InvoicesSection } from './InvoicesSection.js';
import { SlotsSection } from './SlotsSection.js';
import { SubscriptionSection } from './SubscriptionSection.js';
import { UpcomingInvoiceSection } from './UpcomingInvoiceSection.js';
import { UsageTable } from './UsageTable.js';

/**
 * The subscription, this month's bill, the slots, past invoices and this month's hours. Money is
 * for owners and admins (the invoice endpoints answer others 403): members see the rest.
 */
export function BillingPage() {
  const { account } = useCurrentAccount();
  const usage = useQuery(usageQuery(account.id));
  const manager = canManage(account);
  useTitle('Billing', account.name);
  return (
    <section>
      <h1>Billing</h1>
      <SubscriptionSection />
      {manager ? (
        <UpcomingInvoiceSection />
      ) : (
        <p className="hint">Owners and admins see this month’s bill and the invoices.</p>
      )}
      <SlotsSection />
      {manager && <InvoicesSection />}

      <h2>Usage this month</h2>
      <QueryView query={usage} what="usage">
        {(data) => <UsageTable usage={data} />}
      </QueryView>
    </section>
  );
}
