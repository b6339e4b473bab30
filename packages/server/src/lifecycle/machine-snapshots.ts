import { randomUUID } from 'node:crypto';
import type { Snapshot, SnapshotKind } from '@svc/contract';
import type { Selectable } from 'kysely';
import type { Membership } from '../accounts/membership.js';
import type { Clock } from '../adapters/clock.js';
import type { ComputeDriver, SnapshotDriver } from '../adapters/compute/compute-driver.js';
import { recordAuditEvent } from '../audit/audit.js';
import { rolloverSnapshotUsage } from '../billing/snapshot-usage.repo.js';
import type { Database, Executor } from '../db/database.js';
import type { MachineSnapshotsTable } from '../db/schema.js';
import { AppError } from '../errors.js';
import type { JobQueue } from '../jobs/queue.js';
import type { MachineColumns } from './machine.repo.js';
import * as machines from './machine.repo.js';
import { diskBusy } from './machine-actions.js';
import type { MachineKind } from './machine-kinds.js';
import { restoreSnapshotJob, takeSnapshotJob } from './snapshot-jobs.js';
import * as repo from './snapshots.repo.js';

/*
 * Snapshots of Agents' and Plain VMs' disks, for both kinds alike. A snapshot or a restore is a
 * disk operation: the machine's `disk_operation` is set by a compare-and-set in the request's
 * transaction, with the job that does the driver's part, and cleared by that job; while it is
 * set, lifecycle moves and other disk operations answer 409.
 */

export type SnapshotRow = Selectable<MachineSnapshotsTable>;

export interface MachineSnapshotsDeps {
  readonly database: Database;
  readonly clock: Clock;
  readonly jobs: JobQueue;
  readonly membership: Membership;
  readonly compute: ComputeDriver;
  /** Live snapshots one machine may hold (`SNAPSHOTS_PER_MACHINE`). */
  readonly perMachine: number;
}

export const toSnapshot = (row: SnapshotRow): Snapshot => ({
  id: row.id,
  name: row.name,
  kind: row.kind,
  status: row.status,
  sizeBytes: row.sizeBytes === null ? null : Number(row.sizeBytes),
  failureReason: row.failureReason,
  createdAt: row.createdAt.toISOString(),
  readyAt: row.readyAt?.toISOString() ?? null,
});

/** `snapshot-YYYYMMDD-HHMMSS` (UTC): a manual snapshot's name when none is given. */
export const defaultSnapshotName = (at: Date) =>
  `snapshot-${at.toISOString().slice(0, 19).replace(/[-:]/g, '').replace('T', '-')}`;

/** The driver's snapshots for this machine, or 409: another driver's (legacy) or none. */
export function snapshotsFor(
  compute: ComputeDriver,
  machine: MachineKind,
  row: MachineColumns,
): SnapshotDriver {
  if (!compute.snapshots || row.provider !== compute.name) {
    throw new AppError('invalid_state', {
      message: `this ${machine.noun} cannot take snapshots: its provider does not offer them`,
    });
  }
  return compute.snapshots;
}

/** The audit event of a snapshot action (`agent.snapshot`, `plain_vm.snapshot_restore`, …). */
function audit(
  tx: Executor,
  context: { machine: MachineKind; at: Date; userId: string | null },
  row: MachineColumns,
  verb: 'snapshot' | 'snapshot_restore' | 'snapshot_delete',
  snapshot: SnapshotRow,
) {
  return recordAuditEvent(
    tx,
    {
      accountId: row.accountId,
      actorUserId: context.userId,
      action: `${context.machine.kind}.${verb}`,
      resourceKind: context.machine.kind,
      resourceId: row.id,
      data: { snapshotId: snapshot.id, name: snapshot.name },
    },
    context.at,
  );
}

/**
 * Starts a snapshot of a settled machine, in the caller's transaction on a row it authorized:
 * the checks, the compare-and-set of `disk_operation`, the `creating` row, its audit event and
 * the `machine.snapshot` job. `userId` null: the service takes it (a daily backup).
 */
