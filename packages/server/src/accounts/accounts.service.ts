import { randomUUID } from 'node:crypto';
import type {
  AccountMembership,
  EmailVerificationMode,
  Member,
  PendingEmailChange,
  Role,
  User,
} from '@svc/contract';
import type { Clock } from '../adapters/clock.js';
import type { Database, Executor } from '../db/database.js';
import type { AccountRow } from '../db/schema.js';
import { AppError } from '../errors.js';
import type { MailService } from '../mail/mail.service.js';
import { accountAuditor } from './account-audit.js';
import { pendingEmailChangeOf, toMember, toMembership, toUser } from './account-views.js';
import * as repo from './accounts.repo.js';
import type { EmailLinksService } from './email-links.service.js';
import { type Actor, MANAGERS, type Membership } from './membership.js';
import { ARGON2_DEFAULTS, type Argon2Cost, hashPassword } from './passwords.js';
import { takeAttempt } from './rate-limits.repo.js';
import { notCurrentPassword, type SessionsService } from './sessions.service.js';
import { mailCounters, signUpCounter } from './sign-in-limits.js';
import { firstFreeSlug, personalSlugBase } from './slugs.js';

export interface AccountsDeps {
  readonly database: Database;
  readonly clock: Clock;
  readonly membership: Membership;
  readonly sessions: SessionsService;
  readonly emailLinks: EmailLinksService;
  /** @NOTE unused since the e-mail change mails through `emailLinks`; `composeService` passes it. */
  readonly mail: MailService;
  /** `EMAIL_VERIFICATION`: whether machines and publishing wait for a verified address. */
  readonly emailVerification: EmailVerificationMode;
  readonly passwordCost?: Argon2Cost;
  /**
   * In the transaction that deletes an account: billing ends what the payment processor still
   * holds for it (a live subscription would go on charging).
   */
  readonly accountDeleted: (tx: Executor, accountId: string) => Promise<void>;
}

