import type { AccountMembership } from '@svc/contract';
import { useId, useState } from 'react';
import { canManage } from './account-context.js';

/**
 * Picks the organization to move a machine to: only organizations with active billing that the
 * user belongs to, other than the current account. Only its owners and admins may send one away.
 */
export function TransferForm(props: {
  accounts: readonly AccountMembership[];
  current: AccountMembership;
  /** Why the machine cannot move now (its state), said beside the disabled button. */
  unavailable?: string;
  pending: boolean;
  onTransfer: (targetAccountId: string) => void;
}) {
  const targets = props.accounts.filter(
    (a) => a.kind === 'organization' && a.subscriptionActive && a.id !== props.current.id,
  );
  const [target, setTarget] = useState('');
  const id = useId();
  const reasonId = useId();
  if (!canManage(props.current))
    return <p className="hint">Only owners and admins of this account can transfer it away.</p>;
  if (targets.length === 0)
    return <p className="hint">No organization with active billing to transfer to.</p>;
  return (
    <form
      className="inline-form"
      onSubmit={(event) => {
        event.preventDefault();
        if (target && !props.unavailable) props.onTransfer(target);
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
      <button
        type="submit"
        disabled={!target || props.pending || Boolean(props.unavailable)}
        aria-describedby={props.unavailable ? reasonId : undefined}
      >
        {props.pending ? 'Transferring…' : 'Transfer'}
      </button>
      {props.unavailable && (
        <span className="hint" id={reasonId}>
          {props.unavailable}
        </span>
      )}
    </form>
  );
}
