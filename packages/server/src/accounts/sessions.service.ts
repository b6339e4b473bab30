import { randomUUID } from 'node:crypto';
import type { User } from '@svc/contract';
import type { Clock } from '../adapters/clock.js';
import type { Database, Executor } from '../db/database.js';
import { AppError } from '../errors.js';
import { toUser } from './account-views.js';
import * as repo from './accounts.repo.js';
import { ARGON2_DEFAULTS, type Argon2Cost, hashPassword, verifyPassword } from './passwords.js';
import { forgetAttempts, refundAttempt, takeAttempt } from './rate-limits.repo.js';
import { hashSessionId, newSessionId, SESSION_TTL_MS } from './sessions.js';
import * as sessionsRepo from './sessions.repo.js';
import { signInCounters } from './sign-in-limits.js';

export interface SessionsDeps {
  readonly database: Database;
  readonly clock: Clock;
  readonly passwordCost?: Argon2Cost;
}

/** Signing in and out, and the session cookie → user lookup every authenticated request makes. */
export function createSessionsService({
  database,
  clock,
  passwordCost = ARGON2_DEFAULTS,
}: SessionsDeps) {
  const { db } = database;
  // Unknown e-mail addresses are checked against this, so both failures take the same time.
  const dummyHash = hashPassword(randomUUID(), passwordCost);

  /** A new session for the user, in the caller's transaction; the id is returned once. */
  async function open(tx: Executor, userId: string) {
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

  return {
    open,

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
      const session = await database.transaction((tx) => open(tx, user.id));
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
  };
}

export type SessionsService = ReturnType<typeof createSessionsService>;
