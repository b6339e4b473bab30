import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { CreditCard } from 'lucide-react';
import { deleteSlotMutation, slotsQuery } from '../../api/queries/billing.js';
import { ConfirmButton } from '../../components/ConfirmButton.js';
import { Empty } from '../../components/Empty.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { QueryView } from '../../components/QueryView.js';
import { TableScroll } from '../../components/TableScroll.js';
import { canManage, useCurrentAccount } from '../../modules/account-context.js';
import { usePrices } from '../../modules/prices.js';

/** The subscription's slots with their monthly price; a free one says what removing it saves. */
export function SlotsSection() {
  const { account } = useCurrentAccount();
  const qc = useQueryClient();
  const slots = useQuery(slotsQuery(account.id));
  const removeSlot = useMutation(deleteSlotMutation(qc, account.id));
  const prices = usePrices();
  const manager = canManage(account);
  // Slot prices are in the price book's currency, read once; an ellipsis stands in until then.
  const money = (amount: number) => prices?.money(amount) ?? '…';
  return (
    <>
      <h2>Slots</h2>
      <QueryView query={slots} what="slots">
        {(list) =>
          list.length === 0 ? (
            <Empty title="No slots." icon={CreditCard}>
              Machines billed by subscription take or add one.
            </Empty>
          ) : (
            <TableScroll label="Slots">
              <table aria-label="Slots">
                <caption className="hint">
                  {list.length === 1 ? 'One slot' : `${list.length} slots`}:{' '}
                  {money(list.reduce((sum, slot) => sum + slot.monthlyPrice, 0))}/month in all,
                  charged by the second each is held.
                </caption>
                <thead>
                  <tr>
                    <th scope="col">Product</th>
                    <th scope="col">Size</th>
                    <th scope="col">Region</th>
                    <th scope="col">State</th>
                    <th scope="col">Price</th>
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
                      <td>{money(slot.monthlyPrice)}/month</td>
                      <td>
                        {!slot.inUse && manager && (
                          <ConfirmButton
                            label={`Remove slot — saves ${money(slot.monthlyPrice)}/month`}
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
            </TableScroll>
          )
        }
      </QueryView>
      <ErrorMessage error={removeSlot.error} />
    </>
  );
}
