import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { endSessionMutation, sessionsQuery } from '../../api/queries/accounts.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { QueryView } from '../../components/QueryView.js';
import { TableScroll } from '../../components/TableScroll.js';
import { formatDate } from '../../modules/format.js';

/** Every browser signed in as the user; any but this one can be signed out from here. */
export function SessionsList() {
  const qc = useQueryClient();
  const sessions = useQuery(sessionsQuery());
  const end = useMutation(endSessionMutation(qc));
  return (
    <section>
      <h2>Sessions</h2>
      <QueryView query={sessions} what="sessions">
        {(data) => (
          <TableScroll label="Sessions">
            <table>
              <thead>
                <tr>
                  <th scope="col">Browser</th>
                  <th scope="col">Address</th>
                  <th scope="col">Signed in</th>
                  <th scope="col">Last seen</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {data.sessions.map((session) => (
                  <tr key={session.id}>
                    <td>{session.userAgent ?? 'unknown'}</td>
                    <td>{session.clientAddress ?? 'unknown'}</td>
                    <td>{formatDate(session.createdAt)}</td>
                    <td>{session.lastSeenAt ? formatDate(session.lastSeenAt) : '—'}</td>
                    <td>
                      {session.current ? (
                        'This browser'
                      ) : (
                        <button
                          type="button"
                          onClick={() => end.mutate(session.id)}
                          disabled={end.isPending}
                        >
                          Sign out
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
        )}
      </QueryView>
      <ErrorMessage error={end.error} />
    </section>
  );
}
