import { randomUUID } from 'node:crypto';
import type { Executor } from '../db/database.js';

export interface AuditEvent {
  readonly accountId: string;
  /** `null` when the operator or the service itself acted. */
  readonly actorUserId: string | null;
  readonly action: string;
  readonly resourceKind: string;
  readonly resourceId: string;
  readonly data?: Record<string, unknown>;
}

/** Appends an audit event in the caller's transaction: it exists only if the change commits. */
export async function recordAuditEvent(tx: Executor, event: AuditEvent, at: Date): Promise<void> {
  await tx
    .insertInto('auditEvents')
    .values({ id: randomUUID(), ...event, data: JSON.stringify(event.data ?? {}), createdAt: at })
    .execute();
}
