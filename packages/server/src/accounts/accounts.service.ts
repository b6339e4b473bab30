import { randomUUID } from 'node:crypto';
import type { AccountMembership, Member, Role, User } from '@svc/contract';
import type { Clock } from '../adapters/clock.js';
import type { Database, Executor } from '../db/database.js';
import type { AccountRow, UserRow } from '../db/schema.js';
import { AppError } from '../errors.js';
import * as repo from './accounts.repo.js';
import { ARGON2_DEFAULTS, type Argon2Cost, hashPassword, verifyPassword } from './passwords.js';
import { forgetAttempts, refundAttempt, takeAttempt } from './rate-limits.repo.js';
import { hashSessionId, newSessionId, SESSION_TTL_MS } from './sessions.js';
import * as sessionsRepo from './sessions.repo.js';
import { signInCounters, signUpCounter } from './sign-in-limits.js';
import { firstFreeSlug, personalSlugBase } from './slugs.js';

/** Who acts: a signed-in user, or the operator through the admin CLI (no membership checks). */
export type Actor = { readonly userId: string } | 'operator';

export interface AccountsDeps {
  readonly database: Database;
  readonly clock: Clock;
  readonly passwordCost?: Argon2Cost;
}

const MANAGERS: readonly Role[] = ['owner', 'admin'];

