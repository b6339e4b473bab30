import type { Role } from '@svc/contract';
import { type Expression, expressionBuilder, sql } from 'kysely';
import type { Executor } from '../db/database.js';
import type { AccountRow, DB, UserRow } from '../db/schema.js';

// Queries only: every function takes the executor first and opens no transaction.

export const findUserByEmail = (db: Executor, email: string) =>
  db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();

export const findUserById = (db: Executor, id: string) =>
  db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();

export const insertUser = (
  db: Executor,
  user: Pick<UserRow, 'id' | 'email' | 'name' | 'passwordHash' | 'emailVerifiedAt'> & {
    createdAt: Date;
  },
) =>
  db
    .insertInto('users')
    .values({ ...user, updatedAt: user.createdAt })
    .returningAll()
    .executeTakeFirstOrThrow();

/** Inserts unless the slug is taken; `undefined` means taken. */
export const insertAccount = (
  db: Executor,
  account: Pick<AccountRow, 'id' | 'slug' | 'kind' | 'name'> & { createdAt: Date },
) =>
  db
    .insertInto('accounts')
    .values({ ...account, updatedAt: account.createdAt })
    .onConflict((oc) => oc.column('slug').doNothing())
    .returningAll()
    .executeTakeFirst();

export const slugsStartingWith = async (db: Executor, prefix: string) =>
  (
    await db
      .selectFrom('accounts')
      .select('slug')
      .where('slug', 'like', `${prefix.replace(/[%_\\]/g, '\\$&')}%`)
      .execute()
  ).map((row) => row.slug);

export const findAccountById = (db: Executor, id: string) =>
  db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();

/** Inserts unless already a member; `undefined` means already a member. */
export const insertMember = (
  db: Executor,
  member: { accountId: string; userId: string; role: Role; createdAt: Date },
) =>
  db
    .insertInto('accountMembers')
    .values(member)
    .onConflict((oc) => oc.columns(['accountId', 'userId']).doNothing())
    .returningAll()
    .executeTakeFirst();

export const findRole = async (db: Executor, accountId: string, userId: string) =>
  (
    await db
      .selectFrom('accountMembers')
      .select('role')
      .where('accountId', '=', accountId)
      .where('userId', '=', userId)
      .executeTakeFirst()
  )?.role;

/** One of `membershipsOf`'s elements. */
export type MembershipJson = Pick<
  AccountRow,
  'id' | 'slug' | 'name' | 'kind' | 'subscriptionActive' | 'subscriptionStatus'
> & {
  role: Role;
};

/**
 * The accounts a user belongs to, personal first, then by creation: a JSON array, for the
 * statement that checks a session or token, so a request needs no second round trip for them.
 * One `json_agg` over the join (no derived table): the cheapest form to plan on PGlite.
 */
export const membershipsOf = (userId: Expression<string>) =>
  expressionBuilder<DB, never>()
    .selectFrom('accountMembers as m')
    .innerJoin('accounts as a', 'a.id', 'm.accountId')
    .select(
      sql<MembershipJson[]>`coalesce(json_agg(json_build_object(
        'id', a.id, 'slug', a.slug, 'name', a.name, 'kind', a.kind,
        'subscriptionActive', a.subscription_active,
        'subscriptionStatus', a.subscription_status, 'role', m.role
      ) order by a.kind = 'personal' desc, a.created_at, a.id), '[]')`.as('memberships'),
    )
    .where('m.userId', '=', userId);

export const listMembers = (db: Executor, accountId: string) =>
  db
    .selectFrom('accountMembers as m')
    .innerJoin('users as u', 'u.id', 'm.userId')
    .select(['u.id as userId', 'u.email', 'u.name', 'm.role', 'm.createdAt'])
    .where('m.accountId', '=', accountId)
    .orderBy('m.createdAt')
    .orderBy('u.email')
    .execute();

export const deleteMember = (db: Executor, accountId: string, userId: string) =>
  db
    .deleteFrom('accountMembers')
    .where('accountId', '=', accountId)
    .where('userId', '=', userId)
    .executeTakeFirst();

export const setRole = (db: Executor, accountId: string, userId: string, role: Role) =>
  db
    .updateTable('accountMembers')
    .set({ role })
    .where('accountId', '=', accountId)
    .where('userId', '=', userId)
    .returningAll()
    .executeTakeFirst();

/** Locks the account's owner rows so two concurrent removals cannot both pass the last-owner check. */
export const lockOwners = async (db: Executor, accountId: string) =>
  (
    await db
      .selectFrom('accountMembers')
      .select('userId')
      .where('accountId', '=', accountId)
      .where('role', '=', 'owner')
      .forUpdate()
      .execute()
  ).map((row) => row.userId);

export const findAccountBySlug = (db: Executor, slug: string) =>
  db.selectFrom('accounts').selectAll().where('slug', '=', slug).executeTakeFirst();

export const findPersonalAccountId = async (db: Executor, userId: string) =>
  (
    await db
      .selectFrom('accountMembers as m')
      .innerJoin('accounts as a', 'a.id', 'm.accountId')
      .select('a.id')
      .where('m.userId', '=', userId)
      .where('a.kind', '=', 'personal')
      .executeTakeFirst()
  )?.id;

export const listAccountIds = async (db: Executor, userId: string) =>
  (
    await db.selectFrom('accountMembers').select('accountId').where('userId', '=', userId).execute()
  ).map((row) => row.accountId);

export const setPasswordHash = (db: Executor, userId: string, passwordHash: string) =>
  db.updateTable('users').set({ passwordHash }).where('id', '=', userId).execute();

