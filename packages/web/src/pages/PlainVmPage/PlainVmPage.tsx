import { canApply, type MachineAction, type PlainVm } from '@svc/contract';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useLocation, useNavigate, useParams } from 'react-router';
import { ApiError } from '../../api/client.js';
import {
  plainVmActionMutation,
  plainVmBillingMutation,
  plainVmQuery,
  plainVmResizeMutation,
  transferPlainVmMutation,
  updatePlainVmMutation,
} from '../../api/queries/plain-vms.js';
import { CopyButton } from '../../components/CopyButton.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { QueryView } from '../../components/QueryView.js';
import { accountPath, useCurrentAccount } from '../../modules/account-context.js';
import { BackupsForm } from '../../modules/BackupsForm.js';
import { DestroySection } from '../../modules/DestroySection.js';
import { whyWaitForDisk } from '../../modules/disk-operation.js';
import { InitialPassword, useInitialPassword } from '../../modules/InitialPassword.js';
import { BillingSwitch, LifecycleButtons } from '../../modules/MachineControls.js';
import { MachineSize } from '../../modules/MachineSize.js';
import { ResizeControl } from '../../modules/ResizeControl.js';
import { SnapshotsSection } from '../../modules/SnapshotsSection.js';
import { StatusBadge, StatusReason } from '../../modules/StatusBadge.js';
import { TransferForm } from '../../modules/TransferForm.js';
import { whyNot } from '../../modules/unavailable.js';
import { useTitle } from '../../modules/use-title.js';
import { FirewallSection } from './FirewallSection.js';

export function PlainVmPage() {
  const { id = '' } = useParams();
  const { account } = useCurrentAccount();
  const vm = useQuery(plainVmQuery(id));
  useTitle(vm.data?.name ?? 'Plain VM', account.name);
  if (vm.error instanceof ApiError && vm.error.status === 404)
    return (
      <section>
        <h1>Plain VM not found</h1>
        <p>It was destroyed, or it is not in this account.</p>
        <Link to={accountPath(account.slug, 'plain-vms')}>Back to Plain VMs</Link>
      </section>
    );
  return (
    <QueryView query={vm} what="the Plain VM">
      {(data) => <PlainVmDetail vm={data} />}
    </QueryView>
  );
}

export const sshCommand = (vm: PlainVm) =>
  vm.ssh
    ? `ssh ${vm.ssh.port === 22 ? '' : `-p ${vm.ssh.port} `}${vm.defaultUser}@${vm.ssh.host}`
    : null;

function PlainVmDetail({ vm }: { vm: PlainVm }) {
  const { account, accounts } = useCurrentAccount();
  const qc = useQueryClient();
  const navigate = useNavigate();
  const transferNote = (useLocation().state as { transferNote?: string } | null)?.transferNote;
  const action = useMutation(plainVmActionMutation(qc, vm.id));
  const billing = useMutation(plainVmBillingMutation(qc, vm.id));
  const resize = useMutation(plainVmResizeMutation(qc, vm.id));
  const settings = useMutation(updatePlainVmMutation(qc, vm.id));
  const transfer = useMutation({
    ...transferPlainVmMutation(qc, vm.id),
    onSuccess: async (moved) => {
      await qc.invalidateQueries({ queryKey: ['plain-vms'] });
      const target = accounts.find((a) => a.id === moved.accountId);
      if (target)
        navigate(accountPath(target.slug, 'plain-vms', moved.id), {
          state: { transferNote: moved.transferNote },
        });
    },
  });
  const can = (action: MachineAction) => canApply(action, vm.status);
  // A snapshot or restore under way: the service refuses moves, resizes and destroy until it ends.
  const disk = vm.diskOperation;
  const ssh = sshCommand(vm);
  const initialPassword = useInitialPassword(vm.id);

  return (
    <section>
      <div className="page-head">
        <h1>{vm.name}</h1>
        <StatusBadge status={vm.status} reason={vm.statusReason} />
      </div>
      <StatusReason reason={vm.statusReason} />
      {initialPassword && <InitialPassword password={initialPassword} />}
      {transferNote && (
        <div className="notice" role="status">
          {transferNote}
        </div>
      )}
      <h2>SSH</h2>
      {ssh ? (
        <p>
          <code data-testid="ssh-command">{ssh}</code> <CopyButton text={ssh} />
        </p>
      ) : (
        <p className="hint">The address appears once the VM has a server.</p>
      )}
      <dl className="facts">
        <dt>Tier</dt>
        <dd>
          <MachineSize size={vm.tier} specs={vm.specs} limits={vm.limits} />
        </dd>
        <dt>Region</dt>
        <dd>{vm.region}</dd>
        <dt>OS image</dt>
        <dd>
          {vm.osImageKey} (user {vm.defaultUser})
        </dd>
        <dt>Addresses</dt>
        <dd>{[vm.ipv4, vm.ipv6].filter(Boolean).join(', ') || '—'}</dd>
        <dt>Access</dt>
        <dd>
          {vm.access.vaultEntryIds.length} Vault key(s)
          {vm.access.passwordEnabled ? ', password' : ''}
        </dd>
      </dl>

      <LifecycleButtons
        status={vm.status}
        kind="Plain VM"
        pending={action.isPending}
        diskOperation={disk}
        onAction={(name) => action.mutate(name)}
      />
      <ErrorMessage error={action.error} />
      <ResizeControl
        kind="Plain VM"
        status={vm.status}
        product="plain_vm"
        size={vm.tier}
        region={vm.region}
        pending={resize.isPending || disk !== null}
        onResize={(tier) => resize.mutate(tier)}
      />
      <ErrorMessage error={resize.error} />

      <h2>Snapshots</h2>
      <SnapshotsSection owner="plainVm" kind="Plain VM" machine={vm} />
      <h3>Daily backups</h3>
      <BackupsForm
        kind="Plain VM"
        backups={vm.backups}
        pending={settings.isPending}
        saved={settings.isSuccess}
        error={settings.error}
        onSave={(backups) => settings.mutate({ backups })}
      />

      <FirewallSection vmId={vm.id} status={vm.status} />

      <h2>Billing</h2>
      <BillingSwitch
        account={account}
        kind="Plain VM"
        status={vm.status}
        billingType={vm.billingType}
        product="plain_vm"
        size={vm.tier}
        region={vm.region}
        pending={billing.isPending}
        onSwitch={(to) => billing.mutate(to)}
      />
      <ErrorMessage error={billing.error} />

      <h2>Transfer</h2>
      <TransferForm
        accounts={accounts}
        current={account}
        unavailable={
          whyWaitForDisk(disk, 'Transfer is possible') ??
          whyNot('transfer', 'Transfer', vm.status, 'Plain VM')
        }
        pending={transfer.isPending}
        onTransfer={(target) => transfer.mutate(target)}
      />
      <ErrorMessage error={transfer.error} />

      <DestroySection
        name={vm.name}
        noun="Plain VM"
        canDestroy={can('destroy') && disk === null}
        pending={action.isPending}
        hint={
          whyWaitForDisk(disk, 'Destroy is possible') ??
          'Running, stopped or failed VMs can be destroyed.'
        }
        onConfirm={() =>
          action.mutate('destroy', {
            // The list shows it while it is torn down; the detail would soon answer 404.
            onSuccess: () => navigate(accountPath(account.slug, 'plain-vms')),
          })
        }
      />
    </section>
  );
}
