import type { AccountMembership, Member, PendingEmailChange, Role, User } from '@svc/contract';
import type { AccountRow, UserRow } from '../db/schema.js';

export const toUser = (
  row: Pick<UserRow, 'id' | 'email' | 'name' | 'createdAt' | 'emailVerifiedAt'>,
): User => ({
  id: row.id,
  email: row.email,
  name: row.name,
  emailVerified: row.emailVerifiedAt !== null,
  createdAt: row.createdAt.toISOString(),
});

export const toMembership = (
  row: Pick<
    AccountRow,
    'id' | 'slug' | 'name' | 'kind' | 'subscriptionActive' | 'subscriptionStatus'
  >,
  role: Role,
): AccountMembership => ({
  id: row.id,
  slug: row.slug,
  name: row.name,
  kind: row.kind,
  role,
  subscriptionActive: row.subscriptionActive,
  subscriptionStatus: row.subscriptionStatus,
});

/** The user's requested new address while its link still works, else null. */
export const pendingEmailChangeOf = (
  row: Pick<UserRow, 'pendingEmail' | 'pendingEmailExpiresAt'>,
  now: Date,
): PendingEmailChange | null =>
  row.pendingEmail && row.pendingEmailExpiresAt && row.pendingEmailExpiresAt > now
    ? { email: row.pendingEmail, expiresAt: row.pendingEmailExpiresAt.toISOString() }
    : null;

/** A signed-in user and the accounts they belong to, as one session or token check finds them. */
export interface Principal {
  readonly user: User;
  readonly memberships: AccountMembership[];
  /** Read by the same statement, for `GET /api/me`. */
  readonly pendingEmailChange: PendingEmailChange | null;
}

/** Memberships as `membershipsOf` returns them (JSON rows), personal account first. */
export const toMemberships = (
  rows:
    | readonly (Pick<
        AccountRow,
        'id' | 'slug' | 'name' | 'kind' | 'subscriptionActive' | 'subscriptionStatus'
      > & {
        role: Role;
      })[]
    | null,
): AccountMembership[] => (rows ?? []).map((row) => toMembership(row, row.role));

export const toMember = (row: {
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
