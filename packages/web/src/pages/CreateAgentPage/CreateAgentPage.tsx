import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { createAgentMutation } from '../../api/queries/agents.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { SubmitButton } from '../../components/SubmitButton.js';
import { accountPath, useCurrentAccount } from '../../modules/account-context.js';
import { NEW_AGENT, NewAgentFields, newAgentBody } from '../../modules/NewAgentFields.js';
import { useTitle } from '../../modules/use-title.js';
import { useUnverifiedReason } from '../../modules/use-unverified.js';

export function CreateAgentPage() {
  const { account } = useCurrentAccount();
  const qc = useQueryClient();
  const navigate = useNavigate();
  const [fields, setFields] = useState(NEW_AGENT);
  const create = useMutation(createAgentMutation(qc));
  useTitle('New Agent', account.name);
  const unverified = useUnverifiedReason();

  return (
    <section className="narrow-section">
      <h1>New Agent</h1>
      <form
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          create.mutate(
            { ...newAgentBody(fields), accountId: account.id },
            { onSuccess: (agent) => navigate(accountPath(account.slug, 'agents', agent.id)) },
          );
        }}
      >
        <NewAgentFields
          value={fields}
          onChange={setFields}
          account={account}
          error={create.error}
        />
        <ErrorMessage error={create.error} />
        <SubmitButton
          label="Create Agent"
          busyLabel="Creating…"
          pending={create.isPending}
          unavailable={unverified}
        />
      </form>
    </section>
  );
}
