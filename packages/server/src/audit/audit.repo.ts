import { randomUUID } from 'node:crypto';
import { type SqlBool, sql } from 'kysely';
import type { Executor } from '../db/database.js';
import type { AuditEvent } from './audit.js';

/** Where the previous page ended: the last event's time and id. */
export interface AuditKey {
  readonly at: string;
  readonly id: string;
}

export interface AuditFilter {
  readonly accountId: string;
  /** An action, or a kind whose every action matches (`agent` → `agent.*`). */
  readonly kind?: string;
  readonly actorUserId?: string;
  readonly after?: AuditKey;
  readonly limit: number;
}

/**
 * One page of the account's events, newest first, with their actors as they were when each was
 * written; `limit + 1` rows so the caller knows whether another page follows. The account's
 * (created_at) index serves the order.
 */
export function listAuditEvents(db: Executor, filter: AuditFilter) {
  let query = db
    .selectFrom('auditEvents as e')
    .select([
      'e.id',
      'e.action',
      'e.resourceKind',
      'e.resourceId',
      'e.data',
      'e.createdAt',
      'e.actorUserId',
      'e.actorEmail',
      'e.actorName',
    ])
    .where('e.accountId', '=', filter.accountId);
  const { kind, after } = filter;
  if (kind !== undefined) {
    query = query.where((eb) =>
      eb.or([
        eb('e.action', '=', kind),
        eb('e.action', 'like', `${kind.replaceAll('_', '\\_')}.%`),
      ]),
    );
  }
  if (filter.actorUserId) query = query.where('e.actorUserId', '=', filter.actorUserId);
  if (after) {
    query = query.where(
      sql<SqlBool>`(e.created_at, e.id) < (${after.at}::timestamptz, ${after.id}::uuid)`,
    );
  }
  return query
    .orderBy('e.createdAt', 'desc')
    .orderBy('e.id', 'desc')
    .limit(filter.limit + 1)
    .execute();
}

/** Inserts the event with its actor's address and name as they are now. */
export async function insertAuditEvent(tx: Executor, event: AuditEvent, at: Date): Promise<void> {
  const actor = event.actorUserId;
  const ofActor = (column: 'email' | 'name') =>
    actor === null ? null : tx.selectFrom('users').select(column).where('id', '=', actor).limit(1);
  await tx
    .insertInto('auditEvents')
    .values({
      id: randomUUID(),
      ...event,
      actorEmail: ofActor('email'),
      actorName: ofActor('name'),
      data: JSON.stringify(event.data ?? {}),
      createdAt: at,
    })
    .execute();
}
