import type { SubscriptionStatus } from '@svc/contract';
import type { Logger } from '../logger.js';

/**
 * The one line a committed change of an account's subscription status logs, at info: the
 * account, the status it left and the one it reached, and what moved it (an owner's activate or
 * deactivate, a payment processor's event, the invoices' dunning). Ids only.
 */
export function logSubscriptionMove(
  log: Logger,
  move: {
    readonly accountId: string;
    readonly from: SubscriptionStatus;
    readonly to: SubscriptionStatus;
    readonly cause: 'activate' | 'deactivate' | 'processor_event' | 'invoices';
    readonly processorEvent?: string;
    readonly durationMs?: number;
  },
): void {
  log.info({ ...move }, `subscription ${move.from} → ${move.to} (${move.cause})`);
}
