import type { AccountMembership, BillingType } from '@svc/contract';
import { useId } from 'react';

/** Metered or subscription; subscription only offered when the account's subscription is active. */
export function BillingTypePicker(props: {
  account: AccountMembership;
  value: BillingType;
  onChange: (value: BillingType) => void;
}) {
  const name = useId();
  return (
    <fieldset className="choices">
      <legend>Billing</legend>
      <label>
        <input
          type="radio"
          name={name}
          checked={props.value === 'metered'}
          onChange={() => props.onChange('metered')}
        />
        Metered (pay for what runs)
      </label>
      <label>
        <input
          type="radio"
          name={name}
          checked={props.value === 'subscription'}
          disabled={!props.account.subscriptionActive}
          onChange={() => props.onChange('subscription')}
        />
        Subscription slot
        {!props.account.subscriptionActive && ' (needs an active subscription)'}
      </label>
    </fieldset>
  );
}
