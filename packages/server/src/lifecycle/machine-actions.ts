import {
  type BillingType,
  type ErrorCode,
  type MachineMoveAction,
  MOVES,
  SIZE_SPECS,
  type Size,
} from '@svc/contract';
import type { Membership } from '../accounts/membership.js';
import type { ComputeDriver } from '../adapters/compute/compute-driver.js';
import { recordAuditEvent } from '../audit/audit.js';
import { takeSubscriptionSlot } from '../billing/slots.js';
import { lockSlotTakers, takeFreeSlot } from '../billing/slots.repo.js';
import { rolloverMachineSnapshotsUsage } from '../billing/snapshot-usage.repo.js';
import { rolloverUsage } from '../billing/usage.repo.js';
import type { Executor } from '../db/database.js';
import { AppError } from '../errors.js';
import type { JobQueue } from '../jobs/queue.js';
import type { MachineColumns, MachineMove } from './machine.repo.js';
import * as repo from './machine.repo.js';
import { type MachineKind, machinePayload } from './machine-kinds.js';
import * as snapshotsRepo from './snapshots.repo.js';

/** The audit event of a user's action on a machine, in the action's transaction. */
function auditMachine(
  tx: Executor,
  deps: { machine: MachineKind; at: Date; userId: string | null },
  row: { id: string; accountId: string },
  verb: string,
  data?: Record<string, unknown>,
) {
  return recordAuditEvent(
    tx,
    {
      accountId: row.accountId,
      actorUserId: deps.userId,
      action: `${deps.machine.kind}.${verb}`,
      resourceKind: deps.machine.kind,
      resourceId: row.id,
      ...(data && { data }),
    },
    deps.at,
  );
}

/** What refuses a move of a settled machine: a disk operation in flight, as a message. */
export function diskBusy(row: { diskOperation: MachineColumns['diskOperation'] }) {
  if (row.diskOperation === 'snapshot') return 'a snapshot of it is being taken';
  if (row.diskOperation === 'restore') return 'a snapshot is being restored onto it';
  return undefined;
}

/** 409 `invalid_state` for `verb` refused by `row`'s disk operation, if it has one. */
function refuseWhileDiskBusy(row: MachineColumns, verb: string, noun: string) {
  const busy = diskBusy(row);
  if (busy)
    throw new AppError('invalid_state', { message: `cannot ${verb} the ${noun} while ${busy}` });
}

/*
 * The user actions Agents and Plain VMs share, each run inside the caller's transaction on a row
 * the caller has already authorized.
 */

type Account = { id: string; subscriptionActive: boolean };

/**
 * start, stop, restart, destroy: one guarded move into the transient state, usage rolled over,
 * and the job that completes it enqueued in the same transaction. Losing the race is 409.
 */
export async function applyMove<R extends MachineColumns>(
  tx: Executor,
  // `userId` null: the service itself moves it (an idle stop).
  deps: { jobs: JobQueue; machine: MachineKind; at: Date; userId: string | null },
  row: R,
  action: MachineMoveAction,
  extra: Pick<MachineMove, 'notCloning' | 'also'> = {},
): Promise<R> {
  const { machine, at } = deps;
  const move = MOVES[action];
  refuseWhileDiskBusy(row, action, machine.noun);
  const moved = await repo.transitionMachine<R>(tx, machine.table, row.id, {
    from: move.from,
    to: move.via,
    at,
    diskIdle: true,
    ...extra,
  });
  if (!moved) {
    throw new AppError('invalid_state', {
      // The state allowed it, so what refused it was the clone in progress.
      message: `cannot ${action} the ${machine.noun} while it is ${
        extra.notCloning && move.from.includes(row.state) ? 'being cloned' : row.state
      }`,
    });
  }
  await rolloverUsage(tx, repo.meteredMachine(machine.kind, moved), at);
  if (action === 'destroy') {
    await auditMachine(tx, deps, moved, 'destroy');
  }
  await deps.jobs.enqueue(tx, machine.jobs[action], machinePayload(machine, row.id));
  return moved;
}

/** Switches billing; subscription takes a free matching slot or adds one (`addedNewSlot`). */
export async function changeBilling<R extends MachineColumns>(
  tx: Executor,
  deps: { jobs: JobQueue; machine: MachineKind; at: Date; userId: string },
  row: R & { account: Account },
  billingType: BillingType,
) {
  const { machine, at } = deps;
  const product = machine.kind;
  const slot =
    billingType === 'subscription' && row.billingType !== 'subscription'
      ? await takeSubscriptionSlot(
          tx,
          row.account,
          { product, size: row.size, region: row.region },
          at,
          deps.jobs,
        )
      : undefined;
  const switched = await repo.switchBilling<R>(tx, machine.table, row.id, {
    from: row.billingType,
    to: billingType,
    slotId: slot?.slotId ?? (billingType === 'subscription' ? row.slotId : null),
    at,
  });
  if (!switched) {
    throw new AppError('invalid_state', { message: `cannot change billing while ${row.state}` });
  }
  if (row.billingType !== billingType) {
    await rolloverUsage(tx, repo.meteredMachine(machine.kind, switched), at);
    await auditMachine(tx, deps, row, 'billing', { from: row.billingType, to: billingType });
  }
  return { success: true as const, billingType, addedNewSlot: slot?.addedNewSlot ?? false };
}

