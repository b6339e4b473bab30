import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { apiTokensQuery, revokeApiTokenMutation } from '../../api/queries/accounts.js';
import { ConfirmButton } from '../../components/ConfirmButton.js';
import { Empty } from '../../components/Empty.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { QueryView } from '../../components/QueryView.js';
import { TableScroll } from '../../components/TableScroll.js';
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
            <Empty>No tokens yet.</Empty>
          ) : (
            <TableScroll label="API tokens">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Scope</th>
                    <th scope="col">Created</th>
                    <th scope="col">Last used</th>
                    <th scope="col">Expires</th>
                    <th scope="col">
                      <span className="visually-hidden">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {data.tokens.map((token) => (
                    <tr key={token.id}>
                      <td>{token.name}</td>
                      <td>{SCOPES[token.scope]}</td>
                      <td>{formatDate(token.createdAt)}</td>
                      <td>{token.lastUsedAt ? formatDate(token.lastUsedAt) : 'never'}</td>
                      <td>{token.expiresAt ? formatDate(token.expiresAt) : 'never'}</td>
                      <td>
                        <ConfirmButton
                          label="Revoke"
                          accessibleLabel={`Revoke ${token.name}`}
                          question={`Revoke ${token.name}? Scripts using it stop working.`}
                          confirmLabel="Revoke"
                          pending={revoke.isPending}
                          onConfirm={() => revoke.mutate(token.id)}
                        />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableScroll>
          )
        }
      </QueryView>
      <ErrorMessage error={revoke.error} />
    </section>
  );
}
