import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { KeyRound } from 'lucide-react';
import { apiTokensQuery, revokeApiTokenMutation } from '../../api/queries/accounts.js';
import { ConfirmButton } from '../../components/ConfirmButton.js';
import { Empty } from '../../components/Empty.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { QueryView } from '../../components/QueryView.js';
import { formatDate } from '../../modules/format.js';
import { NewTokenForm } from './NewTokenForm.js';

const SCOPES = { read: 'read only', write: 'read and write' } as const;

/** Personal access tokens for scripts: created here, listed without their secret, revoked. */
export function ApiTokensSection() {
  const qc = useQueryClient();
  const tokens = useQuery(apiTokensQuery());
  const revoke = useMutation(revokeApiTokenMutation(qc));
  return (
    <section>
      <h2>API tokens</h2>
      <p>
        A script sends a token as <code>Authorization: Bearer svcp_…</code> and acts as you, in
        every account you belong to. A read-only token can only look.
      </p>
      <NewTokenForm />
      <QueryView query={tokens} what="tokens">
        {(data) =>
          data.tokens.length === 0 ? (
            <Empty title="No tokens yet." icon={KeyRound}>
              Make one above for <code>svc</code> or a script.
            </Empty>
          ) : (
            <ul className="rows" aria-label="API tokens">
              {data.tokens.map((token) => (
                <li key={token.id} className="row">
                  <KeyRound className="icon" />
                  <div className="row-main">
                    <strong>{token.name}</strong>
                    <span className="muted">
                      {SCOPES[token.scope]} · created {formatDate(token.createdAt)} · last used{' '}
                      {token.lastUsedAt ? formatDate(token.lastUsedAt) : 'never'} · expires{' '}
                      {token.expiresAt ? formatDate(token.expiresAt) : 'never'}
                    </span>
                  </div>
                  <ConfirmButton
                    label="Revoke"
                    accessibleLabel={`Revoke ${token.name}`}
                    question={`Revoke ${token.name}? Scripts using it stop working.`}
                    confirmLabel="Revoke"
                    pending={revoke.isPending}
                    onConfirm={() => revoke.mutate(token.id)}
                  />
                </li>
              ))}
            </ul>
          )
        }
      </QueryView>
      <ErrorMessage error={revoke.error} />
    </section>
  );
}
