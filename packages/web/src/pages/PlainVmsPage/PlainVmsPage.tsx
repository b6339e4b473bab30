import { useQuery } from '@tanstack/react-query';
import { Plus, Server } from 'lucide-react';
import { Link } from 'react-router';
import { plainVmsQuery } from '../../api/queries/plain-vms.js';
import { Empty } from '../../components/Empty.js';
import { QueryView } from '../../components/QueryView.js';
import { accountPath, useCurrentAccount } from '../../modules/account-context.js';
import { MachineCard } from '../../modules/MachineCard.js';
import { useTitle } from '../../modules/use-title.js';

export function PlainVmsPage() {
  const { account } = useCurrentAccount();
  const vms = useQuery(plainVmsQuery(account.id));
  useTitle('Plain VMs', account.name);
  const newVm = (
    <Link className="button primary" to={accountPath(account.slug, 'plain-vms', 'new')}>
      <Plus className="icon" /> New Plain VM
    </Link>
  );
  return (
    <section>
      <div className="page-head">
        <h1>Plain VMs</h1>
        {newVm}
      </div>
      <QueryView query={vms} what="Plain VMs" shape="cards">
        {(list) =>
          list.length === 0 ? (
            <Empty title="No Plain VMs in this account yet." icon={Server} action={newVm}>
              A Plain VM is a Linux machine you reach over SSH, behind its own firewall.
            </Empty>
          ) : (
            <ul className="cards">
              {list.map((vm) => (
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
              ))}
            </ul>
          )
        }
      </QueryView>
    </section>
  );
}
