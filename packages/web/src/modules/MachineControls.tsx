import {
  type AccountMembership,
  type BillingType,
  canApply,
  type DiskOperation,
  type MachineMoveAction,
  type MachineState,
  type Product,
  type Region,
  type Size,
} from '@svc/contract';
import { useId } from 'react';
import { Link } from 'react-router';
import { accountPath } from './account-context.js';
import { whyWaitForDisk } from './disk-operation.js';
import { usePrices } from './prices.js';
import { type MachineKind, whyNot, whyNotAll } from './unavailable.js';

type LifecycleAction = Exclude<MachineMoveAction, 'destroy'>;

const LIFECYCLE: readonly { action: LifecycleAction; label: string }[] = [
  { action: 'start', label: 'Start' },
  { action: 'stop', label: 'Stop' },
  { action: 'restart', label: 'Restart' },
];

/**
 * Start, stop and restart of an Agent or a Plain VM (and an Agent's Open, first), each enabled
 * only in the state it needs and none while a snapshot or restore runs; beside them, why those
 * that are disabled are.
 */
export function LifecycleButtons(props: {
  status: MachineState;
  kind: MachineKind;
  pending: boolean;
  /** A snapshot or restore under way: the service refuses every move until it ends. */
  diskOperation?: DiskOperation;
  onAction: (action: LifecycleAction) => void;
  /**
   * An Agent's Open: a gateway ticket into its editor, in a new tab. A stopped Agent is started
   * first (the same start as Start's), so the button says so.
   */
  open?: { pending: boolean; onOpen: () => void };
}) {
  const reasonId = useId();
  const startsFirst = props.status === 'stopped';
  const diskBusy = Boolean(props.diskOperation);
  // Open alone is no move, but a stopped Agent's Open starts it first.
  const canOpen = canApply('open', props.status) || (startsFirst && !diskBusy);
  const can = (action: LifecycleAction) => canApply(action, props.status) && !diskBusy;
  const reason =
    whyWaitForDisk(props.diskOperation, 'Start, Stop and Restart are possible') ??
    whyNotAll(
      [
        ...(props.open && !startsFirst ? [{ action: 'open' as const, label: 'Open' }] : []),
        ...LIFECYCLE,
      ],
      props.status,
      props.kind,
    );
  const describedBy = (possible: boolean) => (!possible && reason ? reasonId : undefined);
  return (
    <>
      <div className="actions">
        {props.open && (
          <button
            type="button"
            className="primary"
            disabled={!canOpen || props.open.pending}
            aria-describedby={describedBy(canOpen)}
            onClick={props.open.onOpen}
          >
            {props.open.pending ? 'Opening…' : startsFirst ? 'Start and open' : 'Open'}
          </button>
        )}
        {LIFECYCLE.map(({ action, label }) => (
          <button
            key={action}
            type="button"
            disabled={!can(action) || props.pending}
            aria-describedby={describedBy(can(action))}
            onClick={() => props.onAction(action)}
          >
            {label}
          </button>
        ))}
      </div>
      {reason && (
        <p className="hint" id={reasonId} data-testid="lifecycle-reason">
          {reason}
        </p>
      )}
    </>
  );
}

/**
 * The machine's billing type and the switch to the other one, with what each costs for its cell
 * (a legacy Agent's stopped hours have their own rate, and it stays metered: no slot to price).
 * The switch is disabled, with the reason beside it, where the service would refuse it: a
 * machine not running or stopped, a legacy Agent, or an account without an active subscription.
 */
export function BillingSwitch(props: {
  account: AccountMembership;
  kind: MachineKind;
  status: MachineState;
  billingType: BillingType;
  product: Product;
  size: Size;
  region: Region;
  legacy?: boolean;
  pending: boolean;
  onSwitch: (to: BillingType) => void;
}) {
  const other = props.billingType === 'metered' ? 'subscription' : 'metered';
  const prices = usePrices();
  const cell = prices?.cell(props.product, props.size, props.region);
  const reasonId = useId();
  const reason = whyNotSwitch(props, other);
  return (
    <>
      <p>
        Billed as <strong>{props.billingType}</strong>.{' '}
        <button
          type="button"
          disabled={Boolean(reason) || props.pending}
          aria-describedby={reason ? reasonId : undefined}
          onClick={() => props.onSwitch(other)}
        >
          Switch to {other}
        </button>{' '}
        {reason && (
          <span className="hint" id={reasonId} data-testid="billing-reason">
            {reason}
          </span>
        )}
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

function whyNotSwitch(
  props: { account: AccountMembership; kind: MachineKind; status: MachineState; legacy?: boolean },
  to: BillingType,
) {
  const state = whyNot('changeBilling', `Switch to ${to}`, props.status, props.kind);
  if (state || to === 'metered') return state;
  if (props.legacy) return 'Legacy Agents stay metered.';
  if (!props.account.subscriptionActive)
    return (
      <>
        Subscription billing needs an active subscription on this account (
        <Link to={accountPath(props.account.slug, 'billing')}>Billing</Link>).
      </>
    );
  return undefined;
}
