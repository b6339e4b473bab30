import { randomUUID } from 'node:crypto';
import type { Member, Role, User } from '@svc/contract';
import type { Clock } from '../adapters/clock.js';
import { recordAuditEvent } from '../audit/audit.js';
import type { Database, Executor } from '../db/database.js';
import type { AccountRow } from '../db/schema.js';
import { AppError } from '../errors.js';
import { toMember, toMembership, toUser } from './account-views.js';
import * as repo from './accounts.repo.js';
import { type Actor, MANAGERS, type Membership } from './membership.js';
import { ARGON2_DEFAULTS, type Argon2Cost, hashPassword } from './passwords.js';
import { takeAttempt } from './rate-limits.repo.js';
import type { SessionsService } from './sessions.service.js';
import { signUpCounter } from './sign-in-limits.js';
import { firstFreeSlug, personalSlugBase } from './slugs.js';

export interface AccountsDeps {
  readonly database: Database;
  readonly clock: Clock;
  readonly membership: Membership;
  readonly sessions: SessionsService;
  readonly passwordCost?: Argon2Cost;
}

/** Users, organizations and their members, subscriptions. */
export function createAccountsService({
  database,
  clock,
  membership,
  sessions,
  passwordCost = ARGON2_DEFAULTS,
}: AccountsDeps) {
  const { db } = database;
  const { requireMember } = membership;

  async function requireOrganization(
    executor: Executor,
    actor: Actor,
    accountId: string,
    roles?: readonly Role[],
  ) {
    const found = await requireMember(executor, actor, accountId, roles);
    if (found.account.kind !== 'organization') throw new AppError('not_found');
    return found;
  }

  /** Refuses to take away the account's only owner (the owner rows stay locked till commit). */
  async function keepAnOwner(tx: Executor, accountId: string) {
    const owners = await repo.lockOwners(tx, accountId);
    if (owners.length <= 1) throw new AppError('last_owner');
  }

  /** An audit event of a change to the account's members or subscription. */
  const audit = (
    tx: Executor,
    actor: Actor,
    accountId: string,
    action: string,
    resourceId: string,
    data: Record<string, unknown>,
  ) =>
    recordAuditEvent(
      tx,
      {
        accountId,
        actorUserId: actor === 'operator' ? null : actor.userId,
        action,
        resourceKind: action.split('.')[0] as string,
        resourceId,
        data,
      },
      clock.now(),
    );

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
    async signUp(input: {
      email: string;
      password: string;
      name: string;
      clientAddress: string;
      userAgent?: string | undefined;
    }) {
      await database.transaction((tx) =>
        takeAttempt(tx, [signUpCounter(input.clientAddress)], clock.now()),
      );
      // Refuse a taken address before spending a hash on it (checked again in the transaction).
      if (await repo.findUserByEmail(db, input.email)) throw new AppError('email_taken');
      const passwordHash = await hashPassword(input.password, passwordCost);
      return database.transaction(async (tx) => {
        const created = await insertUserWithAccount(tx, input, passwordHash);
        return { ...created, session: await sessions.open(tx, created.user.id, input) };
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
        await audit(tx, actor, input.accountId, 'member.add', user.id, { role: input.role });
        return toMember({ ...member, email: user.email, name: user.name });
      });
    },

    async setName(userId: string, name: string): Promise<User> {
      return toUser(await repo.setUserName(db, userId, name));
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
        if (targetRole === 'owner') await keepAnOwner(tx, input.accountId);
        await repo.deleteMember(tx, input.accountId, input.userId);
        await audit(tx, actor, input.accountId, 'member.remove', input.userId, {
          role: targetRole,
        });
      });
    },

    /**
     * Owners change any role; admins change members and admins, never to or from `owner`. The
     * last owner keeps the role.
     */
    async changeMemberRole(
      actor: Actor,
      input: { accountId: string; userId: string; role: Role },
    ): Promise<Member> {
      return database.transaction(async (tx) => {
        const { role: actorRole } = await requireOrganization(tx, actor, input.accountId, MANAGERS);
        const targetRole = await repo.findRole(tx, input.accountId, input.userId);
        if (!targetRole) throw new AppError('not_found');
        const touchesOwner = targetRole === 'owner' || input.role === 'owner';
        if (touchesOwner && actorRole !== 'owner') throw new AppError('forbidden');
        if (targetRole === 'owner' && input.role !== 'owner')
          await keepAnOwner(tx, input.accountId);
        const member = await repo.setRole(tx, input.accountId, input.userId, input.role);
        const user = await repo.findUserById(tx, input.userId);
        if (!member || !user) throw new AppError('not_found');
        if (targetRole !== input.role) {
          await audit(tx, actor, input.accountId, 'member.role', input.userId, {
            from: targetRole,
            to: input.role,
          });
        }
        return toMember({ ...member, email: user.email, name: user.name });
      });
    },

    async setSubscription(actor: Actor, accountId: string, active: boolean) {
      return database.transaction(async (tx) => {
        await requireMember(tx, actor, accountId, MANAGERS);
        const row = await repo.setSubscriptionActive(tx, accountId, active, clock.now());
        await audit(tx, actor, accountId, 'account.subscription', accountId, { active });
        return { accountId: row.id, subscriptionActive: row.subscriptionActive };
      });
    },
  };
}

export type AccountsService = ReturnType<typeof createAccountsService>;

/** Maps a unique-constraint violation (SQLSTATE 23505) to a contract error. */
function rethrowUnique(code: 'email_taken' | 'slug_taken') {
  return (error: unknown): never => {
    if ((error as { code?: string }).code === '23505') throw new AppError(code, { cause: error });
    throw error;
  };
}
