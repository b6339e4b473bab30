import { useQuery } from '@tanstack/react-query';
import { Link, Navigate, useLocation, useParams } from 'react-router';
import { ApiError } from '../../api/client.js';
import { meQuery } from '../../api/queries/accounts.js';
import { agentQuery } from '../../api/queries/agents.js';
import { QueryView } from '../../components/QueryView.js';
import { accountPath } from '../../modules/account-context.js';
import { useTitle } from '../../modules/use-title.js';

/**
 * `/dashboard/agents/{id}`: an Agent's page by its id alone, as its gateway links to it (the
 * machine knows its id, not its account's slug). Sends the browser on to the page in the
 * Agent's account, keeping the query (`?open=1`).
 */
export function AgentLinkPage() {
  useTitle('Opening the Agent');
  const { id = '' } = useParams();
  const { search } = useLocation();
  const me = useQuery(meQuery());
  const agent = useQuery(agentQuery(id));
  if (agent.error instanceof ApiError && agent.error.status === 404)
    return (
      <div className="narrow">
        <h1>Agent not found</h1>
        <p>It was destroyed, or it is not in an account of yours.</p>
        <Link to="/">Go to the dashboard</Link>
      </div>
    );
  return (
    <div className="narrow">
      <QueryView query={me} what="your accounts">
        {({ accounts }) => (
          <QueryView query={agent} what="the Agent">
            {(found) => {
              const account = accounts.find((a) => a.id === found.accountId);
              if (!account) return <Navigate to="/" replace />;
              return (
                <Navigate
                  to={`${accountPath(account.slug, 'agents', found.id)}${search}`}
                  replace
                />
              );
            }}
          </QueryView>
        )}
      </QueryView>
    </div>
  );
}