export async function beginSnapshot(
  tx: Executor,
  deps: Pick<MachineSnapshotsDeps, 'compute' | 'jobs' | 'perMachine'>,
  context: { machine: MachineKind; at: Date; userId: string | null },
  row: MachineColumns,
  input: { name: string; kind: SnapshotKind },
): Promise<SnapshotRow> {
  const { machine, at } = context;
  const refuse = (why: string) =>
    new AppError('invalid_state', { message: `cannot snapshot the ${machine.noun} while ${why}` });
  const driver = snapshotsFor(deps.compute, machine, row);
  const busy = diskBusy(row);
  if (busy) throw refuse(busy);
  if (row.state === 'running' && !driver.whileRunning) {
    throw refuse('it is running: stop it first, its provider snapshots only a stopped machine');
  }
  if (row.state !== 'running' && row.state !== 'stopped') throw refuse(`it is ${row.state}`);
  const settled = driver.whileRunning ? (['running', 'stopped'] as const) : (['stopped'] as const);
  // The compare-and-set: of concurrent snapshots and moves, one gets the machine.
  const claimed = await machines.beginDiskOperation(
    tx,
    machine.table,
    row.id,
    'snapshot',
    settled,
    at,
  );
  if (!claimed) {
    const agentCloning = (row as { cloningBy?: string | null }).cloningBy;
    throw refuse(agentCloning ? 'it is being cloned' : 'it is busy with another change');
  }
  const held = await repo.countLive(tx, row.id);
  if (held >= deps.perMachine) {
    throw new AppError('snapshot_limit', {
      message: `the ${machine.noun} already holds ${held} snapshots, the most it may (SNAPSHOTS_PER_MACHINE is ${deps.perMachine}): delete one first`,
    });
  }
  if (await repo.hasLiveName(tx, row.id, input.name)) {
    throw new AppError('invalid_state', {
      message: `the ${machine.noun} already has a snapshot named "${input.name}": choose another name or delete that one`,
    });
  }
  const snapshot = await repo.insertSnapshot(tx, {
    id: randomUUID(),
    machineKind: machine.kind,
    machineId: row.id,
    accountId: row.accountId,
    name: input.name,
    kind: input.kind,
    provider: row.provider,
    at,
  });
  await audit(tx, context, row, 'snapshot', snapshot);
  await deps.jobs.enqueue(tx, takeSnapshotJob, {
    machineKind: machine.kind,
    machineId: row.id,
    snapshotId: snapshot.id,
  });
  return snapshot;
}

/**
 * Deletes one live snapshot of the machine, in the caller's transaction on a row it authorized:
 * marked deleted (its row locked, so a restore of it waits and then finds it gone), audited, and
 * removed at the driver (a failure undoes the whole delete). 409 while it is being taken or a
 * restore onto the machine is in flight; 404 if there is no such live snapshot.
 */
export async function deleteSnapshot(
  tx: Executor,
  deps: Pick<MachineSnapshotsDeps, 'compute'>,
  context: { machine: MachineKind; at: Date; userId: string | null },
  row: MachineColumns,
  snapshotId: string,
): Promise<void> {
  const { machine, at } = context;
  const snapshot = await repo.findLive(tx, row.id, snapshotId);
  const deleted = snapshot && (await repo.markDeleted(tx, snapshotId, at));
  if (!snapshot || !deleted) throw new AppError('not_found', { message: 'no such snapshot' });
  // Its storage is billed until this second.
  await rolloverSnapshotUsage(tx, snapshotId, at);
  const now = await machines.findMachine(tx, machine.table, row.id);
  const refuse = (why: string) =>
    new AppError('invalid_state', {
      message: `cannot delete the snapshot "${snapshot.name}" while ${why}`,
    });
  if (snapshot.status === 'creating') throw refuse('it is being taken');
  if (now?.diskOperation === 'restore') {
    throw refuse(`a snapshot is being restored onto the ${machine.noun}`);
  }
  await audit(tx, context, row, 'snapshot_delete', snapshot);
  if (snapshot.providerRef && snapshot.provider === deps.compute.name) {
    await deps.compute.snapshots?.remove(row.id, snapshot.providerRef);
  }
}

/**
 * Removes every live snapshot of a machine at the driver, then marks it deleted (the destroy
 * job, before it deletes the server). A repeated run finds only those still live.
 */
