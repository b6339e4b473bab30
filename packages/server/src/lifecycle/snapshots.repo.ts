import type { SnapshotKind } from '@svc/contract';
import type { Executor } from '../db/database.js';
import { anyOf } from './machine.repo.js';

/**
 * Snapshots of machines' disks. A deleted one keeps its row with `deletedAt` (its storage is
 * billed by the second it was held); "live" means not deleted.
 */

/** A machine's live snapshots, newest first. */
export const listLive = (db: Executor, machineId: string) =>
  db
    .selectFrom('machineSnapshots')
    .selectAll()
    .where('machineId', '=', machineId)
    .where('deletedAt', 'is', null)
    .orderBy('createdAt', 'desc')
    .orderBy('id', 'desc')
    .execute();

/** One live snapshot of the machine. */
export const findLive = (db: Executor, machineId: string, snapshotId: string) =>
  db
    .selectFrom('machineSnapshots')
    .selectAll()
    .where('id', '=', snapshotId)
    .where('machineId', '=', machineId)
    .where('deletedAt', 'is', null)
    .executeTakeFirst();

/** One snapshot by id, deleted or not (a job's). */
export const findSnapshot = (db: Executor, snapshotId: string) =>
  db.selectFrom('machineSnapshots').selectAll().where('id', '=', snapshotId).executeTakeFirst();

/**
 * How many live manual snapshots the machine holds (its limit counts these; backups are bounded
 * by their `keep` instead).
 */
export const countLive = async (db: Executor, machineId: string) => {
  const row = await db
    .selectFrom('machineSnapshots')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('machineId', '=', machineId)
    .where('kind', '=', 'manual')
    .where('deletedAt', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.count);
};

/** Whether the machine holds a live snapshot named `name`. */
export const hasLiveName = async (db: Executor, machineId: string, name: string) =>
  (await db
    .selectFrom('machineSnapshots')
    .select('id')
    .where('machineId', '=', machineId)
    .where('name', '=', name)
    .where('deletedAt', 'is', null)
    .executeTakeFirst()) !== undefined;

export const insertSnapshot = (
  db: Executor,
  row: {
    id: string;
    machineKind: 'agent' | 'plain_vm';
    machineId: string;
    accountId: string;
    name: string;
    kind: SnapshotKind;
    provider: string;
    at: Date;
  },
) =>
  db
    .insertInto('machineSnapshots')
    .values({
      id: row.id,
      machineKind: row.machineKind,
      machineId: row.machineId,
      accountId: row.accountId,
      name: row.name,
      kind: row.kind,
      status: 'creating',
      provider: row.provider,
      createdAt: row.at,
    })
    .returningAll()
    .executeTakeFirstOrThrow();

/** `creating` → `ready` with what the driver holds; only a live one still creating. */
export const markReady = (
  db: Executor,
  id: string,
  taken: { ref: string; sizeBytes: number; at: Date },
) =>
  db
    .updateTable('machineSnapshots')
    .set({ status: 'ready', providerRef: taken.ref, sizeBytes: taken.sizeBytes, readyAt: taken.at })
    .where('id', '=', id)
    .where('status', '=', 'creating')
    .where('deletedAt', 'is', null)
    .returningAll()
    .executeTakeFirst();

/** `creating` → `failed` with a reason fit to show its owners. */
export const markFailed = (db: Executor, id: string, reason: string) =>
  db
    .updateTable('machineSnapshots')
    .set({ status: 'failed', failureReason: reason })
    .where('id', '=', id)
    .where('status', '=', 'creating')
    .returningAll()
    .executeTakeFirst();

/**
 * Every snapshot still `creating` of the machines `machineIds` → `failed` with `reason`, in one
 * statement (their snapshot jobs died); the ones it failed.
 */
export const failCreating = (db: Executor, machineIds: readonly string[], reason: string) =>
  db
    .updateTable('machineSnapshots')
    .set({ status: 'failed', failureReason: reason })
    .where('machineId', '=', anyOf(machineIds))
    .where('status', '=', 'creating')
    .returning(['id', 'machineId'])
    .execute();

/** Marks a live snapshot deleted at `at` (its row stays for billing). */
export const markDeleted = (db: Executor, id: string, at: Date) =>
  db
    .updateTable('machineSnapshots')
    .set({ deletedAt: at })
    .where('id', '=', id)
    .where('deletedAt', 'is', null)
    .returningAll()
    .executeTakeFirst();

/** The machine's live snapshots move with it to `accountId` (a transfer, same transaction). */
export const moveSnapshots = (db: Executor, machineId: string, accountId: string) =>
  db
    .updateTable('machineSnapshots')
    .set({ accountId })
    .where('machineId', '=', machineId)
    .where('deletedAt', 'is', null)
    .execute();

/** One live snapshot of the machine, its row locked until the transaction ends (a restore's). */
export const lockLive = (db: Executor, machineId: string, snapshotId: string) =>
  db
    .selectFrom('machineSnapshots')
    .selectAll()
    .where('id', '=', snapshotId)
    .where('machineId', '=', machineId)
    .where('deletedAt', 'is', null)
    .forUpdate()
    .executeTakeFirst();
