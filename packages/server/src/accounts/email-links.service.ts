import type { User } from '@svc/contract';
import type { Clock } from '../adapters/clock.js';
import type { Database, Executor } from '../db/database.js';
import { AppError } from '../errors.js';
import type { JobQueue } from '../jobs/queue.js';
import type { MailService } from '../mail/mail.service.js';
import { toUser } from './account-views.js';
import { passwordReset } from './accounts.jobs.js';
import * as repo from './accounts.repo.js';
import { createEmailChange } from './email-change.js';
import * as links from './email-links.repo.js';
import { ARGON2_DEFAULTS, type Argon2Cost, hashPassword } from './passwords.js';
import { takeAttempt } from './rate-limits.repo.js';
import { hashSecret, newSecret } from './sessions.js';
import type { SessionOrigin, SessionsService } from './sessions.service.js';
import { mailCounters, resetConfirmCounter } from './sign-in-limits.js';

const HOUR = 60 * 60_000;
/**
 * How long each kind of link works: 24 h to verify, 1 h to reset, 7 days for the previous
 * address to take the account back after an e-mail change.
 */
export const LINK_TTL_MS = {
  verify_email: 24 * HOUR,
  reset_password: HOUR,
  undo_email_change: 7 * 24 * HOUR,
} as const;

export interface EmailLinksDeps {
  readonly database: Database;
  readonly clock: Clock;
  readonly jobs: JobQueue;
  readonly mail: MailService;
  readonly sessions: SessionsService;
  /** `PUBLIC_URL`: links point at its dashboard pages. */
  readonly publicUrl: string;
  readonly passwordCost?: Argon2Cost;
}

const invalidLink = (what: string) =>
  new AppError('invalid_link', {
    message: `This ${what} link is not valid: it was used already, it expired, or it was not copied whole. Ask for a new one.`,
  });

/**
 * Links sent by e-mail that prove a person reads a mailbox: verifying the address (24 h),
 * resetting a forgotten password (1 h), and changing the address (`email-change.ts`). Each is a
 * 256-bit secret in the link, stored hashed and used once.
 */
export function createEmailLinksService({
  database,
  clock,
  jobs,
  mail,
  sessions,
  publicUrl,
  passwordCost = ARGON2_DEFAULTS,
}: EmailLinksDeps) {
  const { db } = database;

  /** A new link of `purpose` for the user's current address, in the caller's transaction. */
  async function issue(
    tx: Executor,
    user: { id: string; email: string },
    purpose: keyof typeof LINK_TTL_MS,
    page: string,
  ) {
    const token = newSecret();
    const now = clock.now();
    await links.insertEmailLink(tx, {
      tokenHash: hashSecret(token),
      purpose,
      userId: user.id,
      email: user.email,
      createdAt: now,
      expiresAt: new Date(now.getTime() + LINK_TTL_MS[purpose]),
    });
    return `${publicUrl}/dashboard/${page}?token=${token}`;
  }

  /** Queues the verification mail for the user's address, in the caller's transaction. */
  async function sendVerification(tx: Executor, user: { id: string; email: string; name: string }) {
    const url = await issue(tx, user, 'verify_email', 'verify-email');
    await mail.enqueue(tx, {
      template: 'verifyEmail',
      to: user.email,
      data: { name: user.name, url },
    });
  }

  const emailChange = createEmailChange({
    database,
    clock,
    mail,
    sessions,
    publicUrl,
    passwordCost,
    issueUndoLink: (tx, user) => issue(tx, user, 'undo_email_change', 'undo-email-change'),
    invalidLink,
  });

  return {
    sendVerification,
    requestEmailChange: emailChange.request,
    cancelEmailChange: emailChange.cancel,
    undoEmailChange: emailChange.undo,

    /** Verifies the user's address, or, for the link to a requested new one, moves to it. */
    async verifyEmail(token: string): Promise<{ email: string }> {
      const verified = await database.transaction(async (tx) => {
        const now = clock.now();
        const user = await links.consumeEmailLink(tx, hashSecret(token), 'verify_email', now);
        if (!user) return undefined;
        if (!user.emailVerifiedAt) await repo.setEmailVerified(tx, user.id, now);
        return { email: user.email };
      });
      const found = verified ?? (await emailChange.confirm(token));
      if (!found) throw invalidLink('verification');
      return found;
    },

    /**
     * Another verification link for the signed-in user, voiding the earlier ones (rate-limited
     * per address and account).
     */
    async resendVerification(user: User, clientAddress: string): Promise<void> {
      if (user.emailVerified) {
        throw new AppError('invalid_state', { message: 'Your e-mail address is verified already' });
      }
      const counters = mailCounters('verify', {
        email: user.email,
        userId: user.id,
        clientAddress,
      });
      await database.transaction((tx) => takeAttempt(tx, counters, clock.now()));
      // The newest link is the one that works: the mails before it say nothing current.
      await database.transaction(async (tx) => {
        await links.deleteEmailLinks(tx, user.id, 'verify_email');
        await sendVerification(tx, user);
      });
    },

    /**
     * Asks for a reset link to the address. The request does the same work whether or not a user
     * has the address (the rate limit counts it, a job looks it up later), so neither its answer
     * nor its time tells anyone who has an account.
     */
    async requestPasswordReset(email: string, clientAddress: string): Promise<void> {
      const counters = mailCounters('reset', { email, clientAddress });
      await database.transaction(async (tx) => {
        await takeAttempt(tx, counters, clock.now());
        await jobs.enqueue(tx, passwordReset, { email });
      });
    },

    /** The job's half: a reset link to the address if a user has it; nothing otherwise. */
    async sendPasswordReset(email: string): Promise<void> {
      await database.transaction(async (tx) => {
        const user = await repo.findUserByEmail(tx, email);
        if (!user) return;
        const url = await issue(tx, user, 'reset_password', 'reset-password');
        await mail.enqueue(tx, {
          template: 'passwordReset',
          to: user.email,
          data: { name: user.name, url },
        });
      });
    },

    /**
     * Sets the new password: every session and personal access token of the user ends (a reset
     * takes the account back from whoever else held it), other reset links stop working, the
     * address counts as verified (the link reached it), and this browser is signed in.
     */
    async confirmPasswordReset(input: { token: string; password: string } & SessionOrigin) {
      const tokenHash = hashSecret(input.token);
      // A hash costs memory and time: only a link that works, from an address within its limit,
      // gets one.
      await database.transaction((tx) =>
        takeAttempt(tx, [resetConfirmCounter(input.clientAddress)], clock.now()),
      );
      if (!(await links.findUsableEmailLink(db, tokenHash, 'reset_password', clock.now()))) {
        throw invalidLink('password reset');
      }
      const passwordHash = await hashPassword(input.password, passwordCost);
      return database.transaction(async (tx) => {
        const now = clock.now();
        const found = await links.consumeEmailLink(tx, tokenHash, 'reset_password', now);
        if (!found) throw invalidLink('password reset');
        await repo.setPasswordHash(tx, found.id, passwordHash);
        await links.deleteEmailLinks(tx, found.id, 'reset_password');
        const revoked = await sessions.revokeAll(tx, found.id);
        const user = found.emailVerifiedAt ? found : await repo.setEmailVerified(tx, found.id, now);
        return {
          user: toUser(user),
          ...revoked,
          session: await sessions.open(tx, found.id, input),
        };
      });
    },

    /** Drops links past their expiry (the hourly sweep). */
    sweep: (before: Date) => links.deleteEmailLinksBefore(db, before),
  };
}

export type EmailLinksService = ReturnType<typeof createEmailLinksService>;
