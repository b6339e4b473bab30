import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Monitor } from 'lucide-react';
import { endSessionMutation, sessionsQuery } from '../../api/queries/accounts.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { QueryView } from '../../components/QueryView.js';
import { formatDate } from '../../modules/format.js';
import { browserName } from './browser-name.js';

/**
 * Every browser signed in as the user; any but this one can be signed out from here. One row
 * each, the browser's name first and the rest wrapping under it, so nothing is cut at any width.
 */
export function SessionsList() {
  const qc = useQueryClient();
  const sessions = useQuery(sessionsQuery());
  const end = useMutation(endSessionMutation(qc));
  return (
    <section>
      <h2>Sessions</h2>
      <QueryView query={sessions} what="sessions">
        {(data) => (
          <ul className="rows" aria-label="Sessions">
            {data.sessions.map((session) => (
              <li key={session.id} className="row">
                <Monitor className="icon" />
                <div className="row-main">
                  <strong title={session.userAgent ?? undefined}>
                    {browserName(session.userAgent)}
                  </strong>
                  <span className="muted">
                    {session.clientAddress ?? 'address unknown'} · signed in{' '}
                    {formatDate(session.createdAt)}
                    {session.lastSeenAt && ` · last seen ${formatDate(session.lastSeenAt)}`}
                  </span>
                </div>
                {session.current ? (
                  <span className="badge badge-ok">This browser</span>
                ) : (
                  <button
                    type="button"
                    onClick={() => end.mutate(session.id)}
                    disabled={end.isPending}
                  >
                    Sign out
                  </button>
                )}
              </li>
            ))}
          </ul>
        )}
      </QueryView>
      <ErrorMessage error={end.error} />
    </section>
  );
}
