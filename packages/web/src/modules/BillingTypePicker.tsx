import type { AccountMembership, BillingType, Product, Region, Size } from '@svc/contract';
import { useId } from 'react';
import { usePrices } from './prices.js';
import { REGION_NAMES } from './SizeSpecs.js';

/**
 * Metered or subscription, each with what it costs for the chosen size and region; subscription
 * only offered when the account's subscription is active.
 */
export function BillingTypePicker(props: {
  account: AccountMembership;
  product: Product;
  size: Size;
  region: Region;
  value: BillingType;
  onChange: (value: BillingType) => void;
}) {
  const name = useId();
  const prices = usePrices();
  const cell = prices?.cell(props.product, props.size, props.region);
  const price = (text: string | undefined) => text && <> — {text}</>;
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
        Metered (pay for what runs){price(cell && prices?.metered(cell))}
      </label>
      <label>
        <input
          type="radio"
          name={name}
          checked={props.value === 'subscription'}
          disabled={!props.account.subscriptionActive}
          onChange={() => props.onChange('subscription')}
        />
        Subscription slot{price(cell && prices?.slot(cell))}
        {!props.account.subscriptionActive && ' (needs an active subscription)'}
      </label>
      {cell && (
        <p className="hint">
          Prices of a {props.size} {props.product === 'agent' ? 'Agent' : 'Plain VM'} in{' '}
          {REGION_NAMES[props.region]}. Metered, it is charged by the second while it runs or is
          stopped; a slot is charged by the second it is held, used or not (a free slot of the same
          size and region is taken first).
        </p>
      )}
    </fieldset>
  );
}
