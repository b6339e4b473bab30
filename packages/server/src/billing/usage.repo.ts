import { randomUUID } from 'node:crypto';
import type { BillingType, Cohort, Region, Size } from '@svc/contract';
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