export const setUserName = (db: Executor, userId: string, name: string) =>
  db
    .updateTable('users')
    .set({ name })
    .where('id', '=', userId)
    .returningAll()
    .executeTakeFirstOrThrow();

export const setEmailVerified = (db: Executor, userId: string, at: Date) =>
  db
    .updateTable('users')
    .set({ emailVerifiedAt: at })
    .where('id', '=', userId)
    .returningAll()
    .executeTakeFirstOrThrow();

/** Records a requested new address (replacing one that waited), or clears it (`null`s). */
export const setPendingEmail = (
  db: Executor,
  userId: string,
  pending: Pick<UserRow, 'pendingEmail' | 'pendingEmailTokenHash' | 'pendingEmailExpiresAt'>,
) => db.updateTable('users').set(pending).where('id', '=', userId).execute();

const NO_PENDING_EMAIL = {
  pendingEmail: null,
  pendingEmailTokenHash: null,
  pendingEmailExpiresAt: null,
} as const;

/**
 * The user whose pending address the link with this hash confirms, before it expires; the row
 * stays locked till commit, so two clicks at once apply it once.
 */
export const lockUserByPendingEmailToken = (db: Executor, tokenHash: string, now: Date) =>
  db
    .selectFrom('users')
    .selectAll()
    .where('pendingEmailTokenHash', '=', tokenHash)
    .where('pendingEmailExpiresAt', '>', now)
    .forUpdate()
    .executeTakeFirst();

/** The pending address becomes the user's, verified (its link was opened). */
export const applyPendingEmail = (db: Executor, userId: string, email: string, now: Date) =>
  db
    .updateTable('users')
    .set({ ...NO_PENDING_EMAIL, email, emailVerifiedAt: now })
    .where('id', '=', userId)
    .returningAll()
    .executeTakeFirstOrThrow();

/**
 * The account taken back from the previous address's link: that address again (verified: the
 * link reached it), no pending change, a new password.
 */
export const restoreEmail = (
  db: Executor,
  userId: string,
  change: { email: string; passwordHash: string; now: Date },
) =>
  db
    .updateTable('users')
    .set({
      ...NO_PENDING_EMAIL,
      email: change.email,
      emailVerifiedAt: change.now,
      passwordHash: change.passwordHash,
    })
    .where('id', '=', userId)
    .returningAll()
    .executeTakeFirstOrThrow();

/** The user's personal account's id, its row locked till commit (deletion holds it). */
export const lockPersonalAccount = async (db: Executor, userId: string) =>
  (
    await db
      .selectFrom('accounts as a')
      .innerJoin('accountMembers as m', 'm.accountId', 'a.id')
      .select('a.id')
      .where('m.userId', '=', userId)
      .where('a.kind', '=', 'personal')
      .forUpdate('a')
      .executeTakeFirst()
  )?.id;

/**
 * Organizations the user is the only owner of (they cannot be left without one). Every owner
 * row of the organizations the user owns is locked till commit first, as `lockOwners` does.
 */
export const soleOwnedOrganizations = async (db: Executor, userId: string) => {
  await db
    .selectFrom('accountMembers')
    .select('userId')
    .where('role', '=', 'owner')
    .where('accountId', 'in', (eb) =>
      eb
        .selectFrom('accountMembers')
        .select('accountId')
        .where('userId', '=', userId)
        .where('role', '=', 'owner'),
    )
    .forUpdate()
    .execute();
  return db
    .selectFrom('accountMembers as m')
    .innerJoin('accounts as a', 'a.id', 'm.accountId')
    .select(['a.id', 'a.name'])
    .where('m.userId', '=', userId)
    .where('m.role', '=', 'owner')
    .where('a.kind', '=', 'organization')
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('accountMembers as o')
            .select('o.userId')
            .whereRef('o.accountId', '=', 'm.accountId')
            .where('o.role', '=', 'owner')
            .where('o.userId', '!=', userId),
        ),
      ),
    )
    .execute();
};

/** What an account still holds that deleting it would lose: machines, connections, bundles. */
export const accountHoldings = async (db: Executor, accountId: string) => {
  const count = (table: 'agents' | 'plainVms' | 'appConnections' | 'bundles') =>
    db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('accountId', '=', accountId);
  const row = await db
    .selectNoFrom(() => [
      count('agents').as('agents'),
      count('plainVms').as('plainVms'),
      count('appConnections').as('appConnections'),
      count('bundles').as('bundles'),
    ])
    .executeTakeFirstOrThrow();
  return {
    agents: Number(row.agents),
    plainVms: Number(row.plainVms),
    appConnections: Number(row.appConnections),
    bundles: Number(row.bundles),
  };
};

/**
 * Deletes a personal account that holds nothing `accountHoldings` counts, then its user: Vault
 * keys and subscription slots go with it; members, sessions, links, tokens and pending
 * authorizations by cascade. Usage periods and audit events stay, as the operator's record.
 */
export async function deleteUserAndPersonalAccount(
  db: Executor,
  userId: string,
  accountId: string,
) {
  await db.deleteFrom('vaultEntries').where('accountId', '=', accountId).execute();
  await db.deleteFrom('subscriptionSlots').where('accountId', '=', accountId).execute();
  await db.deleteFrom('appConnectionTombstones').where('accountId', '=', accountId).execute();
  // Stagings go with their Agent, but one transferred away leaves its stagings here.
  await db.deleteFrom('bundleStagings').where('accountId', '=', accountId).execute();
  await db.deleteFrom('accounts').where('id', '=', accountId).execute();
  await db.deleteFrom('users').where('id', '=', userId).execute();
}
