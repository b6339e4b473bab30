import { useQuery } from '@tanstack/react-query';
import { Server } from 'lucide-react';
import { plainVmsQuery } from '../../api/queries/plain-vms.js';
import { accountPath, useCurrentAccount } from '../../modules/account-context.js';
import { MachineCard } from '../../modules/MachineCard.js';
import { MachineListPage } from '../../modules/MachineListPage.js';
import { useTitle } from '../../modules/use-title.js';

export function PlainVmsPage() {
  const { account } = useCurrentAccount();
  const vms = useQuery(plainVmsQuery(account.id));
  useTitle('Plain VMs', account.name);
  return (
    <MachineListPage
      title="Plain VMs"
      newLabel="New Plain VM"
      newPath={accountPath(account.slug, 'plain-vms', 'new')}
      empty={{
        title: 'No Plain VMs in this account yet.',
        icon: Server,
        sentence: 'A Plain VM is a Linux machine you reach over SSH, behind its own firewall.',
      }}
      query={vms}
      card={(vm) => (
        <MachineCard
          key={vm.id}
          name={vm.name}
          to={accountPath(account.slug, 'plain-vms', vm.id)}
          status={vm.status}
          reason={vm.statusReason}
          facts={[
            `${vm.tier} · ${vm.region} · ${vm.osImageKey} · ${vm.billingType}`,
            vm.ipv4 ?? 'no address yet',
          ]}
        />
      )}
    />
  );
}
