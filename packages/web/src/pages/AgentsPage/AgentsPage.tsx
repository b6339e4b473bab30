import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { agentsQuery } from '../../api/queries/agents.js';
import { Empty } from '../../components/Empty.js';
import { QueryView } from '../../components/QueryView.js';
import { accountPath, useCurrentAccount } from '../../modules/account-context.js';
import { StatusBadge } from '../../modules/StatusBadge.js';
import { useTitle } from '../../modules/use-title.js';

export function AgentsPage() {
  const { account } = useCurrentAccount();
  const agents = useQuery(agentsQuery(account.id));
  useTitle('Agents', account.name);
  return (
    <section>
      <div className="page-head">
        <h1>Agents</h1>
        <Link className="button primary" to={accountPath(account.slug, 'agents', 'new')}>
          New Agent
        </Link>
      </div>
      <QueryView query={agents} what="Agents">
        {(list) =>
          list.length === 0 ? (
            <Empty>No Agents in this account yet.</Empty>
          ) : (
            <ul className="cards">
              {list.map((agent) => (
                <li key={agent.id} className="card">
                  <Link to={accountPath(account.slug, 'agents', agent.id)}>
                    <strong>{agent.name}</strong>
                  </Link>
                  <StatusBadge status={agent.status} reason={agent.statusReason} />
                  <span className="muted">
                    {agent.size} · {agent.region} · {agent.billingType}
                  </span>
                  <span className="muted">{agent.subdomain}</span>
                </li>
              ))}
            </ul>
          )
        }
      </QueryView>
    </section>
  );
}
