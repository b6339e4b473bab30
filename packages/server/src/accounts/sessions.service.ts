import { randomUUID } from 'node:crypto';
import type { Revoked, Session, User } from '@svc/contract';
import type { Clock } from '../adapters/clock.js';
import type { Database, Executor } from '../db/database.js';
import { AppError } from '../errors.js';
import type { Metrics } from '../metrics/metrics.js';
import { type Principal, pendingEmailChangeOf, toMemberships, toUser } from './account-views.js';
import * as repo from './accounts.repo.js';
import { deleteUserApiTokens } from './api-tokens.repo.js';
import { ARGON2_DEFAULTS, type Argon2Cost, hashPassword, verifyPassword } from './passwords.js';
import { forgetAttempts, refundAttempt, takeAttempt } from './rate-limits.repo.js';
import { hashSessionId, newSessionId, SESSION_TTL_MS } from './sessions.js';
import * as sessionsRepo from './sessions.repo.js';
import { signInCounters } from './sign-in-limits.js';

/** Where a session began: shown on the settings page so a user recognizes their browsers. */
export interface SessionOrigin {
  readonly userAgent?: string | undefined;
  readonly clientAddress: string;
}

const MAX_USER_AGENT = 300;
/** How stale a session's `lastSeenAt` may get before a request writes it again. */
const LAST_SEEN_PRECISION_MS = 5 * 60_000;

/**
 * When a session check at `now` writes (`useSession`): `lastSeenAt` only now and then, not on
 * every request, and the expiry once past half the session's life.
 */
export const sessionUseTimes = (now: Date) => ({
  now,
  seenBefore: new Date(now.getTime() - LAST_SEEN_PRECISION_MS),
  extendBefore: new Date(now.getTime() + SESSION_TTL_MS / 2),
  extendTo: new Date(now.getTime() + SESSION_TTL_MS),
});

export interface SessionsDeps {
  readonly database: Database;
  readonly clock: Clock;
  readonly passwordCost?: Argon2Cost;
  readonly metrics: Pick<Metrics, 'signInFailed'>;
}

