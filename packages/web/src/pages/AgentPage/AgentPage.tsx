import { type Agent, type Cohort, canApply, type MachineAction } from '@svc/contract';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useCallback, useEffect, useRef, useState } from 'react';
import { Link, useNavigate, useParams, useSearchParams } from 'react-router';
import { ApiError } from '../../api/client.js';
import {
  agentActionMutation,
  agentBillingMutation,
  agentQuery,
  agentResizeMutation,
  openAgentMutation,
  transferAgentMutation,
  updateAgentMutation,
} from '../../api/queries/agents.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { QueryView } from '../../components/QueryView.js';
import { accountPath, useCurrentAccount } from '../../modules/account-context.js';
import { BackupsForm } from '../../modules/BackupsForm.js';
import { DestroySection } from '../../modules/DestroySection.js';
import { whyWaitForDisk } from '../../modules/disk-operation.js';
import { BillingSwitch, LifecycleButtons } from '../../modules/MachineControls.js';
import { MachineSize } from '../../modules/MachineSize.js';
import { ResizeControl } from '../../modules/ResizeControl.js';
import { SnapshotsSection } from '../../modules/SnapshotsSection.js';
import { StatusBadge, StatusReason } from '../../modules/StatusBadge.js';
import { TransferForm } from '../../modules/TransferForm.js';
import { whyNot } from '../../modules/unavailable.js';
import { useTitle } from '../../modules/use-title.js';
import { AdoptedFromFact, CredentialsToSet } from './Adoption.js';
import { AgentPorts } from './AgentPorts.js';
import { CloneAgentForm } from './CloneAgentForm.js';
import { IdleStopForm, StoppedReasonNote } from './IdleStopForm.js';

/** What a cohort means to the Agent's owner, said where the cohort is shown. */
const COHORT_MEANING: Record<Cohort, string> = {
  current: "on the service's current machines: it can be cloned and billed by subscription",
  legacy: 'on the older machines it started on: it keeps working, metered, and cannot be cloned',
};

export function AgentPage() {
  const { id = '' } = useParams();
  const { account } = useCurrentAccount();
  const agent = useQuery(agentQuery(id));
  useTitle(agent.data?.name ?? 'Agent', account.name);
  if (agent.error instanceof ApiError && agent.error.status === 404)
    return (
      <section>
        <h1>Agent not found</h1>
        <p>It was destroyed, or it is not in this account.</p>
        <Link to={accountPath(account.slug, 'agents')}>Back to Agents</Link>
      </section>
    );
  return (
    <QueryView query={agent} what="the Agent">
      {(data) => <AgentDetail agent={data} />}
    </QueryView>
  );
}

