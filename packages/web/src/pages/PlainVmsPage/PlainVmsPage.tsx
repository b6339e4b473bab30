import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { plainVmsQuery } from '../../api/queries/plain-vms.js';
import { Empty } from '../../components/Empty.js';
import { QueryView } from '../../components/QueryView.js';
import { accountPath, useCurrentAccount } from '../../modules/account-context.js';
import { StatusBadge } from '../../modules/StatusBadge.js';
import { useTitle } from '../../modules/use-title.js';

export function PlainVmsPage() {
  const { account } = useCurrentAccount();
  const vms = useQuery(plainVmsQuery(account.id));
  useTitle('Plain VMs', account.name);
  return (
    <section>
      <div className="page-head">
        <h1>Plain VMs</h1>
        <Link className="button primary" to={accountPath(account.slug, 'plain-vms', 'new')}>
          New Plain VM
        </Link>
      </div>
      <QueryView query={vms} what="Plain VMs">
        {(list) =>
          list.length === 0 ? (
            <Empty>No Plain VMs in this account yet.</Empty>
          ) : (
            <ul className="cards">
              {list.map((vm) => (
                <li key={vm.id} className="card">
                  <Link to={accountPath(account.slug, 'plain-vms', vm.id)}>
                    <strong>{vm.name}</strong>
                  </Link>
                  <StatusBadge status={vm.status} reason={vm.statusReason} />
                  <span className="muted">
                    {vm.tier} · {vm.region} · {vm.osImageKey} · {vm.billingType}
                  </span>
                  <span className="muted">{vm.ipv4 ?? 'no address yet'}</span>
                </li>
              ))}
            </ul>
          )
        }
      </QueryView>
    </section>
  );
}
