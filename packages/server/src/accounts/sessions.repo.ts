import type { Executor } from '../db/database.js';

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

/** The session's user, if the session exists and has not expired. One indexed lookup. */
export const findSessionUser = (db: Executor, idHash: string, now: Date) =>
  db
    .selectFrom('sessions as s')
    .innerJoin('users as u', 'u.id', 's.userId')
    .select([
      'u.id',
      'u.email',
      'u.name',
      'u.createdAt',
      'u.emailVerifiedAt',
      's.expiresAt',
      's.lastSeenAt',
    ])
    .where('s.idHash', '=', idHash)
    .where('s.expiresAt', '>', now)
    .executeTakeFirst();

/** Records a use of the session, and a later expiry when given. */
export const touchSession = (
  db: Executor,
  idHash: string,
  change: { lastSeenAt: Date; expiresAt?: Date },
) => db.updateTable('sessions').set(change).where('idHash', '=', idHash).execute();

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
    .execute();

/** Ends every session of the user (a password reset). */
export const deleteUserSessions = (db: Executor, userId: string) =>
  db.deleteFrom('sessions').where('userId', '=', userId).execute();

export const deleteSession = (db: Executor, idHash: string) =>
  db.deleteFrom('sessions').where('idHash', '=', idHash).execute();

export const deleteExpiredSessions = async (db: Executor, now: Date) =>
  Number(
    (await db.deleteFrom('sessions').where('expiresAt', '<=', now).executeTakeFirst())
      .numDeletedRows,
  );
