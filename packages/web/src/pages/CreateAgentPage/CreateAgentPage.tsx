import { type BillingType, type Region, type Size, subdomainStem } from '@svc/contract';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { issuesAt } from '../../api/client.js';
import { createAgentMutation } from '../../api/queries/agents.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { Field } from '../../components/Field.js';
import { accountPath, useCurrentAccount } from '../../modules/account-context.js';
import { BillingTypePicker } from '../../modules/BillingTypePicker.js';
import { RegionField, SizeField } from '../../modules/RegionSizeFields.js';

export function CreateAgentPage() {
  const { account } = useCurrentAccount();
  const qc = useQueryClient();
  const navigate = useNavigate();
  const [name, setName] = useState('');
  const [region, setRegion] = useState<Region>('eu');
  const [size, setSize] = useState<Size>('small');
  const [billingType, setBillingType] = useState<BillingType>('metered');
  const create = useMutation(createAgentMutation(qc));
  const stem = subdomainStem(name);

  return (
    <section className="narrow-section">
      <h1>New Agent</h1>
      <form
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          create.mutate(
            { name, size, region, billingType, accountId: account.id },
            { onSuccess: (agent) => navigate(accountPath(account.slug, 'agents', agent.id)) },
          );
        }}
      >
        <Field
          label="Name"
          hint={
            stem ? (
              <>
                Subdomain: <code>{stem}-xxxxxx</code> (six random characters are added)
              </>
            ) : (
              'The subdomain is made from the name.'
            )
          }
          errors={issuesAt(create.error, 'name')}
        >
          {(control) => (
            <input {...control} value={name} onChange={(e) => setName(e.target.value)} />
          )}
        </Field>
        <RegionField
          value={region}
          onChange={setRegion}
          errors={issuesAt(create.error, 'region')}
        />
        <SizeField
          label="Size"
          region={region}
          value={size}
          onChange={setSize}
          errors={issuesAt(create.error, 'size')}
        />
        <BillingTypePicker account={account} value={billingType} onChange={setBillingType} />
        <ErrorMessage error={create.error} />
        <button type="submit" className="primary" disabled={create.isPending}>
          {create.isPending ? 'Creating…' : 'Create Agent'}
        </button>
      </form>
    </section>
  );
}
