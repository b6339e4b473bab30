import { randomUUID } from 'node:crypto';
import type { Region, Size } from '@svc/contract';
import type { Executor } from '../db/database.js';
import type { HeldSnapshot } from './money.js';

// Snapshot storage periods (docs/billing.md, "Snapshot storage"): a ready snapshot's bytes held
// by one account from `startedAt` until `endedAt`. The snapshot's row says only who holds it now;
// these rows keep who held it when, as usage periods do for machines.

/**
 * Makes the snapshot's storage periods follow its row as it is now: closes its open period at
 * `at` and, if it is `ready`, not deleted and has a size, opens one at `at` for its account and
 * size. Call it in the transaction that wrote the row, with the instant written:
 * - when it becomes `ready` (with `sizeBytes`): `at` = its `readyAt`;
 * - when it is deleted: `at` = its `deletedAt`;
 * - when its `accountId` changes (a transfer) or its size changes: `at` = that change's instant.
 * A snapshot that failed or is still `creating` has no period; calling it again changes nothing
 * but splits the open period at `at`. A period records the machine's size and region for the
 * bill's line: call it while the machine's row exists (a removed machine's snapshot keeps what
 * its period before said; one that had none is not stored).
 */
export async function rolloverSnapshotUsage(
  tx: Executor,
  snapshotId: string,
  at: Date,
): Promise<void> {
  await rollover(tx, { snapshotId }, at);
}

/**
 * `rolloverSnapshotUsage` for every snapshot of one machine at once: call it in the transaction
 * that moved the machine's snapshots to another account (a transfer), or deleted them all (the
 * machine's destroy), with that instant.
 */
export async function rolloverMachineSnapshotsUsage(
  tx: Executor,
  machineId: string,
  at: Date,
): Promise<void> {
  await rollover(tx, { machineId }, at);
}

async function rollover(
  tx: Executor,
  which: { snapshotId: string } | { machineId: string },
  at: Date,
): Promise<void> {
  let close = tx.updateTable('snapshotUsage').set({ endedAt: at }).where('endedAt', 'is', null);
  let held = tx
    .selectFrom('machineSnapshots as s')
    .leftJoin('agents as a', (join) =>
      join.onRef('a.id', '=', 's.machineId').on('s.machineKind', '=', 'agent'),
    )
    .leftJoin('plainVms as p', (join) =>
      join.onRef('p.id', '=', 's.machineId').on('s.machineKind', '=', 'plain_vm'),
    )
    .select(['s.id', 's.machineKind', 's.machineId', 's.accountId', 's.sizeBytes'])
    .select((eb) => [
      eb.fn.coalesce('a.size', 'p.size').as('size'),
      eb.fn.coalesce('a.region', 'p.region').as('region'),
    ])
    .where('s.status', '=', 'ready')
    .where('s.deletedAt', 'is', null)
    .where('s.sizeBytes', 'is not', null);
  if ('snapshotId' in which) {
    close = close.where('snapshotId', '=', which.snapshotId);
    held = held.where('s.id', '=', which.snapshotId);
  } else {
    close = close.where('machineId', '=', which.machineId);
    held = held.where('s.machineId', '=', which.machineId);
  }
  const closed = await close.returning(['snapshotId', 'size', 'region']).execute();
  const before = new Map(closed.map((row) => [row.snapshotId, row]));
  const rows = await held.orderBy('s.id').execute();
  const periods = rows.flatMap((row) => {
    // The machine as it is now; once its row is gone (destroyed), as the period before said.
    const machine = row.size && row.region ? row : before.get(row.id);
    if (!machine?.size || !machine.region) return [];
    return [
      {
        id: randomUUID(),
        snapshotId: row.id,
        machineKind: row.machineKind,
        machineId: row.machineId,
        accountId: row.accountId,
        sizeBytes: Number(row.sizeBytes),
        size: machine.size as Size,
        region: machine.region as Region,
        startedAt: at,
        endedAt: null,
      },
    ];
  });
  if (periods.length > 0) await tx.insertInto('snapshotUsage').values(periods).execute();
}

/** The account's snapshot storage periods that touch `[from, to)`, in the order recorded. */
export async function snapshotUsageTouching(
  db: Executor,
  accountId: string,
  from: Date,
  to: Date,
): Promise<HeldSnapshot[]> {
  const rows = await db
    .selectFrom('snapshotUsage as s')
    // Names only of machines still on this account: where a machine went is not this account's.
    .leftJoin('agents as a', (join) =>
      join
        .onRef('a.id', '=', 's.machineId')
        .onRef('a.accountId', '=', 's.accountId')
        .on('s.machineKind', '=', 'agent'),
    )
    .leftJoin('plainVms as p', (join) =>
      join
        .onRef('p.id', '=', 's.machineId')
        .onRef('p.accountId', '=', 's.accountId')
        .on('s.machineKind', '=', 'plain_vm'),
    )
    .select([
      's.snapshotId',
      's.machineKind',
      's.machineId',
      's.sizeBytes',
      's.size',
      's.region',
      's.startedAt',
      's.endedAt',
    ])
    .select((eb) => eb.fn.coalesce('a.name', 'p.name').as('machineName'))
    .where('s.accountId', '=', accountId)
    .where('s.startedAt', '<', to)
    .where((eb) => eb.or([eb('s.endedAt', 'is', null), eb('s.endedAt', '>', from)]))
    .orderBy('s.seq')
    .execute();
  return rows.map((row) => ({ ...row, sizeBytes: Number(row.sizeBytes) }));
}
