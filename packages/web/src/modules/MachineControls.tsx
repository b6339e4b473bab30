import {
  type BillingType,
  canApply,
  type MachineMoveAction,
  type MachineState,
} from '@svc/contract';
import type { ReactNode } from 'react';

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

/** The machine's billing type and the switch to the other one. */
export function BillingSwitch(props: {
  billingType: BillingType;
  enabled: boolean;
  pending: boolean;
  onSwitch: (to: BillingType) => void;
}) {
  const other = props.billingType === 'metered' ? 'subscription' : 'metered';
  return (
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
  );
}
