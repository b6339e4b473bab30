import type { SubscriptionMove, SubscriptionStatus } from '@svc/contract';
import type { Clock } from '../adapters/clock.js';
import { recordAuditEvent } from '../audit/audit.js';
import type { Database, Executor } from '../db/database.js';
import type { Logger } from '../logger.js';
import type { Notices } from '../notices/notices.service.js';
import * as invoices from './invoices.repo.js';
import { moveSubscriptionStatus } from './subscription.repo.js';
import { logSubscriptionMove } from './subscription-log.js';

const DAY_MS = 86_400_000;

/**
 * Where an account's invoices move its subscription (BILLING_PROVIDER=none, SUBSCRIPTION_MOVES):
 * an open invoice past its due date makes an active subscription past due, and inactive once it
 * is overdue longer than the grace period; with none overdue (paid), a past due one is active
 * again. An inactive subscription stays so: its owners activate it again.
 */
export function moveByInvoices(
  oldestOverdueDueAt: Date | null,
  now: Date,
  graceDays: number,
): SubscriptionMove {
  if (oldestOverdueDueAt === null) return 'invoices_paid';
  return now.getTime() >= oldestOverdueDueAt.getTime() + graceDays * DAY_MS
    ? 'grace_passed'
    : 'invoice_overdue';
}

export interface DunningDeps {
  readonly database: Database;
  readonly clock: Clock;
  /** `BILLING_GRACE_DAYS`. */
  readonly graceDays: number;
  readonly log: Logger;
  /** Told, in the move's transaction, when a subscription goes past due. */
  readonly notices: Pick<Notices, 'subscriptionPastDue'>;
}

/**
 * Moves the account's subscription to where its invoices put it, in the caller's transaction:
 * a compare-and-set from `current`, audited as `account.subscription` by the service itself.
 * Returns the new status, or null when nothing changed (or someone changed it first).
 */
export async function applyStanding(
  tx: Executor,
  deps: Pick<DunningDeps, 'clock' | 'graceDays' | 'notices'>,
  account: { id: string; subscriptionStatus: SubscriptionStatus },
  oldestOverdueDueAt: Date | null,
): Promise<SubscriptionStatus | null> {
  const now = deps.clock.now();
  const move = moveByInvoices(oldestOverdueDueAt, now, deps.graceDays);
  const next = await moveSubscriptionStatus(tx, account, move, now);
  if (!next) return null;
  if (next === 'past_due') await deps.notices.subscriptionPastDue(tx, account.id);
  await recordAuditEvent(
    tx,
    {
      accountId: account.id,
      actorUserId: null,
      action: 'account.subscription',
      resourceKind: 'account',
      resourceId: account.id,
      data: {
        active: next !== 'inactive',
        status: next,
        from: account.subscriptionStatus,
        reason: oldestOverdueDueAt ? 'invoice_overdue' : 'invoices_paid',
      },
    },
    now,
  );
  return next;
}

/**
 * Dunning for BILLING_PROVIDER=none: every account with an overdue open invoice, or past due,
 * moved to where its invoices put it, each in a transaction of its own.
 */
export async function runDunning(deps: DunningDeps): Promise<Record<SubscriptionStatus, number>> {
  const moved: Record<SubscriptionStatus, number> = { active: 0, past_due: 0, inactive: 0 };
  const candidates = await invoices.dunningCandidates(deps.database.db, deps.clock.now());
  for (const candidate of candidates) {
    const next = await deps.database.transaction((tx) =>
      applyStanding(tx, deps, candidate, candidate.dueAt ? new Date(candidate.dueAt) : null),
    );
    if (next) {
      moved[next] += 1;
      const move = { accountId: candidate.id, from: candidate.subscriptionStatus, to: next };
      logSubscriptionMove(deps.log, { ...move, cause: 'invoices' });
    }
  }
  if (candidates.length > 0) deps.log.info({ moved }, 'subscriptions moved by their invoices');
  return moved;
}
