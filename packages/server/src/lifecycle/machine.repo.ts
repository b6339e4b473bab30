import {
  type BillingType,
  CHANGES,
  type Cohort,
  type DiskOperation,
  type MachineState,
  type Region,
  type Size,
} from '@svc/contract';
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { Executor } from '../db/database.js';

/**
 * Agents and Plain VMs are both machines with the same lifecycle: these queries serve either
 * table. They see only the columns both tables share.
 */
export type MachineTable = 'agents' | 'plainVms';

export interface MachineColumns {
  id: string;
  accountId: string;
  state: MachineState;
  statusReason: string | null;
  billingType: BillingType;
  size: Size;
  region: Region;
  provider: string;
  slotId: string | null;
  provisionDeadlineAt: Date | null;
  /** A snapshot being taken or restored: user moves and other disk operations wait. */
  diskOperation: DiskOperation;
  /** When `diskOperation` began; null without one. */
  diskOperationAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** The shared columns as the one table `machine`; the real table name is passed at run time. */
type MachineDb = { machine: MachineColumns };
const on = (db: Executor) => db as unknown as Kysely<MachineDb>;
const name = (table: MachineTable) => table as unknown as 'machine';

/** Reasons for `error` after which a machine has no server (provisioning never finished). */
export const SERVERLESS_ERRORS = [
  'provisioning_timeout',
  'provisioning_failed',
  // A provider's refusal (ComputeFailure): what was made before it is removed, not kept.
  'image_unavailable',
  'resource_limit_exceeded',
  'resource_unavailable',
  'placement_error',
];

export const findMachine = <R extends MachineColumns>(
  db: Executor,
  table: MachineTable,
  id: string,
) =>
  on(db).selectFrom(name(table)).selectAll().where('id', '=', id).executeTakeFirst() as Promise<
    R | undefined
  >;

export interface MachineMove {
  readonly from: readonly MachineState[];
  readonly to: MachineState;
  readonly at: Date;
  readonly statusReason?: string | null;
  /** Agents only: refuse while the disk is being copied for a clone. */
  readonly notCloning?: boolean;
  /** Refuse while a snapshot is being taken or restored (every user move and idle stop). */
  readonly diskIdle?: boolean;
  /** Table-specific columns changed with the move (e.g. an Agent's token generation). */
  readonly also?: Readonly<Record<string, RawBuilder<unknown> | string | number | null>>;
}

/**
 * The compare-and-set every state change goes through: moves the machine to `to` only if it is
 * in one of `from` right now. `undefined` means it was not (someone else moved it first).
 */
export function transitionMachine<R extends MachineColumns>(
  db: Executor,
  table: MachineTable,
  id: string,
  move: MachineMove,
): Promise<R | undefined> {
  let query = on(db)
    .updateTable(name(table))
    .set({
      state: move.to,
      updatedAt: move.at,
      statusReason: move.statusReason ?? null,
      ...(move.to !== 'provisioning' && { provisionDeadlineAt: null }),
      ...(move.also as object),
    })
    .where('id', '=', id)
    .where('state', 'in', move.from);
  if (move.notCloning) query = query.where(sqlRef('cloningBy'), 'is', null);
  if (move.diskIdle) query = query.where('diskOperation', 'is', null);
  return query.returningAll().executeTakeFirst() as Promise<R | undefined>;
}

// A column only one table has, named where the type system sees the shared columns alone.
const sqlRef = (column: string) => column as keyof MachineColumns;

/**
 * How many machines the reconciler reads, and repairs, per statement: its statements grow with
 * the pages, never with the machines, and no statement carries more than a page's parameters.
 */
export const RECONCILE_PAGE_SIZE = 1000;

/** `= ANY($1)` with the whole list as one array parameter (one statement for any length). */
export const anyOf = (ids: readonly string[]) => sql<string>`any(${[...ids]})`;

/**
 * One keyset page (`id` after `afterId`, at most `limit`) of the ids of machines that should
 * have a server: every machine but those in `error` for a reason that leaves none.
 */
export const pageOfIdsOwningServers = async (
  db: Executor,
  table: MachineTable,
  page: { afterId: string | null; limit: number },
) => {
  let query = on(db)
    .selectFrom(name(table))
    .select('id')
    .where((eb) =>
      eb.or([eb('state', '!=', 'error'), eb('statusReason', 'not in', SERVERLESS_ERRORS)]),
    );
  if (page.afterId !== null) query = query.where('id', '>', page.afterId);
  return (await query.orderBy('id').limit(page.limit).execute()).map((r) => r.id);
};

/**
 * Up to `limit` machines left in one of `reasons`' states since before `cutoff` (their job died),
 * moved to `error` with that state's reason, in one statement; the rows as they are now.
 */
export const failStuck = <R extends MachineColumns>(
  db: Executor,
  table: MachineTable,
  stuck: {
    reasons: Readonly<Partial<Record<MachineState, string>>>;
    cutoff: Date;
    at: Date;
    limit: number;
  },
) => {
  const states = Object.keys(stuck.reasons) as MachineState[];
  const reason = sql<string>`case ${sql.ref('state')} ${sql.join(
    Object.entries(stuck.reasons).map(([state, why]) => sql`when ${state} then ${why}`),
    sql` `,
  )} end`;
  return (
    on(db)
      .updateTable(name(table))
      .set({ state: 'error', statusReason: reason, updatedAt: stuck.at })
      .where('id', 'in', (eb) =>
        eb
          .selectFrom(name(table))
          .select('id')
          .where('state', 'in', states)
          .where('updatedAt', '<', stuck.cutoff)
          .orderBy('id')
          .limit(stuck.limit),
      )
      // Again on the row being updated: it may have moved since the subquery saw it.
      .where('state', 'in', states)
      .where('updatedAt', '<', stuck.cutoff)
      .returningAll()
      .execute() as Promise<R[]>
  );
};

/** Removes a destroyed machine, only from `destroying`. */
export const removeMachine = (db: Executor, table: MachineTable, id: string) =>
  on(db)
    .deleteFrom(name(table))
    .where('id', '=', id)
    .where('state', '=', 'destroying')
    .returning('id')
    .executeTakeFirst();

/** Changes billing only while running or stopped and still on `from` (guarded like a move). */
export const switchBilling = <R extends MachineColumns>(
  db: Executor,
  table: MachineTable,
  id: string,
  change: { from: BillingType; to: BillingType; slotId: string | null; at: Date },
) =>
  on(db)
    .updateTable(name(table))
    .set({ billingType: change.to, slotId: change.slotId, updatedAt: change.at })
    .where('id', '=', id)
    .where('state', 'in', CHANGES.changeBilling)
    .where('billingType', '=', change.from)
    .returningAll()
    .executeTakeFirst() as Promise<R | undefined>;

/**
 * Gives a stopped machine its new size and slot. The updated row stays locked until the
 * transaction ends, so a start waits for the driver's change (or its rollback).
 */
export const resizeMachine = <R extends MachineColumns>(
  db: Executor,
  table: MachineTable,
  id: string,
  change: { from: Size; to: Size; slotId: string | null; at: Date },
) =>
  on(db)
    .updateTable(name(table))
    .set({ size: change.to, slotId: change.slotId, updatedAt: change.at })
    .where('id', '=', id)
    .where('state', 'in', CHANGES.resize)
    .where('size', '=', change.from)
    .where('diskOperation', 'is', null)
    .returningAll()
    .executeTakeFirst() as Promise<R | undefined>;

/**
 * Starts a disk operation at `at` on a settled machine (one of `states`, not being cloned, no
 * other disk operation): the compare-and-set that makes snapshots, restores and moves exclude
 * each other.
 */
export const beginDiskOperation = <R extends MachineColumns>(
  db: Executor,
  table: MachineTable,
  id: string,
  operation: NonNullable<DiskOperation>,
  states: readonly MachineState[],
  at: Date,
) => {
  let query = on(db)
    .updateTable(name(table))
    .set({ diskOperation: operation, diskOperationAt: at })
    .where('id', '=', id)
    .where('state', 'in', states)
    .where('diskOperation', 'is', null);
  if (table === 'agents') query = query.where(sqlRef('cloningBy'), 'is', null);
  return query.returningAll().executeTakeFirst() as Promise<R | undefined>;
};

/**
 * Ends the machine's disk operation `operation` (no other one it may have started since). A
 * restore also says how it ended: `statusReason` `restore_failed`, or `null` once one succeeds.
 */
export const endDiskOperation = (
  db: Executor,
  table: MachineTable,
  id: string,
  operation: NonNullable<DiskOperation>,
  outcome: { statusReason?: string | null; since?: Date } = {},
) => {
  let query = on(db)
    .updateTable(name(table))
    .set({
      diskOperation: null,
      diskOperationAt: null,
      ...(outcome.statusReason !== undefined && { statusReason: outcome.statusReason }),
    })
    .where('id', '=', id)
    .where('diskOperation', '=', operation);
  // `since`: only the operation begun then, not a newer one of the same kind.
  if (outcome.since) query = query.where('diskOperationAt', '=', outcome.since);
  return query.executeTakeFirst();
};

/**
 * Up to `limit` machines whose disk operation `operation` began before `cutoff` (its job died
 * without ending it), ended as `endDiskOperation` would, in one statement; their ids and accounts.
 */
export const endStaleDiskOperations = (
  db: Executor,
  table: MachineTable,
  operation: NonNullable<DiskOperation>,
  stale: { cutoff: Date; limit: number; statusReason?: string },
) =>
  on(db)
    .updateTable(name(table))
    .set({
      diskOperation: null,
      diskOperationAt: null,
      ...(stale.statusReason !== undefined && { statusReason: stale.statusReason }),
    })
    .where('id', 'in', (eb) =>
      eb
        .selectFrom(name(table))
        .select('id')
        .where('diskOperation', '=', operation)
        .where('diskOperationAt', '<', stale.cutoff)
        .orderBy('id')
        .limit(stale.limit),
    )
    // Again on the row being updated: its job may have ended it, or another begun, since.
    .where('diskOperation', '=', operation)
    .where('diskOperationAt', '<', stale.cutoff)
    .returning(['id', 'accountId'])
    .execute();

/** Moves the machine to another account, metered and without a slot, if running or stopped. */
export const moveToAccount = <R extends MachineColumns>(
  db: Executor,
  table: MachineTable,
  id: string,
  accountId: string,
  at: Date,
  also: MachineMove['also'] = {},
) =>
  on(db)
    .updateTable(name(table))
    .set({ accountId, billingType: 'metered', slotId: null, updatedAt: at, ...(also as object) })
    .where('id', '=', id)
    .where('state', 'in', CHANGES.transfer)
    .where('diskOperation', 'is', null)
    .returningAll()
    .executeTakeFirst() as Promise<R | undefined>;

/** What usage periods record about a machine (rows are whole: an Agent's carries its cohort). */
export const meteredMachine = (
  kind: 'agent' | 'plain_vm',
  row: MachineColumns & { cohort?: Cohort },
) =>
  ({
    kind,
    id: row.id,
    accountId: row.accountId,
    state: row.state,
    billingType: row.billingType,
    size: row.size,
    region: row.region,
    // Plain VMs have one cohort: the current.
    cohort: row.cohort ?? 'current',
  }) as const;
