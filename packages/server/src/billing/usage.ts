import { randomUUID } from 'node:crypto';
import type { BillingType, Region, Size } from '@svc/contract';
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
  await closeUsage(tx, resource.id, at);
  await tx
    .insertInto('usagePeriods')
    .values({
      id: randomUUID(),
      resourceKind: resource.kind,
      resourceId: resource.id,
      accountId: resource.accountId,
      state: resource.state,
      billingType: resource.billingType,
      size: resource.size,
      region: resource.region,
      startedAt: at,
      endedAt: null,
    })
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
