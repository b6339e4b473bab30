import { type Agent, type BillingType, SIZE_ORDER, type Size } from '@svc/contract';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { issuesAt } from '../../api/client.js';
import { cloneAgentMutation } from '../../api/queries/agents.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { Field } from '../../components/Field.js';
import { SubmitButton } from '../../components/SubmitButton.js';
import { accountPath, canManage, useCurrentAccount } from '../../modules/account-context.js';
import { BillingTypePicker } from '../../modules/BillingTypePicker.js';
import { SizeField } from '../../modules/RegionSizeFields.js';
import { useUnverifiedReason } from '../../modules/use-unverified.js';

/**
 * Clones into this account, or (for its owners and admins) any other account of the user; no
 * size below the source's.
 */
export function CloneAgentForm({ agent }: { agent: Agent }) {
  const current = useCurrentAccount();
  const { account } = current;
  const accounts = canManage(account) ? current.accounts : [account];
  const [targetId, setTargetId] = useState(account.id);
  const target = accounts.find((a) => a.id === targetId) ?? account;
  const qc = useQueryClient();
  const navigate = useNavigate();
  const [name, setName] = useState(`${agent.name} copy`.slice(0, 30));
  const [size, setSize] = useState<Size>(agent.size);
  const [billingType, setBillingType] = useState<BillingType>('metered');
  const clone = useMutation(cloneAgentMutation(qc, agent.id));
  const unverified = useUnverifiedReason();
  const sizes = SIZE_ORDER.slice(SIZE_ORDER.indexOf(agent.size));
  return (
    <form
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        clone.mutate(
          { name, size, billingType, accountId: target.id },
          { onSuccess: (copy) => navigate(accountPath(target.slug, 'agents', copy.id)) },
        );
      }}
    >
      <Field label="Clone name" errors={issuesAt(clone.error, 'name')}>
        {(control) => <input {...control} value={name} onChange={(e) => setName(e.target.value)} />}
      </Field>
      <SizeField
        label="Clone size"
        region={agent.region}
        sizes={sizes}
        value={size}
        onChange={setSize}
        errors={issuesAt(clone.error, 'size')}
      />
      {accounts.length > 1 && (
        <Field label="Clone into" errors={issuesAt(clone.error, 'accountId')}>
          {(control) => (
            <select
              {...control}
              value={targetId}
              onChange={(e) => {
                setTargetId(e.target.value);
                setBillingType('metered');
              }}
            >
              {accounts.map((a) => (
                <option key={a.id} value={a.id}>
                  {a.name}
                </option>
              ))}
            </select>
          )}
        </Field>
      )}
      <BillingTypePicker
        account={target}
        product="agent"
        size={size}
        region={agent.region}
        value={billingType}
        onChange={setBillingType}
      />
      <ErrorMessage error={clone.error} />
      <SubmitButton
        label="Clone"
        busyLabel="Cloning…"
        primary={false}
        pending={clone.isPending}
        unavailable={unverified}
      />
    </form>
  );
}
