import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { subscriptionMutation } from '../../api/queries/accounts.js';
import { deleteSlotMutation, slotsQuery, usageQuery } from '../../api/queries/billing.js';
import { ConfirmButton } from '../../components/ConfirmButton.js';
import { Empty } from '../../components/Empty.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { QueryView } from '../../components/QueryView.js';
import { canManage, useCurrentAccount } from '../../modules/account-context.js';
import { useTitle } from '../../modules/use-title.js';
import { UsageTable } from './UsageTable.js';

export function BillingPage() {
  const { account } = useCurrentAccount();
  const qc = useQueryClient();
  const slots = useQuery(slotsQuery(account.id));
  const usage = useQuery(usageQuery(account.id));
  const subscription = useMutation(subscriptionMutation(qc, account.id));
  const removeSlot = useMutation(deleteSlotMutation(qc, account.id));
  const manager = canManage(account);
  useTitle('Billing', account.name);
  return (
    <section>
      <h1>Billing</h1>
      <h2>Subscription</h2>
      <p data-testid="subscription-state">
        The subscription is <strong>{account.subscriptionActive ? 'active' : 'inactive'}</strong>.
      </p>
      {manager ? (
        <button
          type="button"
          className={account.subscriptionActive ? '' : 'primary'}
          disabled={subscription.isPending}
          onClick={() => subscription.mutate(!account.subscriptionActive)}
        >
          {account.subscriptionActive ? 'Deactivate subscription' : 'Activate subscription'}
        </button>
      ) : (
        <p className="hint">Owners and admins manage the subscription.</p>
      )}
      <ErrorMessage error={subscription.error} />

      <h2>Slots</h2>
      <QueryView query={slots} what="slots">
        {(list) =>
          list.length === 0 ? (
            <Empty>No slots. Machines billed by subscription take or add one.</Empty>
          ) : (
            <div className="table-scroll">
              <table aria-label="Slots">
                <thead>
                  <tr>
                    <th scope="col">Product</th>
                    <th scope="col">Size</th>
                    <th scope="col">Region</th>
                    <th scope="col">State</th>
                    <th scope="col">
                      <span className="visually-hidden">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {list.map((slot) => (
                    <tr key={slot.id}>
                      <td>{slot.product === 'agent' ? 'Agent' : 'Plain VM'}</td>
                      <td>{slot.size}</td>
                      <td>{slot.region}</td>
                      <td>{slot.inUse ? 'in use' : 'free'}</td>
                      <td>
                        {!slot.inUse && manager && (
                          <ConfirmButton
                            label="Remove slot"
                            question="Remove this free slot?"
                            confirmLabel="Remove"
                            pending={removeSlot.isPending}
                            onConfirm={() => removeSlot.mutate(slot.id)}
                          />
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </QueryView>
      <ErrorMessage error={removeSlot.error} />

      <h2>Usage this month</h2>
      <QueryView query={usage} what="usage">
        {(data) => <UsageTable usage={data} />}
      </QueryView>
    </section>
  );
}
