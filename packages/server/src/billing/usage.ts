import { randomUUID } from 'node:crypto';
import type { BillingType, Cohort, Region, Size, UsageLine } from '@svc/contract';
import { sql } from 'kysely';
import type { Executor } from '../db/database.js';
import { CHARGED_STATES, overlap, second } from './money.js';

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

/**
 * Each machine's usage on the account between `from` and `to`: the seconds its charged periods
 * overlap that window (in whole seconds, as bills count them), split by billing type. A stopped
 * machine is charged (its server still holds a disk and an address); a provisioning, destroying
 * or failed one is not (`CHARGED_STATES`).
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
    .where('u.state', 'in', CHARGED_STATES)
    .where('u.startedAt', '<', to)
    .where((eb) => eb.or([eb('u.endedAt', 'is', null), eb('u.endedAt', '>', from)]))
    .orderBy('u.seq')
    .execute();

  const window = { from: second(from), to: second(to) };
  const lines = new Map<string, UsageLine>();
  for (const period of periods) {
    const seconds = overlap(window, period.startedAt, period.endedAt);
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