export function createAccountsService({
  database,
  clock,
  passwordCost = ARGON2_DEFAULTS,
}: AccountsDeps) {
  const { db } = database;
  // Unknown e-mail addresses are checked against this, so both failures take the same time.
  const dummyHash = hashPassword(randomUUID(), passwordCost);

  async function newSession(tx: Executor, userId: string) {
    const sessionId = newSessionId();
    const now = clock.now();
    const expiresAt = new Date(now.getTime() + SESSION_TTL_MS);
    await sessionsRepo.insertSession(tx, {
      idHash: hashSessionId(sessionId),
      userId,
      createdAt: now,
      expiresAt,
    });
    return { sessionId, expiresAt };
  }

  /**
   * The caller's role in the account. Not a member (or no such account) is `not_found`, so other
   * accounts' ids reveal nothing; a member without one of `roles` is `forbidden`.
   */
  async function requireMember(
    executor: Executor,
    actor: Actor,
    accountId: string,
    roles?: readonly Role[],
  ): Promise<{ account: AccountRow; role: Role }> {
    const account = await repo.findAccountById(executor, accountId);
    if (!account) throw new AppError('not_found');
    if (actor === 'operator') return { account, role: 'owner' };
    const role = await repo.findRole(executor, accountId, actor.userId);
    if (!role) throw new AppError('not_found');
    if (roles && !roles.includes(role)) throw new AppError('forbidden');
    return { account, role };
  }

  async function requireOrganization(
    executor: Executor,
    actor: Actor,
    accountId: string,
    roles?: readonly Role[],
  ) {
    const membership = await requireMember(executor, actor, accountId, roles);
    if (membership.account.kind !== 'organization') throw new AppError('not_found');
    return membership;
  }

  /** The user, their personal account and their owner membership, in the caller's transaction. */
  async function insertUserWithAccount(
    tx: Executor,
    input: { email: string; name: string },
    passwordHash: string,
  ) {
    if (await repo.findUserByEmail(tx, input.email)) throw new AppError('email_taken');
    const now = clock.now();
    const user = await repo
      .insertUser(tx, {
        id: randomUUID(),
        email: input.email,
        name: input.name,
        passwordHash,
        createdAt: now,
      })
      .catch(rethrowUnique('email_taken'));
    const base = personalSlugBase(input.email);
    const taken = new Set(await repo.slugsStartingWith(tx, base));
    let account: AccountRow | undefined;
    // A concurrent sign-up may take the chosen slug first: move on to the next candidate.
    while (!account) {
      const slug = firstFreeSlug(base, taken);
      account = await repo.insertAccount(tx, {
        id: randomUUID(),
        slug,
        kind: 'personal',
        name: input.name,
        createdAt: now,
      });
      taken.add(slug);
    }
    await repo.insertMember(tx, {
      accountId: account.id,
      userId: user.id,
      role: 'owner',
      createdAt: now,
    });
    return { user: toUser(user), account: toMembership(account, 'owner') };
  }

  return {
    requireMember,

    /**
     * `owner` or `admin` of the account (a plain member → `forbidden`). Besides billing and
     * members, they alone may take a machine out of the account (transfer, clone elsewhere):
     * members create and operate machines, but what leaves takes the account's data with it.
     */
    requireManager: (executor: Executor, actor: Actor, accountId: string) =>
      requireMember(executor, actor, accountId, MANAGERS),

    /**
     * The account a creation acts on: `accountId` when given (the caller must be a member), else
     * the caller's personal account.
     */
    async resolveTargetAccount(executor: Executor, userId: string, accountId?: string) {
      if (accountId) return (await requireMember(executor, { userId }, accountId)).account;
      const personal = await repo.findPersonalAccountId(executor, userId);
      if (!personal) throw new AppError('not_found', { message: 'user has no personal account' });
      return (await requireMember(executor, { userId }, personal)).account;
    },

    /**
     * An organization with active billing that the user belongs to, as a transfer target. Not a
     * member → 403 (decisions: transfers say so); personal account → 400
     * `target_not_organization`; inactive billing → 400 `target_billing_inactive`.
     */
    async requireTransferTarget(executor: Executor, userId: string, accountId: string) {
      const account = await repo.findAccountById(executor, accountId);
      if (!account) throw new AppError('not_found');
      if (!(await repo.findRole(executor, accountId, userId))) throw new AppError('forbidden');
      if (account.kind !== 'organization') throw new AppError('target_not_organization');
      if (!account.subscriptionActive) throw new AppError('target_billing_inactive');
      return account;
    },

    /** Ids of every account the user is a member of. */
    memberAccountIds: (executor: Executor, userId: string) => repo.listAccountIds(executor, userId),

    async signUp(input: { email: string; password: string; name: string; clientAddress: string }) {
      await database.transaction((tx) =>
        takeAttempt(tx, [signUpCounter(input.clientAddress)], clock.now()),
      );
      // Refuse a taken address before spending a hash on it (checked again in the transaction).
      if (await repo.findUserByEmail(db, input.email)) throw new AppError('email_taken');
      const passwordHash = await hashPassword(input.password, passwordCost);
      return database.transaction(async (tx) => {
        const created = await insertUserWithAccount(tx, input, passwordHash);
        return { ...created, session: await newSession(tx, created.user.id) };
      });
    },

    /** Sign-up without a session, for the operator. */
    async createUser(input: { email: string; password: string; name: string }) {
      const passwordHash = await hashPassword(input.password, passwordCost);
      return database.transaction((tx) => insertUserWithAccount(tx, input, passwordHash));
    },

    /** An account by id or slug, for the operator. */
    async findAccount(ref: string) {
      const isId = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(ref);
      const row = isId
        ? await repo.findAccountById(db, ref)
        : await repo.findAccountBySlug(db, ref);
      if (!row) throw new AppError('not_found', { message: `no account "${ref}"` });
      return row;
    },

    findUserByEmail: async (email: string) => {
      const row = await repo.findUserByEmail(db, email);
      return row && toUser(row);
    },

    async signIn(input: { email: string; password: string; clientAddress: string }) {
      // Charged before the password is checked, so a parallel burst cannot slip past a wait.
      const counters = signInCounters(input.email, input.clientAddress);
      await database.transaction((tx) =>
        takeAttempt(tx, [counters.accountAddress, counters.address], clock.now()),
      );
      const user = await repo.findUserByEmail(db, input.email);
      const ok = await verifyPassword(input.password, user?.passwordHash ?? (await dummyHash));
      if (!user || !ok) throw new AppError('invalid_credentials');
      // Only failures slow an address down; the account's streak from here is over.
      await forgetAttempts(db, counters.accountAddress.key);
      await refundAttempt(db, counters.address.key);
      const session = await database.transaction((tx) => newSession(tx, user.id));
      return { user: toUser(user), session };
    },

    async signOut(sessionId: string) {
      await sessionsRepo.deleteSession(db, hashSessionId(sessionId));
    },

    /** The user behind a session cookie, or `undefined`. Extends sessions past half their life. */
    async authenticate(sessionId: string): Promise<User | undefined> {
      const idHash = hashSessionId(sessionId);
      const now = clock.now();
      const row = await sessionsRepo.findSessionUser(db, idHash, now);
      if (!row) return undefined;
      if (row.expiresAt.getTime() - now.getTime() < SESSION_TTL_MS / 2) {
        await sessionsRepo.extendSession(db, idHash, new Date(now.getTime() + SESSION_TTL_MS));
      }
      return toUser(row);
    },

    async getMe(user: User) {
      const rows = await repo.listMemberships(db, user.id);
      return { user, accounts: rows.map((row) => toMembership(row, row.role)) };
    },

    /** A new organization owned by `ownerUserId` (the caller, or a user the operator names). */
    async createOrg(input: { name: string; slug: string; ownerUserId: string }) {
      return database.transaction(async (tx) => {
        const now = clock.now();
        const account = await repo.insertAccount(tx, {
          id: randomUUID(),
          slug: input.slug,
          kind: 'organization',
          name: input.name,
          createdAt: now,
        });
        if (!account) throw new AppError('slug_taken');
        await repo.insertMember(tx, {
          accountId: account.id,
          userId: input.ownerUserId,
          role: 'owner',
          createdAt: now,
        });
        return toMembership(account, 'owner');
      });
    },

    async listMembers(actor: Actor, accountId: string): Promise<Member[]> {
      await requireOrganization(db, actor, accountId);
      return (await repo.listMembers(db, accountId)).map(toMember);
    },

    async addMember(
      actor: Actor,
      input: { accountId: string; email: string; role: Role },
    ): Promise<Member> {
      return database.transaction(async (tx) => {
        const { role: actorRole } = await requireOrganization(tx, actor, input.accountId, MANAGERS);
        // Only owners make owners.
        if (input.role === 'owner' && actorRole !== 'owner') throw new AppError('forbidden');
        const user = await repo.findUserByEmail(tx, input.email);
        if (!user) throw new AppError('not_found', { message: 'no user with that e-mail' });
        const member = await repo.insertMember(tx, {
          accountId: input.accountId,
          userId: user.id,
          role: input.role,
          createdAt: clock.now(),
        });
        if (!member) throw new AppError('already_member');
        return toMember({ ...member, email: user.email, name: user.name });
      });
    },

    async removeMember(actor: Actor, input: { accountId: string; userId: string }) {
      await database.transaction(async (tx) => {
        const { role: actorRole } = await requireOrganization(tx, actor, input.accountId);
        const targetRole = await repo.findRole(tx, input.accountId, input.userId);
        if (!targetRole) throw new AppError('not_found');
        const leaving = actor !== 'operator' && actor.userId === input.userId;
        const mayRemove =
          leaving || actorRole === 'owner' || (actorRole === 'admin' && targetRole !== 'owner');
        if (!mayRemove) throw new AppError('forbidden');
        if (targetRole === 'owner') {
          const owners = await repo.lockOwners(tx, input.accountId);
          if (owners.length <= 1) throw new AppError('last_owner');
        }
        await repo.deleteMember(tx, input.accountId, input.userId);
      });
    },

    async setSubscription(actor: Actor, accountId: string, active: boolean) {
      return database.transaction(async (tx) => {
        await requireMember(tx, actor, accountId, MANAGERS);
        const row = await repo.setSubscriptionActive(tx, accountId, active, clock.now());
        return { accountId: row.id, subscriptionActive: row.subscriptionActive };
      });
    },
  };
}

export type AccountsService = ReturnType<typeof createAccountsService>;

export const toUser = (row: Pick<UserRow, 'id' | 'email' | 'name' | 'createdAt'>): User => ({
  id: row.id,
  email: row.email,
  name: row.name,
  createdAt: row.createdAt.toISOString(),
});

const toMembership = (
  row: Pick<AccountRow, 'id' | 'slug' | 'name' | 'kind' | 'subscriptionActive'>,
  role: Role,
): AccountMembership => ({
  id: row.id,
  slug: row.slug,
  name: row.name,
  kind: row.kind,
  role,
  subscriptionActive: row.subscriptionActive,
});

const toMember = (row: {
  userId: string;
  email: string;
  name: string;
  role: Role;
  createdAt: Date;
}): Member => ({
  userId: row.userId,
  email: row.email,
  name: row.name,
  role: row.role,
  createdAt: row.createdAt.toISOString(),
});

/** Maps a unique-constraint violation (SQLSTATE 23505) to a contract error. */
function rethrowUnique(code: 'email_taken' | 'slug_taken') {
  return (error: unknown): never => {
    if ((error as { code?: string }).code === '23505') throw new AppError(code, { cause: error });
    throw error;
  };
}
