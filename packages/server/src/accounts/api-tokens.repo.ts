import type { Executor } from '../db/database.js';
import type { ApiTokensTable } from '../db/schema.js';
import { membershipsOf } from './accounts.repo.js';

/** How stale `lastUsedAt` may get before a use writes it again. */
export const LAST_USED_PRECISION_MS = 60_000;

export const insertApiToken = (db: Executor, token: Omit<ApiTokensTable, 'lastUsedAt'>) =>
  db.insertInto('apiTokens').values(token).returningAll().executeTakeFirstOrThrow();

export const listUserApiTokens = (db: Executor, userId: string, now: Date) =>
  db
    .selectFrom('apiTokens')
    .select(['id', 'name', 'scope', 'createdAt', 'expiresAt', 'lastUsedAt'])
    .where('userId', '=', userId)
    .where((eb) => eb.or([eb('expiresAt', 'is', null), eb('expiresAt', '>', now)]))
    .orderBy('createdAt', 'desc')
    .orderBy('id')
    .execute();

/** Revokes every token of the user (a password reset takes the account back). */
/** Revokes every token of the user; how many there were. */
export const deleteUserApiTokens = async (db: Executor, userId: string) =>
  Number(
    (await db.deleteFrom('apiTokens').where('userId', '=', userId).executeTakeFirst())
      .numDeletedRows,
  );

/** Revokes: the deleted token, or nothing when the user has no token with that id. */
export const deleteUserApiToken = (db: Executor, userId: string, id: string) =>
  db
    .deleteFrom('apiTokens')
    .where('userId', '=', userId)
    .where('id', '=', id)
    .returning(['id', 'name', 'scope'])
    .executeTakeFirst();

/**
 * Whether the user's token of this id is live (not revoked, not expired): a port's cookie opened
 * with it ends with it. One lookup by the primary key.
 */
export const isApiTokenLive = async (db: Executor, id: string, userId: string, now: Date) =>
  (await db
    .selectFrom('apiTokens')
    .select('id')
    .where('id', '=', id)
    .where('userId', '=', userId)
    .where((eb) => eb.or([eb('expiresAt', 'is', null), eb('expiresAt', '>', now)]))
    .executeTakeFirst()) !== undefined;

/**
 * The live token's scope, its user and the user's memberships, and its use recorded (at most
 * once a minute), in one statement: a token check costs one round trip, like a session's.
 */
export const useApiToken = (db: Executor, tokenHash: string, now: Date) =>
  db
    .with('found', (q) =>
      q
        .selectFrom('apiTokens as t')
        .innerJoin('users as u', 'u.id', 't.userId')
        .select([
          't.id as tokenId',
          't.scope',
          't.lastUsedAt',
          'u.id',
          'u.email',
          'u.name',
          'u.createdAt',
          'u.emailVerifiedAt',
          'u.pendingEmail',
          'u.pendingEmailExpiresAt',
        ])
        .where('t.tokenHash', '=', tokenHash)
        .where((eb) => eb.or([eb('t.expiresAt', 'is', null), eb('t.expiresAt', '>', now)])),
    )
    .with('touched', (q) =>
      q
        .updateTable('apiTokens')
        .set({ lastUsedAt: now })
        .where('id', 'in', (eb) => eb.selectFrom('found').select('found.tokenId'))
        .where((eb) =>
          eb.or([
            eb('lastUsedAt', 'is', null),
            eb('lastUsedAt', '<', new Date(now.getTime() - LAST_USED_PRECISION_MS)),
          ]),
        )
        .returning('id'),
    )
    .selectFrom('found')
    .selectAll('found')
    .select((eb) => membershipsOf(eb.ref('found.id')).as('memberships'))
    .executeTakeFirst();
