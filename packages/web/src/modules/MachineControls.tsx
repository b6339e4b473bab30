import type { AgentState, BillingType } from '@svc/contract';
import type { ReactNode } from 'react';

type LifecycleAction = 'start' | 'stop' | 'restart';

/**
 * Start, stop and restart of an Agent or a Plain VM, each enabled only in the state it needs.
 * `children` come first (an Agent's Open).
 */
export function LifecycleButtons(props: {
  status: AgentState;
  pending: boolean;
  onAction: (action: LifecycleAction) => void;
  children?: ReactNode;
}) {
  const button = (action: LifecycleAction, label: string, needs: AgentState) => (
    <button
      type="button"
      disabled={props.status !== needs || props.pending}
      onClick={() => props.onAction(action)}
    >
      {label}
    </button>
  );
  return (
    <div className="actions">
      {props.children}
      {button('start', 'Start', 'stopped')}
      {button('stop', 'Stop', 'running')}
      {button('restart', 'Restart', 'running')}
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