/** Users, organizations and their members (subscriptions: billing/subscription.service.ts). */
export function createAccountsService({
  database,
  clock,
  membership,
  sessions,
  emailLinks,
  emailVerification,
  passwordCost = ARGON2_DEFAULTS,
  accountDeleted,
}: AccountsDeps) {
  const { db } = database;
  const { requireOrganization } = membership;

  /** Refuses to take away the account's only owner (the owner rows stay locked till commit). */
  async function keepAnOwner(tx: Executor, accountId: string) {
    const owners = await repo.lockOwners(tx, accountId);
    if (owners.length <= 1) throw new AppError('last_owner');
  }

  /** An audit event of a change to the account's members or subscription. */
  const audit = accountAuditor(clock);

  /** The user, their personal account and their owner membership, in the caller's transaction. */
  async function insertUserWithAccount(
    tx: Executor,
    input: { email: string; name: string },
    passwordHash: string,
    emailVerifiedAt: Date | null,
  ) {
    if (await repo.findUserByEmail(tx, input.email)) throw new AppError('email_taken');
    const now = clock.now();
    const user = await repo
      .insertUser(tx, {
        id: randomUUID(),
        email: input.email,
        name: input.name,
        passwordHash,
        emailVerifiedAt,
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
        const created = await insertUserWithAccount(tx, input, passwordHash, null);
        await emailLinks.sendVerification(tx, created.user);
        return { ...created, session: await sessions.open(tx, created.user.id, input) };
      });
    },

    /** Sign-up without a session, for the operator, who vouches for the address. */
    async createUser(input: { email: string; password: string; name: string }) {
      const passwordHash = await hashPassword(input.password, passwordCost);
      return database.transaction((tx) =>
        insertUserWithAccount(tx, input, passwordHash, clock.now()),
      );
    },

    /**
     * Refuses what an unverified user may not do while `EMAIL_VERIFICATION=required`: creating
     * machines and publishing (403 `email_unverified`; the dashboard offers to send the link
     * again).
     */
    requireVerifiedEmail(user: User) {
      if (emailVerification === 'required' && !user.emailVerified) {
        throw new AppError('email_unverified', {
          message: `Verify your e-mail address first: open the link sent to ${user.email}, or ask for a new one`,
        });
      }
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

    /** The signed-in user's view of themselves, from what their session check read. */
    getMe(
      user: User,
      memberships: AccountMembership[],
      pendingEmailChange: PendingEmailChange | null,
    ) {
      return { user, accounts: memberships, emailVerification, pendingEmailChange };
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

    /**
     * The operator adds an existing user at once (`admin add-member`); users add members only by
     * invitation (`invitations.service.ts`), which the person accepts.
     */
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

    /**
     * A new name, and/or a request to change the e-mail address: that needs the current password
     * (a wrong one is 403 and counts as a failed sign-in) and takes effect only through the link
     * mailed to the new address (`email-change.ts`). Asking for the current address again drops
     * a pending change. The answer is the same whether or not another account has the address.
     */
    async updateMe(
      user: User,
      change: {
        name?: string | undefined;
        email?: string | undefined;
        currentPassword?: string | undefined;
      },
      clientAddress: string,
    ): Promise<User & { pendingEmailChange: PendingEmailChange | null }> {
      const email = change.email;
      if (email !== undefined) {
        const confirmed = await sessions.confirmPassword(
          user,
          change.currentPassword ?? '',
          clientAddress,
        );
        if (!confirmed) throw notCurrentPassword('forbidden');
      }
      const newEmail = email !== undefined && email !== user.email ? email : undefined;
      if (newEmail !== undefined) {
        // Counted before anything is looked up, so a taken address costs what a free one does.
        const counters = mailCounters('verify', {
          email: newEmail,
          userId: user.id,
          clientAddress,
        });
        await database.transaction((tx) => takeAttempt(tx, counters, clock.now()));
      }
      return database.transaction(async (tx) => {
        if (change.name !== undefined) await repo.setUserName(tx, user.id, change.name);
        // The current address asked for again: no change waits any more.
        if (email !== undefined && newEmail === undefined) {
          await emailLinks.cancelEmailChange(tx, user.id);
        }
        const row = await repo.findUserById(tx, user.id);
        if (!row) throw new AppError('not_found');
        const current = toUser(row);
        if (newEmail !== undefined) {
          const pending = await emailLinks.requestEmailChange(tx, current, newEmail);
          return { ...current, pendingEmailChange: pending };
        }
        return { ...current, pendingEmailChange: pendingEmailChangeOf(row, clock.now()) };
      });
    },

    /**
     * Deletes the user and their personal account. Refused while an organization would be left
     * without an owner, or the personal account still has machines, app connections or bundles
     * (each has its own way out, which revokes, stops billing or unpublishes properly).
     */
    async deleteMe(user: User): Promise<void> {
      await database.transaction(async (tx) => {
        const personal = await repo.lockPersonalAccount(tx, user.id);
        if (!personal) throw new AppError('not_found');
        // The owner rows stay locked till commit, so two owners leaving at once cannot both pass.
        const orgs = await repo.soleOwnedOrganizations(tx, user.id);
        if (orgs.length > 0) {
          throw new AppError('invalid_state', {
            message: `You are the only owner of ${orgs.map((o) => o.name).join(', ')}: make another member an owner first`,
          });
        }
        const held = await repo.accountHoldings(tx, personal);
        const left = [
          held.agents && `${held.agents} Agent(s)`,
          held.plainVms && `${held.plainVms} Plain VM(s)`,
          held.appConnections && `${held.appConnections} app connection(s)`,
          held.bundles && `${held.bundles} bundle(s)`,
        ].filter(Boolean);
        if (left.length > 0) {
          throw new AppError('invalid_state', {
            message: `Your account still has ${left.join(', ')}: destroy, disconnect or delete them first`,
          });
        }
        await repo
          .deleteUserAndPersonalAccount(tx, user.id, personal)
          .catch(
            rethrowForeignKey(
              'Your account gained something while it was being deleted: try again',
            ),
          );
        await accountDeleted(tx, personal);
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
  };
}

export type AccountsService = ReturnType<typeof createAccountsService>;

/** Maps a foreign-key violation (SQLSTATE 23503: a row added meanwhile) to `invalid_state`. */
function rethrowForeignKey(message: string) {
  return (error: unknown): never => {
    if ((error as { code?: string }).code === '23503') {
      throw new AppError('invalid_state', { message, cause: error });
    }
    throw error;
  };
}

/** Maps a unique-constraint violation (SQLSTATE 23505) to a contract error. */
function rethrowUnique(code: 'email_taken' | 'slug_taken') {
  return (error: unknown): never => {
    if ((error as { code?: string }).code === '23505') throw new AppError(code, { cause: error });
    throw error;
  };
}