/** Signing in and out, and the session cookie → user lookup every authenticated request makes. */
export function createSessionsService({
  database,
  clock,
  passwordCost = ARGON2_DEFAULTS,
  metrics,
}: SessionsDeps) {
  const { db } = database;
  // Unknown e-mail addresses are checked against this, so both failures take the same time.
  const dummyHash = hashPassword(randomUUID(), passwordCost);

  /** A new session for the user, in the caller's transaction; the id is returned once. */
  async function open(tx: Executor, userId: string, from: SessionOrigin) {
    const sessionId = newSessionId();
    const now = clock.now();
    const expiresAt = new Date(now.getTime() + SESSION_TTL_MS);
    await sessionsRepo.insertSession(tx, {
      idHash: hashSessionId(sessionId),
      userId,
      createdAt: now,
      expiresAt,
      userAgent: from.userAgent?.slice(0, MAX_USER_AGENT) ?? null,
      clientAddress: from.clientAddress,
    });
    return { sessionId, expiresAt };
  }

  /**
   * Whether `password` is the signed-in user's, counted like a sign-in of their address from
   * `clientAddress` (a wrong one is a failed sign-in: it slows both counters down and shows in
   * the metrics; a right one ends the account's streak). Throws `rate_limited` while they wait.
   */
  async function confirmPassword(user: User, password: string, clientAddress: string) {
    const counters = signInCounters(user.email, clientAddress);
    await database.transaction((tx) =>
      takeAttempt(tx, [counters.accountAddress, counters.address], clock.now()),
    );
    const row = await repo.findUserById(db, user.id);
    if (!row || !(await verifyPassword(password, row.passwordHash))) {
      metrics.signInFailed('invalid_credentials');
      return undefined;
    }
    await forgetAttempts(db, counters.accountAddress.key);
    await refundAttempt(db, counters.address.key);
    return row;
  }

  return {
    open,
    confirmPassword,

    /**
     * Ends every session of the user and revokes every personal access token, in the caller's
     * transaction (the account is being taken back); how many of each.
     */
    revokeAll: async (tx: Executor, userId: string): Promise<Revoked> => ({
      revokedSessions: Number((await sessionsRepo.deleteUserSessions(tx, userId)).numDeletedRows),
      revokedTokens: await deleteUserApiTokens(tx, userId),
    }),

    async signIn(input: {
      email: string;
      password: string;
      clientAddress: string;
      userAgent?: string | undefined;
    }) {
      // Charged before the password is checked, so a parallel burst cannot slip past a wait.
      const counters = signInCounters(input.email, input.clientAddress);
      await database
        .transaction((tx) =>
          takeAttempt(tx, [counters.accountAddress, counters.address], clock.now()),
        )
        .catch((error: unknown) => {
          if (error instanceof AppError && error.code === 'rate_limited') {
            metrics.signInFailed('rate_limited');
          }
          throw error;
        });
      const user = await repo.findUserByEmail(db, input.email);
      const ok = await verifyPassword(input.password, user?.passwordHash ?? (await dummyHash));
      if (!user || !ok) {
        metrics.signInFailed('invalid_credentials');
        throw new AppError('invalid_credentials');
      }
      // Only failures slow an address down; the account's streak from here is over.
      await forgetAttempts(db, counters.accountAddress.key);
      await refundAttempt(db, counters.address.key);
      const session = await database.transaction((tx) => open(tx, user.id, input));
      return { user: toUser(user), session };
    },

    async signOut(sessionId: string) {
      await sessionsRepo.deleteSession(db, hashSessionId(sessionId));
    },

    /**
     * The user behind a session cookie, their memberships and the session's id (the settings
     * page's, `recordId`), or `undefined`. One statement, which also records the use now and
     * then and extends sessions past half their life.
     */
    async authenticate(sessionId: string): Promise<(Principal & { recordId: string }) | undefined> {
      const row = await sessionsRepo.useSession(
        db,
        hashSessionId(sessionId),
        sessionUseTimes(clock.now()),
      );
      return (
        row && {
          user: toUser(row),
          memberships: toMemberships(row.memberships),
          pendingEmailChange: pendingEmailChangeOf(row, clock.now()),
          recordId: row.recordId,
        }
      );
    },

    /** The user's live sessions, the one of `currentSessionId` marked. */
    async list(userId: string, currentSessionId: string | undefined): Promise<Session[]> {
      const current = currentSessionId && hashSessionId(currentSessionId);
      const rows = await sessionsRepo.listUserSessions(db, userId, clock.now());
      return rows.map((row) => ({
        id: row.id,
        current: row.idHash === current,
        userAgent: row.userAgent,
        clientAddress: row.clientAddress,
        createdAt: row.createdAt.toISOString(),
        lastSeenAt: row.lastSeenAt?.toISOString() ?? null,
        expiresAt: row.expiresAt.toISOString(),
      }));
    },

    async end(userId: string, id: string): Promise<void> {
      if (!(await sessionsRepo.deleteUserSession(db, userId, id))) throw new AppError('not_found');
    },

    /**
     * A new password, given the current one (guesses count as failed sign-ins of the account
     * from this address); every other session of the user ends and every personal access token
     * is revoked: whoever held the old password may have made either.
     */
    async changePassword(input: {
      user: User;
      currentPassword: string;
      newPassword: string;
      currentSessionId: string;
      clientAddress: string;
    }): Promise<Revoked> {
      const row = await confirmPassword(input.user, input.currentPassword, input.clientAddress);
      if (!row) throw notCurrentPassword('invalid_request');
      const passwordHash = await hashPassword(input.newPassword, passwordCost);
      return database.transaction(async (tx) => {
        await repo.setPasswordHash(tx, row.id, passwordHash);
        const sessions = await sessionsRepo.deleteOtherSessions(
          tx,
          row.id,
          hashSessionId(input.currentSessionId),
        );
        return {
          revokedSessions: Number(sessions.numDeletedRows),
          revokedTokens: await deleteUserApiTokens(tx, row.id),
        };
      });
    },
  };
}

export type SessionsService = ReturnType<typeof createSessionsService>;

/** A wrong `currentPassword`, as the endpoint that asked for it answers it. */
export const notCurrentPassword = (code: 'invalid_request' | 'forbidden') =>
  new AppError(code, {
    message: 'That is not your current password',
    issues: [
      { path: ['body', 'currentPassword'], message: 'Not your current password', code: 'custom' },
    ],
  });
