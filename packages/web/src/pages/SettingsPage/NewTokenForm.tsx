import { type ApiTokenScope, ApiTokenScope as Scopes } from '@svc/contract';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { issuesAt } from '../../api/client.js';
import { createApiTokenMutation } from '../../api/queries/accounts.js';
import { CopyButton } from '../../components/CopyButton.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { Field } from '../../components/Field.js';

const SCOPE_LABELS: Record<ApiTokenScope, string> = {
  read: 'Read only',
  write: 'Read and write',
};

/** A date field's day (`YYYY-MM-DD`), as the end of that day in the user's time zone. */
const endOfDay = (day: string) => new Date(`${day}T23:59:59.999`).toISOString();

/** Today in the user's time zone, as a date field writes it. */
const today = () => {
  const now = new Date();
  return new Date(now.getTime() - now.getTimezoneOffset() * 60_000).toISOString().slice(0, 10);
};

/** Creates a token and shows it this once: the service keeps only its hash. */
export function NewTokenForm() {
  const qc = useQueryClient();
  const create = useMutation(createApiTokenMutation(qc));
  const [name, setName] = useState('');
  const [scope, setScope] = useState<ApiTokenScope>('read');
  const [expiresOn, setExpiresOn] = useState('');
  return (
    <>
      <form
        noValidate
        className="inline-form"
        onSubmit={(event) => {
          event.preventDefault();
          create.mutate(
            { name, scope, ...(expiresOn && { expiresAt: endOfDay(expiresOn) }) },
            {
              onSuccess: () => {
                setName('');
                setExpiresOn('');
              },
            },
          );
        }}
      >
        <Field label="Token name" errors={issuesAt(create.error, 'name')}>
          {(control) => (
            <input
              {...control}
              value={name}
              onChange={(e) => setName(e.target.value)}
              autoComplete="off"
            />
          )}
        </Field>
        <Field label="Scope" errors={issuesAt(create.error, 'scope')}>
          {(control) => (
            <select
              {...control}
              value={scope}
              onChange={(e) => setScope(e.target.value as ApiTokenScope)}
            >
              {Scopes.options.map((s) => (
                <option key={s} value={s}>
                  {SCOPE_LABELS[s]}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field
          label="Expires on (optional)"
          hint="Empty: it works until you revoke it."
          errors={issuesAt(create.error, 'expiresAt')}
        >
          {(control) => (
            <input
              {...control}
              type="date"
              min={today()}
              value={expiresOn}
              onChange={(e) => setExpiresOn(e.target.value)}
            />
          )}
        </Field>
        <button type="submit" className="primary" disabled={create.isPending}>
          {create.isPending ? 'Creating…' : 'Create token'}
        </button>
      </form>
      <ErrorMessage error={create.error} />
      {create.isSuccess && (
        <div className="notice new-token" role="status">
          <p>
            <strong>Your new token {create.data.name}</strong> — copy it now: it is not shown again.
            Anyone who has it acts as you, so keep it where you keep passwords.
          </p>
          <p>
            <code className="secret" data-testid="new-api-token">
              {create.data.token}
            </code>{' '}
            <CopyButton text={create.data.token} label="Copy token" />
          </p>
          <button type="button" onClick={() => create.reset()}>
            I have copied it
          </button>
        </div>
      )}
    </>
  );
}
