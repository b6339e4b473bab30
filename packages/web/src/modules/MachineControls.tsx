import {
  type BillingType,
  canApply,
  type MachineMoveAction,
  type MachineState,
  type Product,
  type Region,
  type Size,
} from '@svc/contract';
import type { ReactNode } from 'react';
import { usePrices } from './prices.js';

type LifecycleAction = Exclude<MachineMoveAction, 'destroy'>;

/**
 * Start, stop and restart of an Agent or a Plain VM, each enabled only in the state it needs.
 * `children` come first (an Agent's Open).
 */
export function LifecycleButtons(props: {
  status: MachineState;
  pending: boolean;
  onAction: (action: LifecycleAction) => void;
  children?: ReactNode;
}) {
  const button = (action: LifecycleAction, label: string) => (
    <button
      type="button"
      disabled={!canApply(action, props.status) || props.pending}
      onClick={() => props.onAction(action)}
    >
      {label}
    </button>
  );
  return (
    <div className="actions">
      {props.children}
      {button('start', 'Start')}
      {button('stop', 'Stop')}
      {button('restart', 'Restart')}
    </div>
  );
}

/**
 * The machine's billing type and the switch to the other one, with what each costs for its cell
 * (a legacy Agent's stopped hours have their own rate, and it stays metered: no slot to price).
 */
export function BillingSwitch(props: {
  billingType: BillingType;
  product: Product;
  size: Size;
  region: Region;
  legacy?: boolean;
  enabled: boolean;
  pending: boolean;
  onSwitch: (to: BillingType) => void;
}) {
  const other = props.billingType === 'metered' ? 'subscription' : 'metered';
  const prices = usePrices();
  const cell = prices?.cell(props.product, props.size, props.region);
  return (
    <>
      <p>
        Billed as <strong>{props.billingType}</strong>.{' '}
        <button
          type="button"
          disabled={!props.enabled || props.pending}
          onClick={() => props.onSwitch(other)}
        >
          Switch to {other}
        </button>
      </p>
      {cell && prices && (
        <p className="hint" data-testid="billing-prices">
          Metered: {prices.metered(cell, props.legacy)}.
          {!props.legacy &&
            ` Subscription: a ${prices.slot(cell)} slot (${props.size}, ${props.region}), charged by the second it is held; a free one is taken first.`}
        </p>
      )}
    </>
  );
}
