import type { AccountMembership } from '@svc/contract';
import { useId, useState } from 'react';

/**
 * Picks the organization to move a machine to: only organizations with active billing that the
 * user belongs to, other than the current account.
 */
export function TransferForm(props: {
  accounts: readonly AccountMembership[];
  currentAccountId: string;
  pending: boolean;
  onTransfer: (targetAccountId: string) => void;
}) {
  const targets = props.accounts.filter(
    (a) => a.kind === 'organization' && a.subscriptionActive && a.id !== props.currentAccountId,
  );
  const [target, setTarget] = useState('');
  const id = useId();
  if (targets.length === 0)
    return <p className="hint">No organization with active billing to transfer to.</p>;
  return (
    <form
      className="inline-form"
      onSubmit={(event) => {
        event.preventDefault();
        if (target) props.onTransfer(target);
      }}
    >
      <label htmlFor={id}>Transfer to</label>
      <select id={id} value={target} onChange={(e) => setTarget(e.target.value)}>
        <option value="">Choose an organization</option>
        {targets.map((a) => (
          <option key={a.id} value={a.id}>
            {a.name} ({a.slug})
          </option>
        ))}
      </select>
      <button type="submit" disabled={!target || props.pending}>
        {props.pending ? 'Transferring…' : 'Transfer'}
      </button>
    </form>
  );
}
