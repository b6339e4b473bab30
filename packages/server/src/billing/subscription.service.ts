import { STANDS_AT, type SubscriptionMove } from '@svc/contract';
import { type Actor, MANAGERS, type Membership } from '../accounts/membership.js';
import type { Clock } from '../adapters/clock.js';
import { recordAuditEvent } from '../audit/audit.js';
import type { Prices } from '../config/price-book.js';
import type { Database, Executor } from '../db/database.js';
import { AppError } from '../errors.js';
import type { JobQueue } from '../jobs/queue.js';
import type { Logger } from '../logger.js';
import type { Notices } from '../notices/notices.service.js';
import * as customers from './billing-customers.repo.js';
import { withBillingLease } from './billing-lease.repo.js';
import { moveByInvoices } from './dunning.js';
import { oldestOverdueDueAt } from './invoices.repo.js';
import { syncSubscriptionLater } from './payment.jobs.js';
import type { PaymentProcessor, ProcessorEvent } from './payment-processor.js';
import { ProcessorUnavailable } from './payment-processor.js';
import { slotQuantities } from './slot-quantities.js';
import { lockSubscriptionStatus, moveSubscriptionStatus } from './subscription.repo.js';
import { logSubscriptionMove } from './subscription-log.js';

/** How long an activation waits for another process's work on the account's subscription. */
const ACTIVATION_WAIT_MS = 20_000;

export interface SubscriptionDeps {
  readonly database: Database;
  readonly clock: Clock;
  readonly jobs: JobQueue;
  readonly membership: Membership;
  readonly processor: PaymentProcessor;
  readonly prices: Prices;
  /** `BILLING_GRACE_DAYS`: how long past its due date an unpaid invoice is tolerated. */
  readonly graceDays: number;
  readonly log: Logger;
  /** Told, in the move's transaction, when the subscription goes past due. */
  readonly notices: Pick<Notices, 'subscriptionPastDue'>;
}

/**
 * The account's subscription: activated and deactivated by its owners and admins (or the
 * operator), and moved between active, past due and inactive by the payment processor's events.
 * Every change is audited as `account.subscription`.
 */
