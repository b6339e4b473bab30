import { type addVaultEntry, SshKeyType, type VaultEntry } from '@svc/contract';
import type { UseMutationResult } from '@tanstack/react-query';
import { useState } from 'react';
import { type CallInput, issuesAt } from '../../api/client.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { Field } from '../../components/Field.js';

type AddBody = CallInput<typeof addVaultEntry>['body'];

/** A PEM or OpenSSH private key block, whatever its kind (`-----BEGIN … PRIVATE KEY-----`). */
const PRIVATE_KEY = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----|PRIVATE KEY-----/;

/** The comment of a public key line, only when the line is one: never a piece of anything else. */
function keyComment(line: string): string {
  const [type, , ...comment] = line.trim().split(/\s+/);
  return SshKeyType.safeParse(type).success ? comment.join(' ') : '';
}

/**
 * Paste one OpenSSH public key line; the label defaults to the key's comment. A pasted private
 * key is dropped at once, before it is shown, kept or sent anywhere.
 */
export function AddKeyForm(props: {
  mutation: UseMutationResult<VaultEntry, Error, AddBody>;
  accountId: string;
}) {
  const [value, setValue] = useState('');
  const [label, setLabel] = useState('');
  const [droppedPrivateKey, setDroppedPrivateKey] = useState(false);
  const add = props.mutation;
  const comment = keyComment(value);
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
        errors={
          droppedPrivateKey
            ? [
                'That was a private key: it was dropped, not kept or sent. Paste the public key ' +
                  'instead, the .pub file next to it (e.g. ~/.ssh/id_ed25519.pub).',
              ]
            : issuesAt(add.error, 'value')
        }
      >
        {(control) => (
          <textarea
            {...control}
            rows={3}
            value={value}
            spellCheck={false}
            autoComplete="off"
            onChange={(e) => {
              const isPrivate = PRIVATE_KEY.test(e.target.value);
              setDroppedPrivateKey(isPrivate);
              setValue(isPrivate ? '' : e.target.value);
            }}
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
