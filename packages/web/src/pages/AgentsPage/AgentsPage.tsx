import { useQuery } from '@tanstack/react-query';
import { Bot } from 'lucide-react';
import { agentsQuery } from '../../api/queries/agents.js';
import { accountPath, useCurrentAccount } from '../../modules/account-context.js';
import { MachineCard } from '../../modules/MachineCard.js';
import { MachineListPage } from '../../modules/MachineListPage.js';
import { useTitle } from '../../modules/use-title.js';

export function AgentsPage() {
  const { account } = useCurrentAccount();
  const agents = useQuery(agentsQuery(account.id));
  useTitle('Agents', account.name);
  return (
    <MachineListPage
      title="Agents"
      newLabel="New Agent"
      newPath={accountPath(account.slug, 'agents', 'new')}
      empty={{
        title: 'No Agents in this account yet.',
        icon: Bot,
        sentence: 'An Agent is a machine with an editor you open in the browser.',
      }}
      query={agents}
      card={(agent) => (
        <MachineCard
          key={agent.id}
          name={agent.name}
          to={accountPath(account.slug, 'agents', agent.id)}
          status={agent.status}
          reason={agent.statusReason}
          facts={[`${agent.size} · ${agent.region} · ${agent.billingType}`, agent.subdomain]}
        />
      )}
    />
  );
}