export function createSubscriptionService(deps: SubscriptionDeps) {
  const { database, clock, processor } = deps;

  const audit = (tx: Executor, actor: Actor | null, accountId: string, data: object) =>
    recordAuditEvent(
      tx,
      {
        accountId,
        actorUserId: actor === null || actor === 'operator' ? null : actor.userId,
        action: 'account.subscription',
        resourceKind: 'account',
        resourceId: accountId,
        data: { ...data },
      },
      clock.now(),
    );

  /**
   * An owner's (or the operator's) move, on the account's locked row: where it stands after it,
   * moved or not (an owner's change is audited either way).
   */
  const moveLocked = async (tx: Executor, accountId: string, move: SubscriptionMove) => {
    const account = await lockSubscriptionStatus(tx, accountId);
    if (!account) throw new AppError('not_found');
    const to = await moveSubscriptionStatus(tx, account, move, clock.now());
    if (to === 'past_due') await deps.notices.subscriptionPastDue(tx, accountId);
    const subscriptionStatus = to ?? account.subscriptionStatus;
    const standing = {
      accountId,
      subscriptionActive: subscriptionStatus !== 'inactive',
      subscriptionStatus,
    };
    return { standing, from: account.subscriptionStatus, moved: to !== null };
  };

  /** The standing a move left, its line logged once the move's transaction committed. */
  const loggedMove = (
    result: Awaited<ReturnType<typeof moveLocked>>,
    cause: 'activate' | 'deactivate',
    startedAt: number,
  ) => {
    const { standing, from, moved } = result;
    if (moved) {
      const durationMs = Math.round(performance.now() - startedAt);
      const to = standing.subscriptionStatus;
      logSubscriptionMove(deps.log, { accountId: standing.accountId, from, to, cause, durationMs });
    }
    return standing;
  };

  return {
    /**
     * Starts the subscription: refused (409 `invoices_overdue`) while an invoice is unpaid past
     * its due date and the grace period; the processor's customer and subscription are made
     * while the caller waits (503 `billing_unavailable` if it cannot be reached). The account
     * stays inactive unless all of it succeeds; whatever the processor made for an activation
     * that failed is ended by the sync job enqueued then.
     */
    async activate(actor: Actor, accountId: string) {
      const { account } = await deps.membership.requireMember(
        database.db,
        actor,
        accountId,
        MANAGERS,
      );
      const startedAt = performance.now();
      const now = clock.now();
      const overdueSince = await oldestOverdueDueAt(database.db, accountId, now);
      if (moveByInvoices(overdueSince, now, deps.graceDays) === 'grace_passed') {
        throw new AppError('invoices_overdue');
      }
      try {
        return await withBillingLease(deps, accountId, ACTIVATION_WAIT_MS, async () => {
          const slots = await slotQuantities(database.db, accountId, deps.prices);
          const { status, subscriptionId } = await processor.activateSubscription({
            id: accountId,
            name: account.name,
            slots,
          });
          const result = await database.transaction(async (tx) => {
            await deps.membership.requireMember(tx, actor, accountId, MANAGERS);
            // Deactivated while the processor was asked: the deactivation detached this
            // subscription, and its job ends it.
            if (
              subscriptionId !== null &&
              !(await customers.lockBillingCustomer(tx, { subscriptionId }))
            ) {
              throw new AppError('invalid_state', {
                message: 'The subscription was deactivated meanwhile: activate it again',
              });
            }
            // The standing just read from the processor: events from before it change nothing.
            // Stripe stamps events to the second, so one of this very second still counts.
            if (subscriptionId !== null) {
              const second = Math.floor(clock.now().getTime() / 1000) * 1000;
              await customers.setStatusEventAt(tx, accountId, new Date(second));
            }
            const row = await moveLocked(tx, accountId, STANDS_AT[status]);
            await audit(tx, actor, accountId, { active: true, status });
            return row;
          });
          return loggedMove(result, 'activate', startedAt);
        });
      } catch (error) {
        await database
          .transaction((tx) => syncSubscriptionLater(tx, deps.jobs, accountId))
          .catch((err: unknown) => deps.log.error({ err, accountId }, 'sync not enqueued'));
        if (!(error instanceof ProcessorUnavailable)) throw error;
        deps.log.warn({ err: error, accountId }, 'payment processor unavailable: not activated');
        throw new AppError('billing_unavailable');
      }
    },

    /** Ends the subscription now; the processor's subscription is cancelled by a job. */
    async deactivate(actor: Actor, accountId: string) {
      const startedAt = performance.now();
      const result = await database.transaction(async (tx) => {
        await deps.membership.requireMember(tx, actor, accountId, MANAGERS);
        const row = await moveLocked(tx, accountId, 'deactivated');
        await processor.detachSubscription(tx, accountId);
        await syncSubscriptionLater(tx, deps.jobs, accountId);
        await audit(tx, actor, accountId, { active: false, status: 'inactive' });
        return row;
      });
      return loggedMove(result, 'deactivate', startedAt);
    },

    /**
     * Applies one processor event, once (by its id) and in order: an event older than the last
     * one applied to the account's subscription changes no standing. A paid invoice is marked
     * paid whenever its event comes.
     */
    async applyEvent(event: ProcessorEvent): Promise<void> {
      if (event.kind === 'ignored') return;
      const moved = await database.transaction(async (tx) => {
        if (!(await customers.recordEvent(tx, event, clock.now()))) return;
        const row = await customers.lockBillingCustomer(
          tx,
          event.kind === 'subscription'
            ? { subscriptionId: event.subscriptionId }
            : { customerId: event.customerId },
        );
        if (!row) return;
        if (event.kind === 'invoice_paid') {
          const paid = await customers.markInvoicesPaid(
            tx,
            row.accountId,
            { numbers: event.invoiceNumbers, providerInvoiceId: event.providerInvoiceId },
            event.occurredAt,
          );
          // As the operator's `invoice paid` records it, with the event that said so.
          for (const invoice of paid) {
            await recordAuditEvent(
              tx,
              {
                accountId: row.accountId,
                actorUserId: null,
                action: 'account.invoice_paid',
                resourceKind: 'account',
                resourceId: row.accountId,
                data: {
                  number: invoice.number,
                  total: Number(invoice.total),
                  currency: invoice.currency,
                  processorEvent: event.id,
                },
              },
              clock.now(),
            );
          }
        }
        const aboutOther =
          event.kind !== 'subscription' &&
          event.subscriptionId !== null &&
          event.subscriptionId !== row.subscriptionId;
        if (!row.subscriptionId || aboutOther) return;
        if (row.statusEventAt && event.occurredAt < row.statusEventAt) return;
        await customers.setStatusEventAt(tx, row.accountId, event.occurredAt);
        const current = await lockSubscriptionStatus(tx, row.accountId);
        if (!current) return;
        const next = await moveSubscriptionStatus(tx, current, moveOf(event), clock.now());
        if (!next) return;
        if (next === 'past_due') await deps.notices.subscriptionPastDue(tx, row.accountId);
        await audit(tx, null, row.accountId, {
          active: next !== 'inactive',
          status: next,
          processorEvent: event.id,
        });
        return { accountId: row.accountId, from: current.subscriptionStatus, to: next };
      });
      if (moved) {
        logSubscriptionMove(deps.log, {
          ...moved,
          cause: 'processor_event',
          processorEvent: event.id,
        });
      }
    },
  };
}

/** The move a processor event about the account's subscription makes. */
function moveOf(event: Exclude<ProcessorEvent, { kind: 'ignored' }>): SubscriptionMove {
  switch (event.kind) {
    case 'subscription':
      return STANDS_AT[event.status];
    case 'invoice_failed':
      return 'payment_failed';
    case 'invoice_paid':
      return 'payment_succeeded';
  }
}

export type SubscriptionService = ReturnType<typeof createSubscriptionService>;
