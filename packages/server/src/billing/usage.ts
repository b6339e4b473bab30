import { randomUUID } from 'node:crypto';
import type { BillingType, Cohort, MachineState, Region, Size, UsageLine } from '@svc/contract';
import { sql } from 'kysely';
import type { Executor } from '../db/database.js';

/** What a usage period records about the resource it meters. */
export interface MeteredResource {
  readonly kind: 'agent' | 'plain_vm';
  readonly id: string;
  readonly accountId: string;
  readonly state: string;
  readonly billingType: BillingType;
  readonly size: Size;
  readonly region: Region;
  readonly cohort: Cohort;
}

/**
 * Closes the resource's open usage period at `at` and opens one for its current state, billing
 * type and account. Call it in the transaction that changed any of them, so usage never has a gap
 * or an overlap.
 */
export async function rolloverUsage(
  tx: Executor,
  resource: MeteredResource,
  at: Date,
): Promise<void> {
  await rolloverUsages(tx, [resource], at);
}

/**
 * `rolloverUsage` for many resources at once, in two statements whatever their number (the
 * reconciler's repairs); call it with at most a page of them (each row takes ten parameters).
 */
export async function rolloverUsages(
  tx: Executor,
  resources: readonly MeteredResource[],
  at: Date,
): Promise<void> {
  if (resources.length === 0) return;
  const ids = resources.map((r) => r.id);
  await tx
    .updateTable('usagePeriods')
    .set({ endedAt: at })
    // One resource (every move) keeps the plain comparison it always had.
    .where('resourceId', '=', ids.length === 1 ? (ids[0] as string) : sql<string>`any(${ids})`)
    .where('endedAt', 'is', null)
    .execute();
  await tx
    .insertInto('usagePeriods')
    .values(
      resources.map((resource) => ({
        id: randomUUID(),
        resourceKind: resource.kind,
        resourceId: resource.id,
        accountId: resource.accountId,
        state: resource.state,
        billingType: resource.billingType,
        size: resource.size,
        region: resource.region,
        cohort: resource.cohort,
        startedAt: at,
        endedAt: null,
      })),
    )
    .execute();
}

/** Ends the resource's open period (charges stop at `at`). */
export async function closeUsage(tx: Executor, resourceId: string, at: Date): Promise<void> {
  await tx
    .updateTable('usagePeriods')
    .set({ endedAt: at })
    .where('resourceId', '=', resourceId)
    .where('endedAt', 'is', null)
    .execute();
}

/** The first instant of `at`'s calendar month, in UTC: usage is counted per calendar month. */
export const monthStart = (at: Date) =>
  new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));

/**
 * States that are not charged: a destroy stops charges when it is asked for (the teardown that
 * follows is the service's business), and a machine in `error` is the service's failure, not a
 * use the customer chose.
 */
const UNBILLED_STATES: readonly MachineState[] = ['destroying', 'error'];

/**
 * Each machine's usage on the account between `from` and `to`: the seconds its charged periods
 * overlap that window, split by billing type. A stopped machine is charged (its server still
 * holds a disk and an address).
 */
export async function usageByResource(
  db: Executor,
  accountId: string,
  from: Date,
  to: Date,
): Promise<UsageLine[]> {
  const periods = await db
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
      'u.billingType',
      'u.size',
      'u.region',
      'u.startedAt',
      'u.endedAt',
    ])
    .select((eb) => eb.fn.coalesce('a.name', 'p.name').as('name'))
    .where('u.accountId', '=', accountId)
    .where('u.state', 'not in', UNBILLED_STATES)
    .where('u.startedAt', '<', to)
    .where((eb) => eb.or([eb('u.endedAt', 'is', null), eb('u.endedAt', '>', from)]))
    .orderBy('u.seq')
    .execute();

  const lines = new Map<string, UsageLine>();
  for (const period of periods) {
    const start = Math.max(period.startedAt.getTime(), from.getTime());
    const end = Math.min(period.endedAt?.getTime() ?? to.getTime(), to.getTime());
    const seconds = Math.max(0, Math.floor((end - start) / 1000));
    const line = lines.get(period.resourceId) ?? {
      resourceKind: period.resourceKind,
      resourceId: period.resourceId,
      name: period.name,
      size: period.size,
      region: period.region,
      meteredSeconds: 0,
      subscriptionSeconds: 0,
      open: false,
    };
    if (period.billingType === 'metered') line.meteredSeconds += seconds;
    else line.subscriptionSeconds += seconds;
    // Periods come in insertion order: the last one says whether the machine still counts here.
    line.open = period.endedAt === null;
    lines.set(period.resourceId, line);
  }
  return [...lines.values()];
}
