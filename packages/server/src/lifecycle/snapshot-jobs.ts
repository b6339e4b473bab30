import { z } from 'zod';
import type { Clock } from '../adapters/clock.js';
import type { ComputeDriver } from '../adapters/compute/compute-driver.js';
import { rolloverSnapshotUsage } from '../billing/snapshot-usage.repo.js';
import type { Database, Executor } from '../db/database.js';
import {
  DEFAULT_RETRY_LIMIT,
  defineJob,
  handleJob,
  type JobDefinition,
  type JobRun,
  type JobType,
} from '../jobs/job.js';
import type { Logger } from '../logger.js';
import * as machines from './machine.repo.js';
import { AGENT, type MachineKind, PLAIN_VM } from './machine-kinds.js';
import * as repo from './snapshots.repo.js';

const payload = z.object({
  machineKind: z.enum(['agent', 'plain_vm']),
  machineId: z.uuid(),
  snapshotId: z.uuid(),
  /**
   * When the operation began (`disk_operation_at`): a job that outlived it (given up by the
   * reconcile pass, then another operation begun) must not act on, or end, the newer one.
   * Optional: jobs enqueued before it was carried have none.
   */
  since: z.iso.datetime().optional(),
});
export type SnapshotJobPayload = z.infer<typeof payload>;

/**
 * The driver's part of a snapshot: `ready` with its size, or `failed` once the retries are spent;
 * either way the machine's `disk_operation` is cleared. Retried: the driver names its copy after
 * the snapshot's id, so a retry finds what an earlier try made.
 */
export const takeSnapshotJob = defineJob({
  name: 'machine.snapshot',
  payload,
  retryLimit: 3,
  retryDelaySeconds: 10,
  // A large disk copies for a while.
  expireInSeconds: 3_600,
});

/**
 * The driver's part of a restore onto a stopped machine; then `disk_operation` is cleared, and a
 * restore that failed for good leaves the machine stopped with `statusReason: restore_failed`.
 */
export const restoreSnapshotJob = defineJob({
  name: 'machine.restore-snapshot',
  payload,
  retryLimit: 3,
  retryDelaySeconds: 10,
  expireInSeconds: 3_600,
});

/** The longest a job of `type` may run with its retries: every attempt to its expiry, and the waits. */
function longestRunMs(type: JobType<unknown>): number {
  const { retryLimit = DEFAULT_RETRY_LIMIT, expireInSeconds, retryDelaySeconds } = type;
  if (expireInSeconds === undefined || retryDelaySeconds === undefined) {
    throw new Error(`${type.name} must declare its expiry and retry delay`);
  }
  return (retryLimit + 1) * (expireInSeconds + retryDelaySeconds) * 1_000;
}

/**
 * A disk operation older than this has a job that died without ending it (a worker killed or an
 * expiry on its last attempt, a job lost): the reconciler gives it up. The margin covers what the
 * declarations leave out: the retry delay's backoff (doubling, about two minutes in all here), a
 * wait in the queue and pg-boss's own expiry check.
 */
export const DISK_OPERATION_GIVEN_UP_AFTER_MS =
  Math.max(longestRunMs(takeSnapshotJob), longestRunMs(restoreSnapshotJob)) + 30 * 60_000;

export interface SnapshotJobsDeps {
  readonly database: Database;
  readonly clock: Clock;
  readonly compute: ComputeDriver;
  readonly log: Logger;
  /**
   * After a restore, in its transaction: the disk came back with what the machine held then (an
   * Agent's token of that time), so the composition root has the current one pushed again.
   */
  readonly restored?: (tx: Executor, job: SnapshotJobPayload) => Promise<void>;
}

/** What a failed snapshot says to its owners: never the driver's own words (they may hold hosts or ids). */
export const FAILURE_REASON =
  'The provider could not copy the disk; try again, or ask the operator';

/** A stopped machine's `statusReason` after a restore that failed on every try. */
export const RESTORE_FAILED = 'restore_failed';

const kindOf = (kind: SnapshotJobPayload['machineKind']): MachineKind =>
  kind === 'agent' ? AGENT : PLAIN_VM;

