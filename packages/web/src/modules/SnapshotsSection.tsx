import { type Snapshot, SnapshotName } from '@svc/contract';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Archive, Camera } from 'lucide-react';
import { useId, useState } from 'react';
import { issuesAt } from '../api/client.js';
import {
  deleteSnapshotMutation,
  restoreSnapshotMutation,
  type SnapshotOwner,
  snapshotsQuery,
  takeSnapshotMutation,
} from '../api/queries/snapshots.js';
import type { MachineActivity } from '../api/queries/transient.js';
import { ConfirmButton } from '../components/ConfirmButton.js';
import { Empty } from '../components/Empty.js';
import { ErrorMessage } from '../components/ErrorMessage.js';
import { Field } from '../components/Field.js';
import { QueryView } from '../components/QueryView.js';
import { SubmitButton } from '../components/SubmitButton.js';
import { DISK_OPERATION_UNDER_WAY } from './disk-operation.js';
import { formatBytes, formatDate } from './format.js';
import { type MachineKind, whyNot } from './unavailable.js';

type Machine = MachineActivity & { id: string; name: string; statusReason: string | null };

/**
 * The Snapshots part of an Agent's or a Plain VM's page: take one (named or not), the list with
 * each one's state and size, restore one onto the stopped machine after saying what is lost, and
 * delete one. While a snapshot or a restore runs the list and the machine are asked again until
 * it ends, and what is under way is said.
 */
export function SnapshotsSection(props: {
  owner: SnapshotOwner;
  kind: MachineKind;
  machine: Machine;
}) {
  const { owner, kind, machine } = props;
  const qc = useQueryClient();
  const operation = machine.diskOperation ?? null;
  const snapshots = useQuery(snapshotsQuery(owner, machine.id, operation !== null));
  const take = useMutation(takeSnapshotMutation(qc, owner, machine.id));
  const remove = useMutation(deleteSnapshotMutation(qc, owner, machine.id));
  const restore = useMutation(restoreSnapshotMutation(qc, owner, machine.id));
  const restoreReasonId = useId();
  const pending = take.isPending || remove.isPending || restore.isPending;
  const whyNotRestore = operation
    ? `${DISK_OPERATION_UNDER_WAY[operation]}: Restore waits until it ends.`
    : whyNot('restoreSnapshot', 'Restore', machine.status, kind);
  return (
    <>
      <p className="hint">
        A snapshot keeps the {kind}'s disk as it is at that moment. Restoring one puts the disk back
        as it was then, on a stopped {kind}.
      </p>
      <TakeSnapshotForm
        kind={kind}
        machine={machine}
        pending={take.isPending}
        error={take.error}
        onTake={(name, onTaken) =>
          take.mutate(name, {
            onSuccess: () => {
              // A restore's "Restored" would now describe an older picture of the disk.
              restore.reset();
              onTaken();
            },
          })
        }
      />
      <DiskProgress kind={kind} machine={machine} restore={restore} />
      <QueryView query={snapshots} what="the snapshots" shape="lines">
        {(list) =>
          list.length === 0 ? (
            <Empty title="No snapshots yet." icon={Camera}>
              Take one before a risky change: restoring it undoes the change.
            </Empty>
          ) : (
            <ul className="rows" aria-label="Snapshots">
              {list.map((snapshot) => (
                <SnapshotRow
                  key={snapshot.id}
                  snapshot={snapshot}
                  machine={machine}
                  kind={kind}
                  pending={pending}
                  whyNotRestore={whyNotRestore}
                  restoreReasonId={restoreReasonId}
                  onRestore={() => restore.mutate(snapshot)}
                  onDelete={() => remove.mutate(snapshot.id)}
                />
              ))}
            </ul>
          )
        }
      </QueryView>
      {whyNotRestore && snapshots.data?.some(isReady) && (
        <p className="hint" id={restoreReasonId} data-testid="restore-reason">
          {whyNotRestore}
        </p>
      )}
      <ErrorMessage error={restore.error ?? remove.error} />
    </>
  );
}

const isReady = (snapshot: Snapshot) => snapshot.status === 'ready';

const KIND_LABEL: Record<Snapshot['kind'], string> = { manual: 'Manual', backup: 'Daily backup' };