/**
 * Gives a stopped machine another size in place: CPU and memory up or down, the disk only up
 * (400 `disk_shrink`). A subscription machine needs a free slot of the new size; its old slot
 * stays on the subscription, free, as on destroy. Usage rolls over at `at`, so a metered machine
 * pays the new rate from this second. The driver's change runs in the transaction, on the row
 * the update locked: a start waits for it, and a driver failure undoes the whole resize.
 */
export async function resizeMachine<R extends MachineColumns>(
  tx: Executor,
  deps: { compute: ComputeDriver; machine: MachineKind; at: Date; userId: string },
  row: R & { account: Account },
  size: Size,
): Promise<R> {
  const { machine, at } = deps;
  const refuse = () =>
    new AppError('invalid_state', {
      message: `cannot resize the ${machine.noun} while it is ${row.state}: stop it first`,
    });
  if (row.state !== 'stopped') throw refuse();
  refuseWhileDiskBusy(row, 'resize', machine.noun);
  if (size === row.size) return row;
  const from = SIZE_SPECS[row.size][row.region].diskGb;
  const to = SIZE_SPECS[size][row.region].diskGb;
  if (to < from) {
    throw new AppError('disk_shrink', {
      message: `a ${size} ${machine.noun} has a ${to} GB disk, smaller than its ${from} GB: disks only grow`,
    });
  }
  let slotId: string | null = null;
  if (row.billingType === 'subscription') {
    await lockSlotTakers(tx, row.accountId);
    const free = await takeFreeSlot(tx, {
      accountId: row.accountId,
      product: machine.kind,
      size,
      region: row.region,
    });
    if (!free) {
      throw new AppError('invalid_state', {
        message: `no free ${size} subscription slot in ${row.region}: add one to the subscription or switch to metered billing first`,
      });
    }
    slotId = free.id;
  }
  const resized = await repo.resizeMachine<R>(tx, machine.table, row.id, {
    from: row.size,
    to: size,
    slotId,
    at,
  });
  if (!resized) throw refuse();
  await rolloverUsage(tx, repo.meteredMachine(machine.kind, resized), at);
  await auditMachine(tx, deps, row, 'resize', { from: row.size, to: size });
  // A machine another driver made (a legacy one) is not this driver's to change.
  if (row.provider === deps.compute.name) {
    await deps.compute.resize?.(row.id, { from: row.size, to: size, region: row.region });
  }
  return resized;
}

/**
 * Moves a running or stopped machine to an organization with active billing that the user
 * belongs to; it arrives metered, usage splits at `at`, and both accounts get an audit event.
 * Only an `owner` or `admin` of the source account may send a machine away.
 */
export async function transferMachine<R extends MachineColumns>(
  tx: Executor,
  deps: { membership: Membership; machine: MachineKind; at: Date; userId: string },
  row: R,
  targetAccountId: string,
  wrongState: ErrorCode,
  also: MachineMove['also'] = {},
): Promise<R> {
  const { machine, at, userId } = deps;
  await deps.membership.requireManager(tx, { userId }, row.accountId);
  if (targetAccountId === row.accountId) {
    throw new AppError('invalid_request', {
      issues: [
        {
          path: ['body', 'targetAccountId'],
          message: `The ${machine.noun} is already in this account`,
          code: 'custom',
        },
      ],
    });
  }
  await deps.membership.requireTransferTarget(tx, userId, targetAccountId);
  refuseWhileDiskBusy(row, 'transfer', machine.noun);
  const moved = await repo.moveToAccount<R>(tx, machine.table, row.id, targetAccountId, at, also);
  if (!moved) {
    throw new AppError(wrongState, {
      message: `cannot transfer the ${machine.noun} while it is ${row.state}`,
    });
  }
  // Usage splits here: the old account's period ends as the new account's begins.
  await rolloverUsage(tx, repo.meteredMachine(machine.kind, moved), at);
  // Its snapshots go with it: the new account holds (and pays for) them from now on.
  await snapshotsRepo.moveSnapshots(tx, row.id, targetAccountId);
  await rolloverMachineSnapshotsUsage(tx, row.id, at);
  const data = { fromAccountId: row.accountId, toAccountId: targetAccountId };
  for (const accountId of [row.accountId, targetAccountId]) {
    await auditMachine(tx, deps, { id: row.id, accountId }, 'transfer', data);
  }
  return moved;
}

/**
 * After inserting a machine in `provisioning`: its first usage period, the audit event, and the
 * provision job with its timeout, all in the inserting transaction.
 */
export async function beginProvisioning(
  tx: Executor,
  deps: {
    jobs: JobQueue;
    machine: MachineKind;
    at: Date;
    userId: string;
    provisionTimeoutMs: number;
  },
  row: MachineColumns,
  audit: { action: string; data?: Record<string, unknown> },
): Promise<void> {
  const { jobs, machine, at } = deps;
  await rolloverUsage(tx, repo.meteredMachine(machine.kind, row), at);
  await auditMachine(tx, deps, row, audit.action, audit.data);
  const payload = machinePayload(machine, row.id);
  await jobs.enqueue(tx, machine.jobs.provision, payload);
  await jobs.enqueue(tx, machine.jobs.provisionTimeout, payload, {
    startAfterSeconds: Math.ceil(deps.provisionTimeoutMs / 1000),
  });
}
