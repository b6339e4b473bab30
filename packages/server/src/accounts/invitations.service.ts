import { randomUUID } from 'node:crypto';
import type { AccountMembership, Invitation, Role, User } from '@svc/contract';
import type { Clock } from '../adapters/clock.js';
import type { Database } from '../db/database.js';
import { AppError } from '../errors.js';
import type { MailService } from '../mail/mail.service.js';
import { accountAuditor } from './account-audit.js';
import { toMembership } from './account-views.js';
import * as repo from './accounts.repo.js';
import * as invitations from './invitations.repo.js';
import { MANAGERS, type Membership } from './membership.js';
import { takeAttempt } from './rate-limits.repo.js';
import { hashSecret, newSecret } from './sessions.js';
import { mailCounters } from './sign-in-limits.js';

/** An invitation's link works for 7 days. */
export const INVITATION_TTL_MS = 7 * 24 * 60 * 60_000;

export interface InvitationsDeps {
  readonly database: Database;
  readonly clock: Clock;
  readonly membership: Membership;
  readonly mail: MailService;
  readonly publicUrl: string;
}

const toInvitation = (row: invitations.InvitationWithInviter): Invitation => ({
  id: row.id,
  accountId: row.accountId,
  email: row.email,
  role: row.role,
  invitedBy:
    row.invitedBy && row.inviterEmail !== null && row.inviterName !== null
      ? { userId: row.invitedBy, email: row.inviterEmail, name: row.inviterName }
      : null,
  createdAt: row.createdAt.toISOString(),
  expiresAt: row.expiresAt.toISOString(),
});

/**
 * Invitations by e-mail, the only way users add members: owners and admins invite an address
 * with a role (only owners invite owners); its verified owner, signed in, joins with that role. The link is a 256-bit secret
 * stored hashed, used once, for 7 days.
 */
export function createInvitationsService({
  database,
  clock,
  membership,
  mail,
  publicUrl,
}: InvitationsDeps) {
  const { db } = database;
  const audit = accountAuditor(clock);

  return {
    async invite(
      user: User,
      input: { accountId: string; email: string; role: Role; clientAddress: string },
    ): Promise<Invitation> {
      const actor = { userId: user.id };
      // Who may invite is checked before anything is counted against the organization.
      await membership.requireOrganization(db, actor, input.accountId, MANAGERS);
      const counters = mailCounters('invite', {
        email: input.email,
        organizationId: input.accountId,
        clientAddress: input.clientAddress,
      });
      await database.transaction((tx) => takeAttempt(tx, counters, clock.now()));
      return database.transaction(async (tx) => {
        const { account, role: actorRole } = await membership.requireOrganization(
          tx,
          actor,
          input.accountId,
          MANAGERS,
        );
        if (input.role === 'owner' && actorRole !== 'owner') {
          throw new AppError('forbidden', { message: 'Only owners invite owners' });
        }
        if (await invitations.isMemberByEmail(tx, input.accountId, input.email)) {
          throw new AppError('already_member', {
            message: `${input.email} is already a member of ${account.name}`,
          });
        }
        const token = newSecret();
        const now = clock.now();
        const row = await invitations.upsertInvitation(tx, {
          id: randomUUID(),
          accountId: input.accountId,
          email: input.email,
          role: input.role,
          tokenHash: hashSecret(token),
          invitedBy: user.id,
          createdAt: now,
          expiresAt: new Date(now.getTime() + INVITATION_TTL_MS),
        });
        await mail.enqueue(tx, {
          template: 'invitation',
          to: input.email,
          data: {
            inviterName: user.name,
            organizationName: account.name,
            role: input.role,
            url: `${publicUrl}/dashboard/invitation?token=${token}`,
          },
        });
        await audit(tx, actor, input.accountId, 'invitation.create', row.id, {
          email: input.email,
          role: input.role,
        });
        return toInvitation({ ...row, inviterEmail: user.email, inviterName: user.name });
      });
    },

    async list(user: User, accountId: string): Promise<Invitation[]> {
      await membership.requireOrganization(db, { userId: user.id }, accountId, MANAGERS);
      const rows = await invitations.listPendingInvitations(db, accountId, clock.now());
      return rows.map(toInvitation);
    },

    async revoke(user: User, accountId: string, invitationId: string): Promise<void> {
      const actor = { userId: user.id };
      await database.transaction(async (tx) => {
        await membership.requireOrganization(tx, actor, accountId, MANAGERS);
        const found = await invitations.findInvitation(tx, accountId, invitationId);
        if (!found || !(await invitations.deleteInvitation(tx, accountId, invitationId))) {
          throw new AppError('not_found');
        }
        await audit(tx, actor, accountId, 'invitation.revoke', invitationId, {
          email: found.email,
          role: found.role,
        });
      });
    },

    /**
     * The signed-in user joins with the invitation's role; the invitation is used up. It is for
     * the invited address only, verified: a user with another address, or with that address not
     * verified yet, is refused (a forwarded or leaked link lets no one else in), and nothing is
     * used up.
     */
    async accept(user: User, token: string): Promise<AccountMembership> {
      return database.transaction(async (tx) => {
        const now = clock.now();
        const invitation = await invitations.takeInvitation(tx, hashSecret(token), now);
        if (!invitation) {
          throw new AppError('invalid_link', {
            message:
              'This invitation is not valid: it was used or revoked, it expired, or the link was not copied whole. Ask for a new one.',
          });
        }
        if (invitation.email !== user.email) {
          throw new AppError('forbidden', {
            message: `This invitation is for ${invitation.email}: sign in with that address to accept it`,
          });
        }
        // Anyone may sign up with (or ask to move to) any address; only the verified owner of the
        // invited one joins, so a leaked link lets nobody else in.
        if (!user.emailVerified) {
          throw new AppError('email_unverified', {
            message: `Verify ${invitation.email} first: open the link sent to it (or ask for a new one), then open this invitation again`,
          });
        }
        const account = await repo.findAccountById(tx, invitation.accountId);
        if (!account) throw new AppError('not_found');
        const member = await repo.insertMember(tx, {
          accountId: invitation.accountId,
          userId: user.id,
          role: invitation.role,
          createdAt: now,
        });
        if (!member) {
          throw new AppError('already_member', {
            message: `You are already a member of ${account.name}`,
          });
        }
        await audit(tx, { userId: user.id }, account.id, 'invitation.accept', invitation.id, {
          email: invitation.email,
          role: invitation.role,
        });
        return toMembership(account, invitation.role);
      });
    },

    /** Drops expired invitations (the hourly sweep). */
    sweep: (before: Date) => invitations.deleteInvitationsBefore(db, before),
  };
}

export type InvitationsService = ReturnType<typeof createInvitationsService>;
