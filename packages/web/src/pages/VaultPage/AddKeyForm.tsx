import type { addVaultEntry, VaultEntry } from '@svc/contract';
import type { UseMutationResult } from '@tanstack/react-query';
import { useState } from 'react';
import { type CallInput, issuesAt } from '../../api/client.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { Field } from '../../components/Field.js';

type AddBody = CallInput<typeof addVaultEntry>['body'];

/** Paste one OpenSSH public key line; the label defaults to the key's comment. */
export function AddKeyForm(props: {
  mutation: UseMutationResult<VaultEntry, Error, AddBody>;
  accountId: string;
}) {
  const [value, setValue] = useState('');
  const [label, setLabel] = useState('');
  const add = props.mutation;
  const comment = value.trim().split(/\s+/).slice(2).join(' ');
  return (
    <form
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        add.mutate(
          {
            type: 'ssh_key',
            label: label || comment,
            value: value.trim(),
            accountId: props.accountId,
          },
          {
            onSuccess: () => {
              setValue('');
              setLabel('');
            },
          },
        );
      }}
    >
      <Field
        label="Public key"
        hint="One line, e.g. ssh-ed25519 AAAA… you@laptop. Never paste a private key."
        errors={issuesAt(add.error, 'value')}
      >
        {(control) => (
          <textarea
            {...control}
            rows={3}
            value={value}
            spellCheck={false}
            onChange={(e) => setValue(e.target.value)}
          />
        )}
      </Field>
      <Field
        label="Label"
        hint={comment && `Default: ${comment}`}
        errors={issuesAt(add.error, 'label')}
      >
        {(control) => (
          <input {...control} value={label} onChange={(e) => setLabel(e.target.value)} />
        )}
      </Field>
      <ErrorMessage error={add.error} />
      {add.data && (
        <p role="status">
          Added {add.data.label}: <code>{add.data.fingerprintSha256}</code>
        </p>
      )}
      <button type="submit" className="primary" disabled={add.isPending}>
        {add.isPending ? 'Adding…' : 'Add key'}
      </button>
    </form>
  );
}
