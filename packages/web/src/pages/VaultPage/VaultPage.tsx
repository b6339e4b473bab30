import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { KeyRound } from 'lucide-react';
import {
  addVaultEntryMutation,
  deleteVaultEntryMutation,
  vaultQuery,
} from '../../api/queries/vault.js';
import { ConfirmButton } from '../../components/ConfirmButton.js';
import { Empty } from '../../components/Empty.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { QueryView } from '../../components/QueryView.js';
import { useCurrentAccount } from '../../modules/account-context.js';
import { useTitle } from '../../modules/use-title.js';
import { AddKeyForm } from './AddKeyForm.js';

export function VaultPage() {
  const { account } = useCurrentAccount();
  const qc = useQueryClient();
  const keys = useQuery(vaultQuery(account.id));
  const add = useMutation(addVaultEntryMutation(qc, account.id));
  const remove = useMutation(deleteVaultEntryMutation(qc, account.id));
  useTitle('Vault', account.name);
  return (
    <section>
      <h1>Vault</h1>
      <p className="hint">
        SSH public keys of this account, offered when creating a Plain VM. Removing a key does not
        remove it from VMs that already have it.
      </p>
      <AddKeyForm mutation={add} accountId={account.id} />
      <h2>Keys</h2>
      <QueryView query={keys} what="Vault keys">
        {(entries) =>
          entries.length === 0 ? (
            <Empty title="No keys yet." icon={KeyRound}>
              Paste a public key line above.
            </Empty>
          ) : (
            <ul className="cards">
              {entries.map((entry) => (
                <li key={entry.id} className="card">
                  <strong>{entry.label}</strong>
                  <span className="muted">{entry.type}</span>
                  <code className="fingerprint">{entry.fingerprintSha256}</code>
                  <ConfirmButton
                    label={`Delete ${entry.label}`}
                    question="Delete this key?"
                    confirmLabel="Delete"
                    pending={remove.isPending}
                    onConfirm={() => remove.mutate(entry.id)}
                  />
                </li>
              ))}
            </ul>
          )
        }
      </QueryView>
      <ErrorMessage error={remove.error} />
    </section>
  );
}
