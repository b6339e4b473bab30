import type { AuditEvent, AuditLog } from '@svc/contract';
import type { Database, Executor } from '../db/database.js';
import { AppError } from '../errors.js';
import { isIsoInstant, isUuid } from '../util/cursor-values.js';
import { type AuditKey, listAuditEvents } from './audit.repo.js';

export interface AuditDeps {
  readonly database: Database;
  /**
   * The accounts' check that the user is an owner or admin (`Membership.requireManager`), named
   * here so that audit/, which accounts/ records into, does not import accounts/ back.
   */
  readonly membership: {
    requireManager(
      executor: Executor,
      actor: { userId: string },
      accountId: string,
    ): Promise<unknown>;
  };
}

const DEFAULT_LIMIT = 50;

const encodeCursor = (key: AuditKey) => Buffer.from(JSON.stringify(key)).toString('base64url');

/** The key in a cursor this log made; anything else is a 400 naming `cursor`. */
function decodeCursor(cursor: string): AuditKey {
  try {
    const key = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as AuditKey;
    // Both reach a SQL cast: a date the calendar lacks or a malformed id would be a 500.
    if (isIsoInstant(key?.at) && isUuid(key.id)) return key;
  } catch {
    // Falls through to the refusal below.
  }
  throw new AppError('invalid_request', {
    message: 'The cursor does not belong to this audit log',
    issues: [
      { path: ['query', 'cursor'], message: 'Not a cursor of this log', code: 'invalid_cursor' },
    ],
  });
}

/** An account's audit log, for its owners and admins (it names who did what to whom). */
export function createAuditService({ database, membership }: AuditDeps) {
  return {
    async list(
      userId: string,
      accountId: string,
      query: { kind?: string; actor?: string; cursor?: string; limit?: number },
    ): Promise<AuditLog> {
      await membership.requireManager(database.db, { userId }, accountId);
      const limit = query.limit ?? DEFAULT_LIMIT;
      const rows = await listAuditEvents(database.db, {
        accountId,
        limit,
        ...(query.kind && { kind: query.kind }),
        ...(query.actor && { actorUserId: query.actor }),
        ...(query.cursor !== undefined && { after: decodeCursor(query.cursor) }),
      });
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      const items = page.map(
        (row): AuditEvent => ({
          id: row.id,
          action: row.action,
          resourceKind: row.resourceKind,
          resourceId: row.resourceId,
          actor:
            row.actorUserId && row.actorEmail !== null && row.actorName !== null
              ? { userId: row.actorUserId, email: row.actorEmail, name: row.actorName }
              : null,
          data: row.data,
          createdAt: row.createdAt.toISOString(),
        }),
      );
      const more = rows.length > limit && last;
      return {
        items,
        nextCursor: more ? encodeCursor({ at: last.createdAt.toISOString(), id: last.id }) : null,
      };
    },
  };
}

export type AuditService = ReturnType<typeof createAuditService>;
