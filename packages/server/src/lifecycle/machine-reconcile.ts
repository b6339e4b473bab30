import { type MachineState, MOVES } from '@svc/contract';
import { rolloverUsages } from '../billing/usage.repo.js';
import type { LifecycleJobsDeps, MachineJobHooks } from './lifecycle-jobs.js';
import type { MachineColumns } from './machine.repo.js';
import * as repo from './machine.repo.js';
import type { MachineKind } from './machine-kinds.js';
import { logMove } from './machine-log.js';
import {
  DISK_OPERATION_GIVEN_UP_AFTER_MS,
  FAILURE_REASON,
  RESTORE_FAILED,
} from './snapshot-jobs.js';
import * as snapshots from './snapshots.repo.js';

/** A start, stop, restart or destroy still unfinished after this long has failed for good. */
export const STUCK_AFTER_MS = 60 * 60_000;

/** Each move's transient state, with the reason a machine stuck in it gets (`stop_timeout`). */
const STUCK_REASONS = Object.fromEntries(
  Object.entries(MOVES).map(([action, { via }]) => [via, `${action}_timeout`]),
) as Partial<Record<MachineState, string>>;

/**
 * One pass of `<kind>.reconcile`. The database is read in keyset pages and compared with the
 * driver's list in memory, and every repair is one statement per page, so a pass over 10,000
 * machines sends about as many statements as one over 1,000 plus one per page: never one per
 * machine. The driver calls that repair real infrastructure (deleting a server) stay one per
 * server, since that is what providers offer.
 */
export async function reconcileMachines<R extends MachineColumns>(
  deps: Omit<LifecycleJobsDeps, 'readiness'> & { readonly pageSize?: number },
  machine: MachineJobHooks<R>,
): Promise<void> {
  const { database, clock, compute, log } = deps;
  const { kind } = machine;
  const { table } = kind;
  const limit = deps.pageSize ?? repo.RECONCILE_PAGE_SIZE;

  // Servers the driver has that no machine owns: left by a crash between the provider's work and
  // our commit, or by hand. They would run (and cost) forever. Includes servers of machines whose
  // provisioning failed or timed out, in case that cleanup failed too. The list comes first: a
  // machine's row exists before its server does, so a server listed here whose row no page shows
  // has none (or one that no longer should have a server).
  const servers = await compute.listServers({ managedBy: 'svc', kind: kind.kind });
  const unowned = new Set(servers.map((s) => s.id));
  for (let afterId: string | null = null; unowned.size > 0; ) {
    const ids: string[] = await repo.pageOfIdsOwningServers(database.db, table, { afterId, limit });
    for (const id of ids) unowned.delete(id);
    if (ids.length < limit) break;
    afterId = ids[ids.length - 1] as string;
  }
  for (const serverId of unowned) {
    log.warn({ serverId }, 'removing a server nothing owns');
    await compute.deleteServer(serverId);
  }

  // A move whose job died without reaching its last attempt (crash, expiry) would leave the
  // machine in a transient state no user action accepts: give it up as `error`, a page at a time
  // (each page one transaction: the moves and their usage periods together).
  const now = clock.now();
  const cutoff = new Date(now.getTime() - STUCK_AFTER_MS);
  for (let isFull = true; isFull; ) {
    const rows = await database.transaction(async (tx) => {
      const stuck = { reasons: STUCK_REASONS, cutoff, at: now, limit };
      const failed = await repo.failStuck<R>(tx, table, stuck);
      await rolloverUsages(
        tx,
        failed.map((row) => repo.meteredMachine(kind.kind, row)),
        now,
      );
      for (const row of failed) await deps.notices.machineFailed(tx, kind.kind, row);
      return failed;
    });
    // Each move's line once committed; how long it was stuck is known only to be past the cutoff.
    for (const row of rows) {
      const before = { ...row, state: stuckState(row) ?? row.state };
      const finished = logMove(log, kind, before, {
        to: 'error',
        at: now,
        statusReason: row.statusReason,
        since: cutoff,
      });
      deps.moveFinished?.(finished);
    }
    isFull = rows.length === limit;
  }
  await endStaleDiskOperations(deps, kind, limit);
  await machine.reconcile?.();
}

/**
 * A snapshot or restore whose job died without ending it (a worker killed or an expiry on its
 * last attempt, a job lost) would keep the machine's `disk_operation`, and every move refused,
 * for ever: once older than the jobs can take, it ends as the job's last failure would have. A
 * page at a time, each one transaction of one statement per repair: the snapshots' operations
 * ended and their `creating` snapshots failed, the restores' ended with `restore_failed`.
 */
async function endStaleDiskOperations(
  deps: Pick<LifecycleJobsDeps, 'database' | 'clock' | 'log'>,
  kind: MachineKind,
  limit: number,
): Promise<void> {
  const { database, clock, log } = deps;
  const cutoff = new Date(clock.now().getTime() - DISK_OPERATION_GIVEN_UP_AFTER_MS);
  for (let isFull = true; isFull; ) {
    const ended = await database.transaction(async (tx) => {
      const snapshot = await repo.endStaleDiskOperations(tx, kind.table, 'snapshot', {
        cutoff,
        limit,
      });
      const failed = snapshot.length
        ? await snapshots.failCreating(
            tx,
            snapshot.map((row) => row.id),
            FAILURE_REASON,
          )
        : [];
      const restore = await repo.endStaleDiskOperations(tx, kind.table, 'restore', {
        cutoff,
        limit,
        statusReason: RESTORE_FAILED,
      });
      return { snapshot, failed, restore };
    });
    for (const row of ended.snapshot) {
      const snapshotIds = ended.failed.filter((s) => s.machineId === row.id).map((s) => s.id);
      log.warn(
        { [kind.idKey]: row.id, accountId: row.accountId, snapshotIds },
        `${kind.noun} snapshot given up: its job never ended`,
      );
    }
    for (const row of ended.restore) {
      log.warn(
        { [kind.idKey]: row.id, accountId: row.accountId, statusReason: RESTORE_FAILED },
        `${kind.noun} restore given up: its job never ended`,
      );
    }
    isFull = ended.snapshot.length === limit || ended.restore.length === limit;
  }
}

/** The transient state a failed-stuck machine was in, read back from its reason. */
const stuckState = (row: MachineColumns) =>
  Object.entries(STUCK_REASONS).find(([, reason]) => reason === row.statusReason)?.[0] as
    | MachineState
    | undefined;
