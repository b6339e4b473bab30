import type { Clock } from '../adapters/clock.js';
import { recordAuditEvent } from '../audit/audit.js';
import type { Executor } from '../db/database.js';
import type { Actor } from './membership.js';

/**
 * Records a change to an account's members, invitations or API tokens in the caller's
 * transaction; the resource kind is the action's first word (`member.role` → `member`). (Billing
 * records subscription changes itself, through `recordAuditEvent`.)
 */
export const accountAuditor =
  (clock: Clock) =>
  (
    tx: Executor,
    actor: Actor,
    accountId: string,
    action: string,
    resourceId: string,
    data: Record<string, unknown>,
  ) =>
    recordAuditEvent(
      tx,
      {
        accountId,
        actorUserId: actor === 'operator' ? null : actor.userId,
        action,
        resourceKind: action.split('.')[0] as string,
        resourceId,
        data,
      },
      clock.now(),
    );
