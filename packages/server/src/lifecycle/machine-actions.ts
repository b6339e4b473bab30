import { type BillingType, type ErrorCode, type MachineMoveAction, MOVES } from '@svc/contract';
import type { Membership } from '../accounts/membership.js';
import { recordAuditEvent } from '../audit/audit.js';
import { takeSubscriptionSlot } from '../billing/slots.js';
import { rolloverUsage } from '../billing/usage.repo.js';
import type { Executor } from '../db/database.js';
import { AppError } from '../errors.js';
import type { JobQueue } from '../jobs/queue.js';
import type { MachineColumns, MachineMove } from './machine.repo.js';
import * as repo from './machine.repo.js';
import { type MachineKind, machinePayload } from './machine-kinds.js';

/** The audit event of a user's action on a machine, in the action's transaction. */
function auditMachine(
  tx: Executor,
  deps: { machine: MachineKind; at: Date; userId: string },
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
  deps: { jobs: JobQueue; machine: MachineKind; at: Date; userId: string },
  row: R,
  action: MachineMoveAction,
  extra: Pick<MachineMove, 'notCloning' | 'also'> = {},
): Promise<R> {
  const { machine, at } = deps;
  const move = MOVES[action];
  const moved = await repo.transitionMachine<R>(tx, machine.table, row.id, {
    from: move.from,
    to: move.via,
    at,
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
  const moved = await repo.moveToAccount<R>(tx, machine.table, row.id, targetAccountId, at, also);
  if (!moved) {
    throw new AppError(wrongState, {
      message: `cannot transfer the ${machine.noun} while it is ${row.state}`,
    });
  }
  // Usage splits here: the old account's period ends as the new account's begins.
  await rolloverUsage(tx, repo.meteredMachine(machine.kind, moved), at);
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
