import type { VaultEntry } from '@svc/contract';
import type { UseQueryResult } from '@tanstack/react-query';
import { Link } from 'react-router';
import { QueryView } from '../../components/QueryView.js';
import { accountPath, useCurrentAccount } from '../../modules/account-context.js';

/** Which of the account's Vault keys the VM's default user accepts. */
export function VaultKeyPicker(props: {
  keys: UseQueryResult<VaultEntry[]>;
  selected: string[];
  onChange: (ids: string[]) => void;
  errors: string[];
}) {
  const { account } = useCurrentAccount();
  const toggle = (id: string, on: boolean) =>
    props.onChange(on ? [...props.selected, id] : props.selected.filter((x) => x !== id));
  return (
    <fieldset className="choices">
      <legend>SSH keys from the Vault</legend>
      <QueryView query={props.keys} what="Vault keys">
        {(entries) =>
          entries.length === 0 ? (
            <p className="hint">
              No keys yet. <Link to={accountPath(account.slug, 'vault')}>Add one to the Vault</Link>{' '}
              or use a one-time password.
            </p>
          ) : (
            entries.map((entry) => (
              <label key={entry.id}>
                <input
                  type="checkbox"
                  checked={props.selected.includes(entry.id)}
                  onChange={(e) => toggle(entry.id, e.target.checked)}
                />
                {entry.label} <code className="muted">{entry.fingerprintSha256}</code>
              </label>
            ))
          )
        }
      </QueryView>
      {props.errors.length > 0 && (
        <ul className="field-errors">
          {props.errors.map((m) => (
            <li key={m}>{m}</li>
          ))}
        </ul>
      )}
    </fieldset>
  );
}
