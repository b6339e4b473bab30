import type { Executor } from '../db/database.js';

export const insertSession = (
  db: Executor,
  session: { idHash: string; userId: string; createdAt: Date; expiresAt: Date },
) => db.insertInto('sessions').values(session).execute();

/** The session's user, if the session exists and has not expired. One indexed lookup. */
export const findSessionUser = (db: Executor, idHash: string, now: Date) =>
  db
    .selectFrom('sessions as s')
    .innerJoin('users as u', 'u.id', 's.userId')
    .select(['u.id', 'u.email', 'u.name', 'u.createdAt', 's.expiresAt'])
    .where('s.idHash', '=', idHash)
    .where('s.expiresAt', '>', now)
    .executeTakeFirst();

export const extendSession = (db: Executor, idHash: string, expiresAt: Date) =>
  db.updateTable('sessions').set({ expiresAt }).where('idHash', '=', idHash).execute();

export const deleteSession = (db: Executor, idHash: string) =>
  db.deleteFrom('sessions').where('idHash', '=', idHash).execute();

export const deleteExpiredSessions = async (db: Executor, now: Date) =>
  Number(
    (await db.deleteFrom('sessions').where('expiresAt', '<=', now).executeTakeFirst())
      .numDeletedRows,
  );
