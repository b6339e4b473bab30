import type { Executor } from '../db/database.js';
import { insertAuditEvent } from './audit.repo.js';

export interface AuditEvent {
  readonly accountId: string;
  /** `null` when the operator or the service itself acted. */
  readonly actorUserId: string | null;
  readonly action: string;
  readonly resourceKind: string;
  readonly resourceId: string;
  readonly data?: Record<string, unknown>;
}

/**
 * Appends an audit event in the caller's transaction: it exists only if the change commits. The
 * actor's address and name are copied in as they are now, so the log keeps naming them so after
 * the user changes either.
 */
export async function recordAuditEvent(tx: Executor, event: AuditEvent, at: Date): Promise<void> {
  await insertAuditEvent(tx, event, at);
}
