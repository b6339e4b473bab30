import { useMutation } from '@tanstack/react-query';
import { useEffect, useRef } from 'react';
import { Link, useParams, useSearchParams } from 'react-router';
import { ApiError } from '../../api/client.js';
import { openAgentPortMutation } from '../../api/queries/agent-ports.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { PageLoading } from '../../components/Loading.js';
import { useTitle } from '../../modules/use-title.js';

/** Only a path on the port's own host is followed; anything else opens its front page. */
const pathOnly = (next: string | null) => (next && /^\/(?![/\\])/.test(next) ? next : '/');

/**
 * `/dashboard/agents/{id}/ports/{port}/open?next=…`: where a shared port's address sends a
 * browser without the port's cookie (signed-out people sign in first and come back). Asks the
 * service for a one-time link for the signed-in person and goes there, once; the port's host
 * then sets its cookie and continues to `next`.
 */
export function AgentPortOpenPage() {
  useTitle('Opening the port');
  const { id = '', port = '' } = useParams();
  const [searchParams] = useSearchParams();
  const next = pathOnly(searchParams.get('next'));
  const open = useMutation(openAgentPortMutation(id, Number(port)));
  const asked = useRef(false);
  const { mutate } = open;
  useEffect(() => {
    if (asked.current) return;
    asked.current = true;
    mutate(next, { onSuccess: ({ url }) => window.location.replace(url) });
  }, [mutate, next]);

  if (open.error) {
    const status = open.error instanceof ApiError ? open.error.status : undefined;
    return (
      <div className="narrow">
        <h1>Port {port} cannot be opened</h1>
        {status === 404 && <p>It is not shared, or the Agent is not in an account of yours.</p>}
        {status === 403 && (
          <p>
            It is shared with the account's owners and admins only. Ask one of them to share it.
          </p>
        )}
        {status !== 404 && status !== 403 && <ErrorMessage error={open.error} />}
        <Link to="/">Go to the dashboard</Link>
      </div>
    );
  }
  return <PageLoading what={`port ${port}`} />;
}
