import type { AccountMembership, BundleDetail } from '@svc/contract';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { issuesAt } from '../../api/client.js';
import { createAgentMutation } from '../../api/queries/agents.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { Field } from '../../components/Field.js';
import { SubmitButton } from '../../components/SubmitButton.js';
import { accountLabel, accountPath } from '../../modules/account-context.js';
import { formatDate } from '../../modules/format.js';
import { NEW_AGENT, NewAgentFields, newAgentBody } from '../../modules/NewAgentFields.js';
import { useUnverifiedReason } from '../../modules/use-unverified.js';
import { CredentialFields } from './CredentialFields.js';

/** The adopt form: which version, into which account, the new Agent's machine, its credentials. */
export function AdoptForm(props: {
  bundle: BundleDetail;
  accounts: readonly AccountMembership[];
  /** `?version=` of the link that led here. */
  requested?: number;
}) {
  const { bundle, accounts } = props;
  const qc = useQueryClient();
  const navigate = useNavigate();
  const isPublished = (n?: number) => bundle.versions.some((v) => v.version === n);
  const [version, setVersion] = useState(
    isPublished(props.requested) ? props.requested : (bundle.latestVersion ?? undefined),
  );
  const [accountId, setAccountId] = useState(accounts[0]?.id ?? '');
  // An Agent name is at most 30 characters; the display name is a start the user may change.
  const [fields, setFields] = useState({ ...NEW_AGENT, name: bundle.displayName.slice(0, 30) });
  const [credentials, setCredentials] = useState<Record<string, string>>({});
  const create = useMutation(createAgentMutation(qc));
  const unverified = useUnverifiedReason();
  const account = accounts.find((a) => a.id === accountId);

  if (!account) return <ErrorMessage error="You belong to no account." />;
  if (version === undefined)
    return <ErrorMessage error="This bundle has no published version to adopt." />;
  const submit = () =>
    create.mutate(
      {
        ...newAgentBody(fields),
        accountId: account.id,
        source: {
          bundle: `${bundle.accountSlug}/${bundle.name}`,
          version,
          // An empty field is a credential left to set later: not sent at all.
          credentials: Object.fromEntries(Object.entries(credentials).filter(([, v]) => v !== '')),
        },
      },
      { onSuccess: (agent) => navigate(accountPath(account.slug, 'agents', agent.id)) },
    );

  return (
    <>
      <h1>Adopt {bundle.displayName}</h1>
      <p className="muted">
        <a href={bundle.url}>
          {bundle.accountSlug}/{bundle.name}
        </a>
      </p>
      {bundle.description && <p>{bundle.description}</p>}
      {props.requested !== undefined && !isPublished(props.requested) && (
        <p className="notice">
          Version {props.requested} is not published (any more); the latest is picked.
        </p>
      )}
      <form
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          submit();
        }}
      >
        <Field label="Version">
          {(control) => (
            <select
              {...control}
              value={version}
              onChange={(e) => setVersion(Number(e.target.value))}
            >
              {bundle.versions.map((v) => (
                <option key={v.version} value={v.version}>
                  Version {v.version}
                  {v.version === bundle.latestVersion ? ' (latest)' : ''} ·{' '}
                  {formatDate(v.createdAt)}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Account" errors={issuesAt(create.error, 'accountId')}>
          {(control) => (
            <select
              {...control}
              value={accountId}
              onChange={(e) => {
                setAccountId(e.target.value);
                // A subscription slot is the chosen account's: start again from metered.
                setFields({ ...fields, billingType: 'metered' });
              }}
            >
              {accounts.map((a) => (
                <option key={a.id} value={a.id}>
                  {accountLabel(a)}
                </option>
              ))}
            </select>
          )}
        </Field>
        <NewAgentFields
          value={fields}
          onChange={setFields}
          account={account}
          error={create.error}
        />
        <CredentialFields
          credentials={bundle.credentials}
          values={credentials}
          onChange={(key, value) => setCredentials({ ...credentials, [key]: value })}
          error={create.error}
        />
        <ErrorMessage error={create.error} />
        <SubmitButton
          label="Adopt into a new Agent"
          busyLabel="Adopting…"
          pending={create.isPending}
          unavailable={unverified}
        />
      </form>
    </>
  );
}
