import type { SubscriptionStatus } from '@svc/contract';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect, useId, useRef, useState } from 'react';
import { subscriptionMutation } from '../../api/queries/accounts.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { canManage, useCurrentAccount } from '../../modules/account-context.js';
import { usePrices } from '../../modules/prices.js';
import { SlotPriceTable } from './SlotPriceTable.js';

const STATE: Record<SubscriptionStatus, { word: string; sentence: string }> = {
  active: {
    word: 'active',
    sentence: 'Machines can be billed by subscription slot.',
  },
  past_due: {
    word: 'past due',
    sentence:
      'An invoice is unpaid after its due date. Slots keep working until the grace period ends; once the invoice is paid, the subscription is active again.',
  },
  inactive: {
    word: 'inactive',
    sentence:
      'Machines are billed metered only. Activate it to bill machines by subscription slot.',
  },
};

/**
 * The subscription's payment state, and its switch: activating shows what slots cost first and
 * asks once more; deactivating is one click (it charges nothing).
 */
export function SubscriptionSection() {
  const { account } = useCurrentAccount();
  const qc = useQueryClient();
  const subscription = useMutation(subscriptionMutation(qc, account.id));
  const [asking, setAsking] = useState(false);
  const state = STATE[account.subscriptionStatus];
  return (
    <>
      <h2>Subscription</h2>
      <p data-testid="subscription-state">
        The subscription is <strong>{state.word}</strong>. {state.sentence}
      </p>
      {!canManage(account) ? (
        <p className="hint">Owners and admins manage the subscription.</p>
      ) : account.subscriptionActive ? (
        <button
          type="button"
          disabled={subscription.isPending}
          onClick={() => subscription.mutate(false)}
        >
          Deactivate subscription
        </button>
      ) : asking ? (
        <ActivationConfirm
          pending={subscription.isPending}
          onConfirm={() => subscription.mutate(true, { onSuccess: () => setAsking(false) })}
          onCancel={() => setAsking(false)}
        />
      ) : (
        <button type="button" className="primary" onClick={() => setAsking(true)}>
          Activate subscription
        </button>
      )}
      <ErrorMessage error={subscription.error} />
    </>
  );
}

/** What activating costs, before it is done: the slot prices of the price book. */
function ActivationConfirm(props: {
  pending: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const prices = usePrices();
  const heading = useRef<HTMLHeadingElement>(null);
  const headingId = useId();
  useEffect(() => heading.current?.focus(), []);
  return (
    <section className="notice" aria-labelledby={headingId}>
      <h3 id={headingId} ref={heading} tabIndex={-1}>
        What the subscription costs
      </h3>
      <p>
        Activating costs nothing by itself. Each machine billed by subscription holds a slot of its
        size and region, and each slot is charged by the second it is held, at its monthly price,
        until it is removed on this page (a slot left free is still charged).
      </p>
      {prices ? (
        <SlotPriceTable prices={prices} />
      ) : (
        <p className="loading" role="status">
          Loading the prices…
        </p>
      )}
      <div className="actions">
        <button
          type="button"
          className="primary"
          disabled={props.pending || !prices}
          onClick={props.onConfirm}
        >
          {props.pending ? 'Activating…' : 'Confirm activation'}
        </button>
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </section>
  );
}
