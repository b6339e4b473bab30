import type { UsageLine } from '@svc/contract';
import type { Executor } from '../db/database.js';
import { usagePeriodsTouching } from './ledger.repo.js';
import { CHARGED_STATES, overlap, second } from './money.js';

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
  const periods = await usagePeriodsTouching(db, accountId, from, to, { states: CHARGED_STATES });

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