function SnapshotRow(props: {
  snapshot: Snapshot;
  machine: Machine;
  kind: MachineKind;
  pending: boolean;
  whyNotRestore: string | undefined;
  restoreReasonId: string;
  onRestore: () => void;
  onDelete: () => void;
}) {
  const { snapshot, machine } = props;
  const Icon = snapshot.kind === 'backup' ? Archive : Camera;
  const taken = formatDate(snapshot.createdAt);
  return (
    <li className="row" data-testid="snapshot">
      <Icon className="icon" />
      <div className="row-main">
        <strong>{snapshot.name}</strong>
        <span className="muted">
          {KIND_LABEL[snapshot.kind]} · taken {taken}
          {snapshot.sizeBytes !== null && ` · ${formatBytes(snapshot.sizeBytes)}`}
        </span>
        <SnapshotState snapshot={snapshot} />
      </div>
      {/* Together, so they wrap as one beside the name on a phone. */}
      <div className="actions">
        {isReady(snapshot) && (
          <ConfirmButton
            label="Restore"
            accessibleLabel={`Restore ${snapshot.name}`}
            question={`Restore ${snapshot.name}? Everything written to ${machine.name}'s disk since ${taken} is lost; the ${props.kind} stays stopped.`}
            confirmLabel="Restore"
            pending={props.pending}
            disabled={Boolean(props.whyNotRestore)}
            describedBy={props.restoreReasonId}
            onConfirm={props.onRestore}
          />
        )}
        <ConfirmButton
          label="Delete"
          accessibleLabel={`Delete ${snapshot.name}`}
          question={`Delete ${snapshot.name}? Its copy of the disk is gone for good.`}
          confirmLabel="Delete"
          pending={props.pending}
          // One being taken is the driver's until it is ready or failed.
          disabled={props.pending || snapshot.status === 'creating'}
          onConfirm={props.onDelete}
        />
      </div>
    </li>
  );
}

const STATE_TONE: Record<Snapshot['status'], string> = {
  creating: 'busy',
  ready: 'ok',
  failed: 'bad',
};

/** `creating`, `ready`, or `failed` with the reason, as a badge like a machine's state. */
function SnapshotState({ snapshot }: { snapshot: Snapshot }) {
  return (
    <span
      className={`badge badge-${STATE_TONE[snapshot.status]}`}
      data-testid="snapshot-state"
      data-status={snapshot.status}
    >
      {snapshot.status}
      {snapshot.status === 'failed' && snapshot.failureReason ? `: ${snapshot.failureReason}` : ''}
    </span>
  );
}

/**
 * What is under way on the disk, said as it changes; once a restore asked here has ended on a
 * stopped machine, that it is done and what to do next.
 */
function DiskProgress(props: {
  kind: MachineKind;
  machine: Machine;
  restore: { isSuccess: boolean; variables: Snapshot | undefined };
}) {
  const { machine, restore } = props;
  const operation = machine.diskOperation ?? null;
  const ended = restore.isSuccess && operation === null && machine.status === 'stopped';
  const restored = ended && machine.statusReason !== 'restore_failed';
  return (
    <p role="status" data-testid="disk-progress">
      {operation === 'snapshot' && `${DISK_OPERATION_UNDER_WAY.snapshot} of ${machine.name}…`}
      {operation === 'restore' &&
        `Restoring ${machine.name}'s disk${restore.variables ? ` from ${restore.variables.name}` : ''}…`}
      {restored &&
        restore.variables &&
        `Restored: ${machine.name}'s disk is as it was at ${formatDate(restore.variables.createdAt)}. Start the ${props.kind} to use it.`}
      {ended &&
        !restored &&
        restore.variables &&
        `The restore from ${restore.variables.name} failed; ${machine.name} is stopped, and its disk was not put back as asked.`}
    </p>
  );
}

/** The name field (optional) and Take snapshot, disabled with the reason when it cannot be. */
function TakeSnapshotForm(props: {
  kind: MachineKind;
  machine: Machine;
  pending: boolean;
  error: unknown;
  /** `onTaken` empties the field once the service has accepted the snapshot. */
  onTake: (name: string | undefined, onTaken: () => void) => void;
}) {
  const [name, setName] = useState('');
  const operation = props.machine.diskOperation ?? null;
  const unavailable = operation
    ? `${DISK_OPERATION_UNDER_WAY[operation]}: a new one waits until it ends.`
    : whyNot('snapshot', 'Take snapshot', props.machine.status, props.kind);
  return (
    <form
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        const trimmed = name.trim();
        props.onTake(trimmed === '' ? undefined : trimmed, () => setName(''));
      }}
    >
      <Field
        label="Snapshot name (optional)"
        hint="Letters, digits, dots, dashes and underscores. Left empty, the service names it."
        errors={issuesAt(props.error, 'name')}
      >
        {(control) => (
          <input
            {...control}
            value={name}
            maxLength={SnapshotName.maxLength ?? undefined}
            autoComplete="off"
            onChange={(event) => setName(event.target.value)}
          />
        )}
      </Field>
      <SubmitButton
        label="Take snapshot"
        busyLabel="Taking…"
        pending={props.pending}
        unavailable={unavailable}
        primary={false}
      />
      <ErrorMessage error={props.error} />
    </form>
  );
}