/** The handlers of `machine.snapshot` and `machine.restore-snapshot`. */
export function snapshotJobs(deps: SnapshotJobsDeps): JobDefinition<unknown>[] {
  const { database, clock, compute, log } = deps;

  /** A driver failure: thrown to be retried, or on the last attempt `settle`d for good. */
  async function failed(
    job: SnapshotJobPayload,
    error: unknown,
    run: JobRun,
    settle: () => Promise<void>,
  ) {
    log.warn(
      { ...job, err: error, isLastAttempt: run.isLastAttempt },
      'snapshot driver call failed',
    );
    if (!run.isLastAttempt) throw error;
    await settle();
  }

  return [
    handleJob(takeSnapshotJob, async (job, run) => {
      const { table } = kindOf(job.machineKind);
      const snapshot = await repo.findSnapshot(database.db, job.snapshotId);
      // Settled already (by an earlier try, or given up by the reconcile pass), and its operation
      // ended then: the machine's operation now, if any, is another one's.
      if (snapshot?.status !== 'creating') return;
      // The operation ends with the snapshot's `creating`, in one transaction, and only then.
      const endIf = async (tx: Executor, settled: unknown) => {
        if (settled) await machines.endDiskOperation(tx, table, job.machineId, 'snapshot');
        return Boolean(settled);
      };
      if (!compute.snapshots) {
        await database.transaction(async (tx) =>
          endIf(tx, await repo.markFailed(tx, snapshot.id, FAILURE_REASON)),
        );
        return;
      }
      let taken: Awaited<ReturnType<typeof compute.snapshots.create>>;
      try {
        taken = await compute.snapshots.create(job.machineId, job.snapshotId);
      } catch (error) {
        return failed(job, error, run, async () => {
          await database.transaction(async (tx) =>
            endIf(tx, await repo.markFailed(tx, job.snapshotId, FAILURE_REASON)),
          );
        });
      }
      const at = clock.now();
      const kept = await database.transaction(async (tx) => {
        const ready = await repo.markReady(tx, job.snapshotId, { ...taken, at });
        // Its storage is billed from this second (docs/billing.md).
        if (ready) await rolloverSnapshotUsage(tx, job.snapshotId, at);
        return endIf(tx, ready);
      });
      if (!kept) {
        // Given up (or deleted) while the driver worked: its copy belongs to no snapshot.
        log.warn(job, 'snapshot finished after it was given up: removing its copy');
        await compute.snapshots
          .remove(job.machineId, taken.ref)
          .catch((err: unknown) => log.warn({ ...job, err }, 'orphan snapshot copy not removed'));
        return;
      }
      log.info({ ...job, sizeBytes: taken.sizeBytes }, 'snapshot taken');
    }),

    handleJob(restoreSnapshotJob, async (job, run) => {
      const { table } = kindOf(job.machineKind);
      const machine = await machines.findMachine(database.db, table, job.machineId);
      if (machine?.diskOperation !== 'restore') return;
      const since = job.since ? new Date(job.since) : undefined;
      if (since && machine.diskOperationAt?.getTime() !== since.getTime()) return;
      // The owners see a failure on the machine itself, not only in the log: the dashboard
      // would otherwise say "Restored" once the operation ended.
      const endFailed = async () => {
        await machines.endDiskOperation(database.db, table, job.machineId, 'restore', {
          statusReason: RESTORE_FAILED,
          since,
        });
      };
      const snapshot = await repo.findSnapshot(database.db, job.snapshotId);
      if (!snapshot?.providerRef || snapshot.deletedAt || !compute.snapshots) {
        await endFailed();
        return;
      }
      try {
        await compute.snapshots.restore(job.machineId, snapshot.providerRef);
      } catch (error) {
        return failed(job, error, run, endFailed);
      }
      await database.transaction(async (tx) => {
        // Given up meanwhile (and perhaps another restore begun), `since` leaves the operation
        // to that one; the disk came back all the same, so the current token goes out again.
        await machines.endDiskOperation(tx, table, job.machineId, 'restore', {
          statusReason: null,
          since,
        });
        await deps.restored?.(tx, job);
      });
      log.info(job, 'snapshot restored');
    }),
  ];
}