function AgentDetail({ agent }: { agent: Agent }) {
  const { account, accounts } = useCurrentAccount();
  const qc = useQueryClient();
  const navigate = useNavigate();
  const action = useMutation(agentActionMutation(qc, agent.id));
  const billing = useMutation(agentBillingMutation(qc, agent.id));
  const resize = useMutation(agentResizeMutation(qc, agent.id));
  const settings = useMutation(updateAgentMutation(qc, agent.id));
  const open = useMutation(openAgentMutation(agent.id));
  const transfer = useMutation({
    ...transferAgentMutation(qc, agent.id),
    onSuccess: async (moved) => {
      await qc.invalidateQueries({ queryKey: ['agents'] });
      const target = accounts.find((a) => a.id === moved.accountId);
      if (target) navigate(accountPath(target.slug, 'agents', moved.id));
    },
  });
  const can = (action: MachineAction) => canApply(action, agent.status);
  // A snapshot or restore under way: the service refuses moves, resizes and destroy until it ends.
  const disk = agent.diskOperation;

  // `?open=1` (the Agent's own URL sends a browser without access here): open it in this tab at
  // once, a stopped Agent started first. Asked once, then dropped from the URL, so a reload or
  // Back does not open it again.
  const [searchParams, setSearchParams] = useSearchParams();
  const openAsked = useRef(false);
  const [openRefusedIn, setOpenRefusedIn] = useState<string>();
  const wantsOpen = searchParams.get('open') === '1';
  // A stopped Agent is started, and its own URL waits for it ("Starting…", then the editor).
  const wake = useMutation(agentActionMutation(qc, agent.id));
  const { mutate: start } = wake;
  const { mutate: ticket } = open;
  const go = useCallback(
    (to: (url: string) => void, onError?: () => void) => {
      if (agent.status === 'stopped') {
        return start('start', { onSuccess: () => to(agent.url), onError });
      }
      ticket(undefined, { onSuccess: ({ url }) => to(url), onError });
    },
    [agent.status, agent.url, start, ticket],
  );
  useEffect(() => {
    if (!wantsOpen || openAsked.current) return;
    openAsked.current = true;
    setSearchParams(
      (params) => {
        params.delete('open');
        return params;
      },
      { replace: true },
    );
    if (!canApply('open', agent.status) && agent.status !== 'stopped') {
      setOpenRefusedIn(agent.status);
      return;
    }
    go((url) => window.location.replace(url));
  }, [wantsOpen, agent.status, go, setSearchParams]);

  const openAgent = () => {
    // Opened now, inside the click, so no popup blocker stops it; pointed at the ticket after.
    const tab = window.open('about:blank', '_blank');
    // The Agent's pages get no handle on the dashboard.
    if (tab) tab.opener = null;
    go(
      (url) => {
        if (tab) tab.location.href = url;
        else window.location.assign(url);
      },
      // A refusal is said on this page; the empty tab goes.
      () => tab?.close(),
    );
  };

  return (
    <section>
      <div className="page-head">
        <h1>{agent.name}</h1>
        <StatusBadge status={agent.status} reason={agent.statusReason} />
      </div>
      <StatusReason reason={agent.statusReason} />
      <StoppedReasonNote agent={agent} />
      <dl className="facts">
        <dt>Address</dt>
        <dd>
          {/* Not reachable before its machine exists: no address to copy until then. */}
          {agent.status === 'provisioning' ? (
            <span className="muted">Not yet: it gets one once it is running.</span>
          ) : (
            // Its own URL: the Agent's home, or (without access yet) the dashboard's Open.
            <a href={agent.url} target="_blank" rel="noreferrer">
              <code>{agent.url}</code>
            </a>
          )}
        </dd>
        <dt>Size</dt>
        <dd>
          <MachineSize size={agent.size} specs={agent.specs} limits={agent.limits} />
        </dd>
        <dt>Region</dt>
        <dd>{agent.region}</dd>
        <dt>Billing</dt>
        <dd>{agent.billingType}</dd>
        <dt>Cohort</dt>
        <dd>
          {agent.cohort} <span className="muted">({COHORT_MEANING[agent.cohort]})</span>
        </dd>
        {agent.adoptedFrom && <AdoptedFromFact from={agent.adoptedFrom} />}
      </dl>
      <CredentialsToSet keys={agent.credentialsToSet} />

      <LifecycleButtons
        status={agent.status}
        kind="Agent"
        pending={action.isPending}
        diskOperation={disk}
        onAction={(name) => action.mutate(name)}
        open={{ pending: open.isPending || wake.isPending, onOpen: openAgent }}
      />
      {openRefusedIn && <p role="status">The Agent is {openRefusedIn}: start it, then open it.</p>}
      <ErrorMessage error={action.error ?? open.error ?? wake.error} />
      <ResizeControl
        kind="Agent"
        status={agent.status}
        product="agent"
        size={agent.size}
        region={agent.region}
        pending={resize.isPending || disk !== null}
        onResize={(size) => resize.mutate(size)}
      />
      <ErrorMessage error={resize.error} />

      <h2>Snapshots</h2>
      <SnapshotsSection owner="agent" kind="Agent" machine={agent} />
      <h3>Daily backups</h3>
      <BackupsForm
        kind="Agent"
        backups={agent.backups}
        pending={settings.isPending}
        saved={settings.isSuccess}
        error={settings.error}
        onSave={(backups) => settings.mutate({ backups })}
      />

      <h2>Billing</h2>
      <BillingSwitch
        account={account}
        kind="Agent"
        status={agent.status}
        billingType={agent.billingType}
        product="agent"
        size={agent.size}
        region={agent.region}
        legacy={agent.cohort === 'legacy'}
        pending={billing.isPending}
        onSwitch={(to) => billing.mutate(to)}
      />
      {billing.data?.addedNewSlot && <p role="status">A new slot was added to the subscription.</p>}
      <ErrorMessage error={billing.error} />

      <h2>Idle stop</h2>
      <IdleStopForm agent={agent} />

      <h2>Ports</h2>
      <AgentPorts agent={agent} />

      <h2>Clone</h2>
      {can('clone') && agent.cohort === 'current' && disk === null ? (
        <CloneAgentForm agent={agent} />
      ) : (
        <p className="hint">
          {whyWaitForDisk(disk, 'Clone is possible') ??
            'Running or stopped current-cohort Agents can be cloned.'}
        </p>
      )}

      <h2>Transfer</h2>
      <TransferForm
        accounts={accounts}
        current={account}
        unavailable={
          whyWaitForDisk(disk, 'Transfer is possible') ??
          whyNot('transfer', 'Transfer', agent.status, 'Agent')
        }
        pending={transfer.isPending}
        onTransfer={(target) => transfer.mutate(target)}
      />
      <ErrorMessage error={transfer.error} />

      <DestroySection
        name={agent.name}
        noun="Agent"
        canDestroy={can('destroy') && disk === null}
        pending={action.isPending}
        hint={
          whyWaitForDisk(disk, 'Destroy is possible') ??
          'Running, stopped or failed Agents can be destroyed.'
        }
        onConfirm={() =>
          action.mutate('destroy', {
            // The list shows it while it is torn down; the detail would soon answer 404.
            onSuccess: () => navigate(accountPath(account.slug, 'agents')),
          })
        }
      />
    </section>
  );
}
