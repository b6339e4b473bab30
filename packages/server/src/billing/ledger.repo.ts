import type { BillingType, MachineState } from '@svc/contract';
import type { Executor } from '../db/database.js';
import type { BilledPeriod, HeldSlot, HeldSnapshot } from './money.js';
import { snapshotUsageTouching } from './snapshot-usage.repo.js';

/**
 * The account's usage periods that touch `[from, to)`, in the order they were recorded: only
 * of one billing type, or in some states, when asked.
 */
export function usagePeriodsTouching(
  db: Executor,
  accountId: string,
  from: Date,
  to: Date,
  only: { billingType?: BillingType; states?: readonly MachineState[] },
): Promise<BilledPeriod[]> {
  let query = db
    .selectFrom('usagePeriods as u')
    // Names only of machines still on this account: where a machine went is not this account's.
    .leftJoin('agents as a', (join) =>
      join.onRef('a.id', '=', 'u.resourceId').onRef('a.accountId', '=', 'u.accountId'),
    )
    .leftJoin('plainVms as p', (join) =>
      join.onRef('p.id', '=', 'u.resourceId').onRef('p.accountId', '=', 'u.accountId'),
    )
    .select([
      'u.resourceKind',
      'u.resourceId',
      'u.state',
      'u.billingType',
      'u.size',
      'u.region',
      'u.cohort',
      'u.startedAt',
      'u.endedAt',
    ])
    .select((eb) => eb.fn.coalesce('a.name', 'p.name').as('name'))
    .where('u.accountId', '=', accountId)
    .where('u.startedAt', '<', to)
    .where((eb) => eb.or([eb('u.endedAt', 'is', null), eb('u.endedAt', '>', from)]))
    .orderBy('u.seq');
  if (only.billingType) query = query.where('u.billingType', '=', only.billingType);
  if (only.states) query = query.where('u.state', 'in', only.states);
  return query.execute();
}

/**
 * One account's usage periods, slots and snapshot storage periods that touch `[from, to)`: what
 * its bill is made of.
 */
export async function accountLedger(
  db: Executor,
  accountId: string,
  from: Date,
  to: Date,
): Promise<{ periods: BilledPeriod[]; slots: HeldSlot[]; snapshots: HeldSnapshot[] }> {
  const [periods, slots, snapshots] = await Promise.all([
    usagePeriodsTouching(db, accountId, from, to, { billingType: 'metered' }),
    db
      .selectFrom('subscriptionSlots')
      .select(['product', 'size', 'region', 'createdAt', 'removedAt'])
      .where('accountId', '=', accountId)
      .where('createdAt', '<', to)
      .where((eb) => eb.or([eb('removedAt', 'is', null), eb('removedAt', '>', from)]))
      .orderBy('createdAt')
      .execute(),
    snapshotUsageTouching(db, accountId, from, to),
  ]);
  return { periods, slots, snapshots };
}

/**
 * The accounts with anything to bill in `[from, to)`: a metered period, a slot or a snapshot
 * storage period touching it.
 * A page at a time, by id after `afterId`, for the period close.
 */
export async function accountsToBill(
  db: Executor,
  from: Date,
  to: Date,
  afterId: string | null,
  limit: number,
): Promise<string[]> {
  const metered = db
    .selectFrom('usagePeriods')
    .select('accountId')
    .where('billingType', '=', 'metered')
    .where('startedAt', '<', to)
    .where((eb) => eb.or([eb('endedAt', 'is', null), eb('endedAt', '>', from)]));
  const slotted = db
    .selectFrom('subscriptionSlots')
    .select('accountId')
    .where('createdAt', '<', to)
    .where((eb) => eb.or([eb('removedAt', 'is', null), eb('removedAt', '>', from)]));
  const stored = db
    .selectFrom('snapshotUsage')
    .select('accountId')
    .where('startedAt', '<', to)
    .where((eb) => eb.or([eb('endedAt', 'is', null), eb('endedAt', '>', from)]));
  let query = db
    .selectFrom(metered.union(slotted).union(stored).as('billed'))
    .select('billed.accountId')
    .orderBy('billed.accountId')
    .limit(limit);
  if (afterId) query = query.where('billed.accountId', '>', afterId);
  return (await query.execute()).map((row) => row.accountId);
}
