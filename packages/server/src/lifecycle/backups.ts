import type { BackupsSettings } from '@svc/contract';
import { z } from 'zod';
import type { Clock } from '../adapters/clock.js';
import type { ComputeDriver } from '../adapters/compute/compute-driver.js';
import { recordAuditEvent } from '../audit/audit.js';
import type { Database, Executor } from '../db/database.js';
import { AppError } from '../errors.js';
import { defineJob, handleJob, type JobDefinition } from '../jobs/job.js';
import type { JobQueue } from '../jobs/queue.js';
import type { Logger } from '../logger.js';
import type { Notices } from '../notices/notices.service.js';
import * as repo from './backups.repo.js';
import { findMachine } from './machine.repo.js';
import { diskBusy } from './machine-actions.js';
import { AGENT, type MachineKind, PLAIN_VM } from './machine-kinds.js';
import { beginSnapshot, deleteSnapshot } from './machine-snapshots.js';

/*
 * Daily backups: once a day, from the machine's `backups_hour` (UTC), the service takes a
 * snapshot of kind `backup` named `backup-YYYY-MM-DD` through the same path as a person's
 * (`beginSnapshot`), and removes the oldest backups beyond `keep` with `deleteSnapshot`. Manual
 * snapshots are never removed, and backups do not count toward SNAPSHOTS_PER_MACHINE: `keep`
 * bounds them. The live name makes a day's backup happen once, however often the job runs.
 */

/** A day's backup is tried this many times (one a run); then its owners are told. */
export const BACKUP_TRIES_PER_DAY = 3;
/** Machines one statement of the sweep reads. */
const PAGE_SIZE = 500;

/** `backup-YYYY-MM-DD` of the UTC day of `at`. */
export const backupName = (at: Date) => `backup-${at.toISOString().slice(0, 10)}`;

/**
 * Every hour (at minute 11): take the day's backups that are due and prune those beyond `keep`.
 * A run that is late, missed or repeated is harmless: each finds what is still to do.
 */
export const backupsJob = defineJob({
  name: 'machines.backups',
  payload: z.object({}),
  cron: '11 * * * *',
  retryLimit: 0,
});

export interface BackupsDeps {
  readonly database: Database;
  readonly clock: Clock;
  readonly jobs: JobQueue;
  readonly compute: ComputeDriver;
  readonly notices: Pick<Notices, 'backupFailed'>;
  readonly log: Logger;
}

/** Changes a machine's backups in the caller's transaction on a row it authorized; audited. */
export async function changeBackups<R extends repo.BackupsColumns>(
  tx: Executor,
  context: { machine: MachineKind; at: Date; userId: string },
  row: R,
  settings: BackupsSettings,
): Promise<R> {
  const { machine, at, userId } = context;
  const from = { enabled: row.backupsEnabled, keep: row.backupsKeep };
  if (from.enabled === settings.enabled && from.keep === settings.keep) return row;
  const updated = await repo.setBackups<R>(tx, machine.table, row.id, settings, at);
  if (!updated) throw new AppError('not_found');
  await recordAuditEvent(
    tx,
    {
      accountId: row.accountId,
      actorUserId: userId,
      action: `${machine.kind}.update`,
      resourceKind: machine.kind,
      resourceId: row.id,
      data: { backups: { from, to: settings } },
    },
    at,
  );
  return updated;
}

/** What one run did, for its log line and tests. */
export interface BackupsRun {
  started: number;
  pruned: number;
  failedDays: number;
}

/** One run over every machine with backups on, Agents then Plain VMs. */
export async function runBackups(deps: BackupsDeps): Promise<BackupsRun> {
  const run: BackupsRun = { started: 0, pruned: 0, failedDays: 0 };
  for (const machine of [AGENT, PLAIN_VM]) {
    let afterId: string | null = null;
    for (;;) {
      const page = { afterId, limit: PAGE_SIZE };
      const ids = await repo.pageOfBackedUpIds(deps.database.db, machine.table, page);
      for (const id of ids) {
        try {
          await backUpMachine(deps, machine, id, run);
        } catch (error) {
          // One machine's trouble (its provider refusing a removal) leaves the others' backups.
          deps.log.warn({ machineKind: machine.kind, machineId: id, err: error }, 'backup run');
        }
      }
      if (ids.length < PAGE_SIZE) break;
      afterId = ids.at(-1) ?? null;
    }
  }
  return run;
}

/** The prune, then the day's backup if it is due, of one machine. */
async function backUpMachine(deps: BackupsDeps, machine: MachineKind, id: string, run: BackupsRun) {
  const { database, clock } = deps;
  const today = backupName(clock.now());
  // Each removal in its own transaction: a provider's failure undoes only that one.
  for (const snapshotId of await prunable(deps, machine, id, today)) {
    await database.transaction(async (tx) => {
      const row = await repo.lockMachine(tx, machine.table, id);
      if (!row) return;
      await deleteSnapshot(tx, deps, { machine, at: clock.now(), userId: null }, row, snapshotId);
      run.pruned += 1;
    });
  }
  await database.transaction(async (tx) => {
    const at = clock.now();
    const row = await repo.lockMachine(tx, machine.table, id);
    if (!row?.backupsEnabled || at.getUTCHours() < row.backupsHour) return;
    const todays = (await repo.listLiveBackups(tx, id)).find((s) => s.name === today);
    if (todays && todays.status !== 'failed') return;
    const context = { machine, at, userId: null };
    if (todays) {
      if ((await repo.countFailed(tx, id, today)) >= BACKUP_TRIES_PER_DAY) {
        if (await deps.notices.backupFailed(tx, machine.kind, row)) run.failedDays += 1;
        return;
      }
      // The failed try makes way for the next under the same name.
      await deleteSnapshot(tx, deps, context, row, todays.id);
    }
    // Settled and free, else the next run of the day tries again.
    const settled = row.state === 'stopped' || row.state === 'running';
    const driver = deps.compute.snapshots;
    if (!settled || diskBusy(row) || !driver || row.provider !== deps.compute.name) return;
    if (row.state === 'running' && !driver.whileRunning) return;
    if ((row as { cloningBy?: string | null }).cloningBy) return;
    await beginSnapshot(tx, { ...deps, perMachine: Infinity }, context, row, {
      name: today,
      kind: 'backup',
    });
    run.started += 1;
  });
}

/**
 * The machine's backups to remove: the ready ones beyond the newest `keep` (after the day's is
 * ready, so a machine holds `keep` and briefly one more), and failed ones of earlier days.
 */
async function prunable(deps: BackupsDeps, machine: MachineKind, id: string, today: string) {
  const row = await findMachine<repo.BackupsColumns>(deps.database.db, machine.table, id);
  if (!row?.backupsEnabled) return [];
  const backups = await repo.listLiveBackups(deps.database.db, id);
  const ready = backups.filter((s) => s.status === 'ready');
  const stale = backups.filter((s) => s.status === 'failed' && s.name !== today);
  return [...ready.slice(row.backupsKeep), ...stale].map((s) => s.id);
}

/** The handler of `machines.backups`. */
export function backupsJobs(deps: BackupsDeps): JobDefinition<unknown>[] {
  return [
    handleJob(backupsJob, async () => {
      const run = await runBackups(deps);
      if (run.started + run.pruned + run.failedDays > 0) deps.log.info(run, 'backups run');
    }),
  ];
}
