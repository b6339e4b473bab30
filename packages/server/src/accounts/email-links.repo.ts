import type { Executor } from '../db/database.js';
import type { EmailLinksTable } from '../db/schema.js';

type Purpose = EmailLinksTable['purpose'];

export const insertEmailLink = (db: Executor, link: Omit<EmailLinksTable, 'usedAt'>) =>
  db.insertInto('emailLinks').values(link).execute();

/** Whether a link could be used now (checked before any costly work; `consume` decides). */
export const findUsableEmailLink = (db: Executor, tokenHash: string, purpose: Purpose, now: Date) =>
  db
    .selectFrom('emailLinks')
    .select('userId')
    .where('tokenHash', '=', tokenHash)
    .where('purpose', '=', purpose)
    .where('usedAt', 'is', null)
    .where('expiresAt', '>', now)
    .executeTakeFirst();

/**
 * Uses a link once: marks it used and returns it with its user, or nothing when the link is
 * unknown, used, expired, of another purpose, or went to an address that is no longer the user's.
 * One statement, so two clicks at once cannot both succeed.
 */
export const consumeEmailLink = (db: Executor, tokenHash: string, purpose: Purpose, now: Date) =>
  db
    .updateTable('emailLinks as l')
    .from('users as u')
    .set({ usedAt: now })
    .whereRef('u.id', '=', 'l.userId')
    .whereRef('u.email', '=', 'l.email')
    .where('l.tokenHash', '=', tokenHash)
    .where('l.purpose', '=', purpose)
    .where('l.usedAt', 'is', null)
    .where('l.expiresAt', '>', now)
    .returning(['u.id', 'u.email', 'u.name', 'u.createdAt', 'u.emailVerifiedAt'])
    .executeTakeFirst();

/** Ends every unused link of the user for `purpose` (a new address, a password just reset). */
export const deleteEmailLinks = (db: Executor, userId: string, purpose: Purpose) =>
  db.deleteFrom('emailLinks').where('userId', '=', userId).where('purpose', '=', purpose).execute();

export const deleteEmailLinksBefore = async (db: Executor, before: Date) =>
  Number(
    (await db.deleteFrom('emailLinks').where('expiresAt', '<=', before).executeTakeFirst())
      .numDeletedRows,
  );

/**
 * Uses a link once without asking whose address it went to (the undo link went to an address
 * the user may no longer have): marks it used and returns its user and address, or nothing.
 */
export const consumeLinkOfAnyAddress = (
  db: Executor,
  tokenHash: string,
  purpose: Purpose,
  now: Date,
) =>
  db
    .updateTable('emailLinks')
    .set({ usedAt: now })
    .where('tokenHash', '=', tokenHash)
    .where('purpose', '=', purpose)
    .where('usedAt', 'is', null)
    .where('expiresAt', '>', now)
    .returning(['userId', 'email'])
    .executeTakeFirst();
