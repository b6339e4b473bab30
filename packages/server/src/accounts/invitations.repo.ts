import type { Executor } from '../db/database.js';
import type { InvitationsTable } from '../db/schema.js';

/**
 * The organization's invitation to the address: a new one replaces a pending one (new secret,
 * role and expiry), so the latest mail is the link that works.
 */
export const upsertInvitation = (db: Executor, invitation: InvitationsTable) =>
  db
    .insertInto('invitations')
    .values(invitation)
    .onConflict((oc) =>
      oc.columns(['accountId', 'email']).doUpdateSet((eb) => ({
        id: eb.ref('excluded.id'),
        role: eb.ref('excluded.role'),
        tokenHash: eb.ref('excluded.tokenHash'),
        invitedBy: eb.ref('excluded.invitedBy'),
        createdAt: eb.ref('excluded.createdAt'),
        expiresAt: eb.ref('excluded.expiresAt'),
      })),
    )
    .returningAll()
    .executeTakeFirstOrThrow();

const withInviter = (db: Executor) =>
  db
    .selectFrom('invitations as i')
    .leftJoin('users as u', 'u.id', 'i.invitedBy')
    .select([
      'i.id',
      'i.accountId',
      'i.email',
      'i.role',
      'i.invitedBy',
      'i.createdAt',
      'i.expiresAt',
      'u.email as inviterEmail',
      'u.name as inviterName',
    ]);

/** Pending (unexpired) invitations of the organization, newest first. */
export const listPendingInvitations = (db: Executor, accountId: string, now: Date) =>
  withInviter(db)
    .where('i.accountId', '=', accountId)
    .where('i.expiresAt', '>', now)
    .orderBy('i.createdAt', 'desc')
    .orderBy('i.id')
    .execute();

export type InvitationWithInviter = Awaited<ReturnType<typeof listPendingInvitations>>[number];

export const findInvitation = (db: Executor, accountId: string, id: string) =>
  withInviter(db).where('i.accountId', '=', accountId).where('i.id', '=', id).executeTakeFirst();

/** Revokes: false when the organization has no such invitation. */
export const deleteInvitation = async (db: Executor, accountId: string, id: string) =>
  Number(
    (
      await db
        .deleteFrom('invitations')
        .where('accountId', '=', accountId)
        .where('id', '=', id)
        .executeTakeFirst()
    ).numDeletedRows,
  ) > 0;

/** Uses an invitation once: deletes and returns it while it has not expired. */
export const takeInvitation = (db: Executor, tokenHash: string, now: Date) =>
  db
    .deleteFrom('invitations')
    .where('tokenHash', '=', tokenHash)
    .where('expiresAt', '>', now)
    .returningAll()
    .executeTakeFirst();

export const deleteInvitationsBefore = async (db: Executor, before: Date) =>
  Number(
    (await db.deleteFrom('invitations').where('expiresAt', '<=', before).executeTakeFirst())
      .numDeletedRows,
  );

/** Whether a user with this address already belongs to the organization. */
export const isMemberByEmail = async (db: Executor, accountId: string, email: string) =>
  (await db
    .selectFrom('accountMembers as m')
    .innerJoin('users as u', 'u.id', 'm.userId')
    .select('m.userId')
    .where('m.accountId', '=', accountId)
    .where('u.email', '=', email)
    .executeTakeFirst()) !== undefined;
