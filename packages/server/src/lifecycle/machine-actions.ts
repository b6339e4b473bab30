import { type BillingType, type ErrorCode, type MachineMoveAction, MOVES } from '@svc/contract';
import type { AccountsService } from '../accounts/accounts.service.js';
import { recordAuditEvent } from '../audit/audit.js';
import { takeSubscriptionSlot } from '../billing/slots.js';
import { rolloverUsage } from '../billing/usage.js';
import type { Executor } from '../db/database.js';
import { AppError } from '../errors.js';
import type { JobQueue } from '../jobs/queue.js';
import type { MachineColumns, MachineMove, MachineTable } from './machine.repo.js';
import * as repo from './machine.repo.js';

/**
 * The user actions Agents and Plain VMs share, each run inside the caller's transaction on a row
 * the caller has already authorized.
 */
export interface MachineRef {
  readonly kind: 'agent' | 'plain_vm';
  readonly table: MachineTable;
  /** Prefix of the lifecycle job names (see `lifecycle-jobs.ts`). */
  readonly jobPrefix: string;
  readonly idKey: string;
  /** How messages name it: `Agent`, `Plain VM`. */
  readonly noun: string;
}

type Account = { id: string; subscriptionActive: boolean };

/**
 * start, stop, restart, destroy: one guarded move into the transient state, usage rolled over,
 * and the job that completes it enqueued in the same transaction. Losing the race is 409.
 */
export async function applyMove<R extends MachineColumns>(
  tx: Executor,
  deps: { jobs: JobQueue; ref: MachineRef; at: Date; userId: string },
  row: R,
  action: MachineMoveAction,
  extra: Pick<MachineMove, 'notCloning' | 'also'> = {},
): Promise<R> {
  const { ref, at } = deps;
  const move = MOVES[action];
  const moved = await repo.transitionMachine<R>(tx, ref.table, row.id, {
    from: move.from,
    to: move.via,
    at,
    ...extra,
  });
  if (!moved) {
    throw new AppError('invalid_state', {
      message: `cannot ${action} a ${ref.noun} that is ${row.state}`,
    });
  }
  await rolloverUsage(tx, repo.meteredMachine(ref.kind, moved), at);
  if (action === 'destroy') {
    await recordAuditEvent(
      tx,
      {
        accountId: moved.accountId,
        actorUserId: deps.userId,
        action: `${ref.kind}.destroy`,
        resourceKind: ref.kind,
        resourceId: row.id,
      },
      at,
    );
  }
  await deps.jobs.enqueue(tx, `${ref.jobPrefix}.${action}`, { [ref.idKey]: row.id });
  return moved;
}

/** Switches billing; subscription takes a free matching slot or adds one (`addedNewSlot`). */
export async function changeBilling<R extends MachineColumns>(
  tx: Executor,
  deps: { ref: MachineRef; at: Date },
  row: R & { account: Account },
  billingType: BillingType,
) {
  const { ref, at } = deps;
  const product = ref.kind;
  const slot =
    billingType === 'subscription' && row.billingType !== 'subscription'
      ? await takeSubscriptionSlot(
          tx,
          row.account,
          { product, size: row.size, region: row.region },
          at,
        )
      : undefined;
  const switched = await repo.switchBilling<R>(tx, ref.table, row.id, {
    from: row.billingType,
    to: billingType,
    slotId: slot?.slotId ?? (billingType === 'subscription' ? row.slotId : null),
    at,
  });
  if (!switched) {
    throw new AppError('invalid_state', { message: `cannot change billing while ${row.state}` });
  }
  if (row.billingType !== billingType) {
    await rolloverUsage(tx, repo.meteredMachine(ref.kind, switched), at);
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
  deps: { accounts: AccountsService; ref: MachineRef; at: Date; userId: string },
  row: R,
  targetAccountId: string,
  wrongState: ErrorCode,
  also: MachineMove['also'] = {},
): Promise<R> {
  const { ref, at, userId } = deps;
  await deps.accounts.requireManager(tx, { userId }, row.accountId);
  if (targetAccountId === row.accountId) {
    throw new AppError('invalid_request', {
      issues: [
        {
          path: ['body', 'targetAccountId'],
          message: `The ${ref.noun} is already in this account`,
          code: 'custom',
        },
      ],
    });
  }
  await deps.accounts.requireTransferTarget(tx, userId, targetAccountId);
  const moved = await repo.moveToAccount<R>(tx, ref.table, row.id, targetAccountId, at, also);
  if (!moved) {
    throw new AppError(wrongState, {
      message: `cannot transfer a ${ref.noun} that is ${row.state}`,
    });
  }
  // Usage splits here: the old account's period ends as the new account's begins.
  await rolloverUsage(tx, repo.meteredMachine(ref.kind, moved), at);
  const data = { fromAccountId: row.accountId, toAccountId: targetAccountId };
  for (const accountId of [row.accountId, targetAccountId]) {
    await recordAuditEvent(
      tx,
      {
        accountId,
        actorUserId: userId,
        action: `${ref.kind}.transfer`,
        resourceKind: ref.kind,
        resourceId: row.id,
        data,
      },
      at,
    );
  }
  return moved;
}

/**
 * After inserting a machine in `provisioning`: its first usage period, the audit event, and the
 * provision job with its timeout, all in the inserting transaction.
 */
export async function beginProvisioning(
  tx: Executor,
  deps: { jobs: JobQueue; ref: MachineRef; at: Date; userId: string; provisionTimeoutMs: number },
  row: MachineColumns,
  audit: { action: string; data?: Record<string, unknown> },
): Promise<void> {
  const { jobs, ref, at } = deps;
  await rolloverUsage(tx, repo.meteredMachine(ref.kind, row), at);
  await recordAuditEvent(
    tx,
    {
      accountId: row.accountId,
      actorUserId: deps.userId,
      action: `${ref.kind}.${audit.action}`,
      resourceKind: ref.kind,
      resourceId: row.id,
      ...(audit.data && { data: audit.data }),
    },
    at,
  );
  const payload = { [ref.idKey]: row.id };
  await jobs.enqueue(tx, `${ref.jobPrefix}.provision`, payload);
  await jobs.enqueue(tx, `${ref.jobPrefix}.provision-timeout`, payload, {
    startAfterSeconds: Math.ceil(deps.provisionTimeoutMs / 1000),
  });
}
