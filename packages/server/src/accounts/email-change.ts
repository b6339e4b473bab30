import type { PendingEmailChange, User } from '@svc/contract';
import type { Clock } from '../adapters/clock.js';
import type { Database, Executor } from '../db/database.js';
import { AppError } from '../errors.js';
import type { MailService } from '../mail/mail.service.js';
import { toUser } from './account-views.js';
import * as repo from './accounts.repo.js';
import * as links from './email-links.repo.js';
import { type Argon2Cost, hashPassword } from './passwords.js';
import { takeAttempt } from './rate-limits.repo.js';
import { hashSecret, newSecret } from './sessions.js';
import type { SessionOrigin, SessionsService } from './sessions.service.js';
import { resetConfirmCounter } from './sign-in-limits.js';

/** How long the link to a requested new address works. */
export const EMAIL_CHANGE_TTL_MS = 24 * 60 * 60_000;

export interface EmailChangeDeps {
  readonly database: Database;
  readonly clock: Clock;
  readonly mail: MailService;
  readonly sessions: SessionsService;
  readonly publicUrl: string;
  readonly passwordCost: Argon2Cost;
  /** A new undo link (7 days) for the user's current address, in the caller's transaction. */
  readonly issueUndoLink: (tx: Executor, user: { id: string; email: string }) => Promise<string>;
  readonly invalidLink: (what: string) => AppError;
}

/** A unique violation (SQLSTATE 23505): someone took the address meanwhile. */
const addressTaken = (error: unknown): never => {
  if ((error as { code?: string }).code === '23505') {
    throw new AppError('email_taken', {
      message: 'Another account has this address now',
      cause: error,
    });
  }
  throw error;
};

/**
 * Changing a user's e-mail address. The session alone does not do it (the caller checked the
 * password): the new address becomes the account's only once the link mailed to it is opened,
 * so sign-in and password resets keep using the current one until then. The current address is
 * told at once and again when the change takes effect, each time with a link (7 days) that takes
 * the account back: it cancels or reverts the change, ends every session and token, and sets a
 * new password, since whoever asked knew the old one.
 */
export function createEmailChange(deps: EmailChangeDeps) {
  const { database, clock, mail, sessions, publicUrl } = deps;
  const { db } = database;

  return {
    /**
     * Records `newEmail` as the user's pending address, in the caller's transaction, and mails
     * both addresses. Whoever asks sees the same whether or not another account has the address
     * (the same answer, the same pending address, the same notice to their own address); only
     * the new address learns the difference: it gets the confirmation link, or, when it has an
     * account already, a note that someone tried to use it.
     */
    async request(tx: Executor, user: User, newEmail: string): Promise<PendingEmailChange> {
      const token = newSecret();
      const expiresAt = new Date(clock.now().getTime() + EMAIL_CHANGE_TTL_MS);
      const taken = (await repo.findUserByEmail(tx, newEmail)) !== undefined;
      await repo.setPendingEmail(tx, user.id, {
        pendingEmail: newEmail,
        pendingEmailTokenHash: hashSecret(token),
        pendingEmailExpiresAt: expiresAt,
      });
      const undoUrl = await deps.issueUndoLink(tx, user);
      await mail.enqueue(tx, {
        template: 'emailChangeRequested',
        to: user.email,
        data: { name: user.name, newEmail, undoUrl },
      });
      if (taken) {
        await mail.enqueue(tx, { template: 'emailInUse', to: newEmail, data: {} });
      } else {
        const url = `${publicUrl}/dashboard/verify-email?token=${token}`;
        await mail.enqueue(tx, {
          template: 'confirmEmailChange',
          to: newEmail,
          data: { name: user.name, newEmail, url },
        });
      }
      return { email: newEmail, expiresAt: expiresAt.toISOString() };
    },

    /** Drops the user's pending change, in the caller's transaction (its link stops working). */
    cancel: (tx: Executor, userId: string) =>
      repo.setPendingEmail(tx, userId, {
        pendingEmail: null,
        pendingEmailTokenHash: null,
        pendingEmailExpiresAt: null,
      }),

    /**
     * The link to a pending address was opened: it becomes the user's, verified, and the
     * previous address gets a notice with a link that reverts it. `undefined` when the token is
     * no pending change's (the caller tries it as another kind of link).
     */
    async confirm(token: string): Promise<{ email: string } | undefined> {
      return database.transaction(async (tx) => {
        const now = clock.now();
        const user = await repo.lockUserByPendingEmailToken(tx, hashSecret(token), now);
        if (!user?.pendingEmail) return undefined;
        const changed = await repo
          .applyPendingEmail(tx, user.id, user.pendingEmail, now)
          .catch(addressTaken);
        const undoUrl = await deps.issueUndoLink(tx, user);
        await mail.enqueue(tx, {
          template: 'emailChanged',
          to: user.email,
          data: { name: user.name, newEmail: changed.email, undoUrl },
        });
        return { email: changed.email };
      });
    },

    /**
     * The previous address's link: the account gets that address back (a pending change is
     * dropped, one that took effect is reverted), the new password, and no other session or
     * token; this browser is signed in. Refused if another account has taken the address since.
     */
    async undo(input: { token: string; password: string } & SessionOrigin) {
      const tokenHash = hashSecret(input.token);
      // A hash costs memory and time: only a link that works, within the address's limit.
      await database.transaction((tx) =>
        takeAttempt(tx, [resetConfirmCounter(input.clientAddress)], clock.now()),
      );
      if (!(await links.findUsableEmailLink(db, tokenHash, 'undo_email_change', clock.now()))) {
        throw deps.invalidLink('undo');
      }
      const passwordHash = await hashPassword(input.password, deps.passwordCost);
      return database.transaction(async (tx) => {
        const now = clock.now();
        const link = await links.consumeLinkOfAnyAddress(tx, tokenHash, 'undo_email_change', now);
        if (!link) throw deps.invalidLink('undo');
        const holder = await repo.findUserByEmail(tx, link.email);
        if (holder && holder.id !== link.userId) {
          throw new AppError('email_taken', {
            message: `${link.email} belongs to another account now: ask the service's operator for help`,
          });
        }
        const user = await repo
          .restoreEmail(tx, link.userId, { email: link.email, passwordHash, now })
          .catch(addressTaken);
        await links.deleteEmailLinks(tx, user.id, 'undo_email_change');
        await links.deleteEmailLinks(tx, user.id, 'reset_password');
        const revoked = await sessions.revokeAll(tx, user.id);
        return { user: toUser(user), ...revoked, session: await sessions.open(tx, user.id, input) };
      });
    },
  };
}

export type EmailChange = ReturnType<typeof createEmailChange>;
