import { useQuery } from '@tanstack/react-query';
import { Bot, Plus } from 'lucide-react';
import { Link } from 'react-router';
import { agentsQuery } from '../../api/queries/agents.js';
import { Empty } from '../../components/Empty.js';
import { QueryView } from '../../components/QueryView.js';
import { accountPath, useCurrentAccount } from '../../modules/account-context.js';
import { MachineCard } from '../../modules/MachineCard.js';
import { useTitle } from '../../modules/use-title.js';

export function AgentsPage() {
  const { account } = useCurrentAccount();
  const agents = useQuery(agentsQuery(account.id));
  useTitle('Agents', account.name);
  const newAgent = (
    <Link className="button primary" to={accountPath(account.slug, 'agents', 'new')}>
      <Plus className="icon" /> New Agent
    </Link>
  );
  return (
    <section>
      <div className="page-head">
        <h1>Agents</h1>
        {newAgent}
      </div>
      <QueryView query={agents} what="Agents" shape="cards">
        {(list) =>
          list.length === 0 ? (
            <Empty title="No Agents in this account yet." icon={Bot} action={newAgent}>
              An Agent is a machine with an editor you open in the browser.
            </Empty>
          ) : (
            <ul className="cards">
              {list.map((agent) => (
                <MachineCard
                  key={agent.id}
                  name={agent.name}
                  to={accountPath(account.slug, 'agents', agent.id)}
                  status={agent.status}
                  reason={agent.statusReason}
                  facts={[
                    `${agent.size} · ${agent.region} · ${agent.billingType}`,
                    agent.subdomain,
                  ]}
                />
              ))}
            </ul>
          )
        }
      </QueryView>
    </section>
  );
}
