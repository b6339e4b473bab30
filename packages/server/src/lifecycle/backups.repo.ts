import { type Kysely, sql } from 'kysely';
import type { Executor } from '../db/database.js';
import type { MachineColumns, MachineTable } from './machine.repo.js';

/*
 * Daily backups' columns of Agents and Plain VMs (both tables have them alike) and the backup
 * snapshots the job keeps.
 */

export interface BackupsColumns extends MachineColumns {
  backupsEnabled: boolean;
  backupsKeep: number;
  backupsHour: number;
}

type BackupsDb = { machine: BackupsColumns };
const on = (db: Executor) => db as unknown as Kysely<BackupsDb>;
const name = (table: MachineTable) => table as unknown as 'machine';

/** Turns the machine's backups on or off with how many to keep; its hour stays as chosen. */
export const setBackups = <R extends BackupsColumns>(
  db: Executor,
  table: MachineTable,
  id: string,
  settings: { enabled: boolean; keep: number },
  at: Date,
) =>
  on(db)
    .updateTable(name(table))
    .set({ backupsEnabled: settings.enabled, backupsKeep: settings.keep, updatedAt: at })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst() as Promise<R | undefined>;

/** A page of the ids of machines with backups on, after `afterId`, in id order. */
export const pageOfBackedUpIds = async (
  db: Executor,
  table: MachineTable,
  page: { afterId: string | null; limit: number },
) => {
  let query = on(db)
    .selectFrom(name(table))
    .select('id')
    .where('backupsEnabled', '=', true)
    .orderBy('id')
    .limit(page.limit);
  if (page.afterId) query = query.where('id', '>', page.afterId);
  return (await query.execute()).map((row) => row.id);
};

/** The machine's row, locked until the transaction ends (one backup run at a time per machine). */
export const lockMachine = (db: Executor, table: MachineTable, id: string) =>
  on(db)
    .selectFrom(name(table))
    .selectAll()
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst() as Promise<BackupsColumns | undefined>;

/** The machine's live backups, newest first. */
export const listLiveBackups = (db: Executor, machineId: string) =>
  db
    .selectFrom('machineSnapshots')
    .selectAll()
    .where('machineId', '=', machineId)
    .where('kind', '=', 'backup')
    .where('deletedAt', 'is', null)
    .orderBy('createdAt', 'desc')
    .orderBy('id', 'desc')
    .execute();

/** How many backups named `name` failed for the machine, deleted ones included (a day's tries). */
export const countFailed = async (db: Executor, machineId: string, backupName: string) => {
  const row = await db
    .selectFrom('machineSnapshots')
    .select(sql<string>`count(*)`.as('count'))
    .where('machineId', '=', machineId)
    .where('kind', '=', 'backup')
    .where('name', '=', backupName)
    .where('status', '=', 'failed')
    .executeTakeFirstOrThrow();
  return Number(row.count);
};
