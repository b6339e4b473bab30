import type { Executor } from '../db/database.js';
import { membershipsOf } from './accounts.repo.js';

export const insertSession = (
  db: Executor,
  session: {
    idHash: string;
    userId: string;
    createdAt: Date;
    expiresAt: Date;
    userAgent: string | null;
    clientAddress: string | null;
  },
) => db.insertInto('sessions').values(session).execute();

/**
 * The live session's user and their memberships, and its use recorded, in one statement (a
 * data-modifying CTE): `lastSeenAt` is written when older than `seenBefore` (or never written),
 * and the expiry moves to `extendTo` once it is before `extendBefore`. The row returned shows
 * the session as it was before the write. The write names the session by its key rather than
 * by the select's result, which keeps the statement as cheap to plan as the select alone.
 */
export const useSession = (
  db: Executor,
  idHash: string,
  times: { now: Date; seenBefore: Date; extendBefore: Date; extendTo: Date },
) =>
  db
    .with('touched', (q) =>
      q
        .updateTable('sessions')
        .set((eb) => ({
          lastSeenAt: times.now,
          expiresAt: eb
            .case()
            .when('expiresAt', '<', times.extendBefore)
            .then(times.extendTo)
            .else(eb.ref('expiresAt'))
            .end(),
        }))
        .where('idHash', '=', idHash)
        .where('expiresAt', '>', times.now)
        .where((eb) =>
          eb.or([
            eb('lastSeenAt', 'is', null),
            eb('lastSeenAt', '<', times.seenBefore),
            eb('expiresAt', '<', times.extendBefore),
          ]),
        )
        .returning('id'),
    )
    .selectFrom('sessions as s')
    .innerJoin('users as u', 'u.id', 's.userId')
    .select([
      'u.id',
      'u.email',
      'u.name',
      'u.createdAt',
      'u.emailVerifiedAt',
      'u.pendingEmail',
      'u.pendingEmailExpiresAt',
      's.expiresAt',
      's.lastSeenAt',
      's.id as recordId',
    ])
    .select((eb) => membershipsOf(eb.ref('u.id')).as('memberships'))
    .where('s.idHash', '=', idHash)
    .where('s.expiresAt', '>', times.now)
    .executeTakeFirst();

/**
 * Whether the user's session of this id (the settings page's) is live: a port's cookie ends with
 * the session that opened it. One lookup by the unique `sessions_id_idx`.
 */
export const isSessionLive = async (db: Executor, id: string, userId: string, now: Date) =>
  (await db
    .selectFrom('sessions')
    .select('id')
    .where('id', '=', id)
    .where('userId', '=', userId)
    .where('expiresAt', '>', now)
    .executeTakeFirst()) !== undefined;

/** The user's live sessions, newest first. */
export const listUserSessions = (db: Executor, userId: string, now: Date) =>
  db
    .selectFrom('sessions')
    .select(['id', 'idHash', 'userAgent', 'clientAddress', 'createdAt', 'lastSeenAt', 'expiresAt'])
    .where('userId', '=', userId)
    .where('expiresAt', '>', now)
    .orderBy('createdAt', 'desc')
    .execute();

/** Ends one of the user's sessions; false when the user has no session with that id. */
export const deleteUserSession = async (db: Executor, userId: string, id: string) =>
  Number(
    (
      await db
        .deleteFrom('sessions')
        .where('userId', '=', userId)
        .where('id', '=', id)
        .executeTakeFirst()
    ).numDeletedRows,
  ) > 0;

/** Ends every session of the user but the one named. */
export const deleteOtherSessions = (db: Executor, userId: string, keepIdHash: string) =>
  db
    .deleteFrom('sessions')
    .where('userId', '=', userId)
    .where('idHash', '!=', keepIdHash)
    .executeTakeFirst();

/** Ends every session of the user (a password reset). */
export const deleteUserSessions = (db: Executor, userId: string) =>
  db.deleteFrom('sessions').where('userId', '=', userId).executeTakeFirst();

export const deleteSession = (db: Executor, idHash: string) =>
  db.deleteFrom('sessions').where('idHash', '=', idHash).execute();

export const deleteExpiredSessions = async (db: Executor, now: Date) =>
  Number(
    (await db.deleteFrom('sessions').where('expiresAt', '<=', now).executeTakeFirst())
      .numDeletedRows,
  );