export async function removeAllSnapshots(
  deps: { database: Database; clock: Clock; compute: ComputeDriver },
  row: MachineColumns,
): Promise<void> {
  for (const snapshot of await repo.listLive(deps.database.db, row.id)) {
    if (snapshot.providerRef && snapshot.provider === deps.compute.name) {
      await deps.compute.snapshots?.remove(row.id, snapshot.providerRef);
    }
    const at = deps.clock.now();
    // Billed until it is gone; the machine's row still exists here (its storage line names it).
    await deps.database.transaction(async (tx) => {
      await repo.markDeleted(tx, snapshot.id, at);
      await rolloverSnapshotUsage(tx, snapshot.id, at);
    });
  }
}

/** The snapshot endpoints of Agents and Plain VMs, each on a machine of `machine`'s kind. */
export function createMachineSnapshots(deps: MachineSnapshotsDeps) {
  const { database, clock, membership } = deps;

  /** The machine, if the user is a member of its account (as every machine action asks). */
  async function requireMachine(tx: Executor, machine: MachineKind, userId: string, id: string) {
    const row = await machines.findMachine(tx, machine.table, id);
    if (!row) throw new AppError('not_found');
    await membership.requireMember(tx, { userId }, row.accountId);
    return row;
  }

  return {
    /** The machine's live snapshots, newest first. */
    async list(machine: MachineKind, userId: string, id: string) {
      return database.transaction(async (tx) => {
        await requireMachine(tx, machine, userId, id);
        return { snapshots: (await repo.listLive(tx, id)).map(toSnapshot) };
      });
    },

    /** A manual snapshot, taken in the background (`beginSnapshot`). */
    async create(machine: MachineKind, userId: string, id: string, input: { name?: string }) {
      return database.transaction(async (tx) => {
        const row = await requireMachine(tx, machine, userId, id);
        const at = clock.now();
        const name = input.name ?? defaultSnapshotName(at);
        const context = { machine, at, userId };
        return toSnapshot(await beginSnapshot(tx, deps, context, row, { name, kind: 'manual' }));
      });
    },

    /**
     * Puts a `ready` snapshot back onto the stopped machine in the background: the compare-and-
     * set of `disk_operation` 'restore' keeps it stopped (a start answers 409) until the job ends.
     */
    async restore(machine: MachineKind, userId: string, id: string, snapshotId: string) {
      return database.transaction(async (tx) => {
        const row = await requireMachine(tx, machine, userId, id);
        const snapshot = await repo.lockLive(tx, id, snapshotId);
        if (!snapshot) throw new AppError('not_found', { message: 'no such snapshot' });
        const refuse = (why: string) =>
          new AppError('invalid_state', {
            message: `cannot restore onto the ${machine.noun} while ${why}`,
          });
        snapshotsFor(deps.compute, machine, row);
        const busy = diskBusy(row);
        if (busy) throw refuse(busy);
        if (row.state !== 'stopped') throw refuse(`it is ${row.state}: stop it first`);
        if (snapshot.status !== 'ready') {
          throw new AppError('invalid_state', {
            message: `the snapshot "${snapshot.name}" is ${snapshot.status}, not ready: only a ready one can be restored`,
          });
        }
        const at = clock.now();
        const claimed = await machines.beginDiskOperation(
          tx,
          machine.table,
          id,
          'restore',
          ['stopped'],
          at,
        );
        if (!claimed) throw refuse('it is busy with another change');
        await audit(tx, { machine, at, userId }, row, 'snapshot_restore', snapshot);
        await deps.jobs.enqueue(tx, restoreSnapshotJob, {
          machineKind: machine.kind,
          machineId: id,
          snapshotId,
          since: at.toISOString(),
        });
        return toSnapshot(snapshot);
      });
    },

    /**
     * Deletes one: removed at the driver (in the transaction: a failure leaves it as it was),
     * its row kept with `deleted_at`. Not while it is being taken, nor during a restore.
     */
    async remove(machine: MachineKind, userId: string, id: string, snapshotId: string) {
      await database.transaction(async (tx) => {
        const row = await requireMachine(tx, machine, userId, id);
        const context = { machine, at: clock.now(), userId };
        await deleteSnapshot(tx, deps, context, row, snapshotId);
      });
    },
  };
}

export type MachineSnapshots = ReturnType<typeof createMachineSnapshots>;
