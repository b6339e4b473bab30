import { z } from 'zod';
import { AccountMembership, Email, Role } from './accounts.js';
import { Id, Timestamp } from './common.js';
import { LinkToken } from './email-links.js';
import { defineEndpoint } from './endpoint.js';

/** A pending invitation to join an organization (the link's secret is never shown). */
export const Invitation = z.object({
  id: Id,
  accountId: Id,
  email: z.string(),
  role: Role,
  /** Who sent it; null once that user is gone. */
  invitedBy: z.object({ userId: Id, email: z.string(), name: z.string() }).nullable(),
  createdAt: Timestamp,
  expiresAt: Timestamp,
});
export type Invitation = z.infer<typeof Invitation>;

const OrgParams = z.object({ id: Id });

export const createInvitation = defineEndpoint({
  id: 'createInvitation',
  method: 'POST',
  path: '/api/orgs/{id}/invitations',
  auth: 'session',
  tag: 'accounts',
  summary:
    'Invite someone by e-mail with a role (owners and admins; only owners invite owners); the link expires after 7 days.',
  params: OrgParams,
  body: z.object({ email: Email, role: Role }),
  response: { status: 201, body: Invitation },
  errors: ['already_member', 'rate_limited'],
});

export const listInvitations = defineEndpoint({
  id: 'listInvitations',
  method: 'GET',
  path: '/api/orgs/{id}/invitations',
  auth: 'session',
  tag: 'accounts',
  summary: "The organization's pending invitations, newest first (owners and admins).",
  params: OrgParams,
  response: { status: 200, body: z.object({ invitations: z.array(Invitation) }) },
  errors: [],
});

export const revokeInvitation = defineEndpoint({
  id: 'revokeInvitation',
  method: 'DELETE',
  path: '/api/orgs/{id}/invitations/{invitationId}',
  auth: 'session',
  tag: 'accounts',
  summary: 'Revoke a pending invitation: its link stops working (owners and admins).',
  params: z.object({ id: Id, invitationId: Id }),
  response: { status: 204 },
  errors: [],
});

export const acceptInvitation = defineEndpoint({
  id: 'acceptInvitation',
  method: 'POST',
  path: '/api/invitations/accept',
  auth: 'session',
  tag: 'accounts',
  summary:
    "Join the invitation's organization with its role, as the signed-in user whose verified e-mail it was sent to (single use; another user: 403 `forbidden`; the invited address not verified yet: 403 `email_unverified`).",
  body: z.object({ token: LinkToken }),
  response: { status: 200, body: AccountMembership },
  errors: ['invalid_link', 'already_member', 'forbidden', 'email_unverified'],
});

/**
 * Adding a member by e-mail is an invitation (`createInvitation`): the person joins only by
 * opening the link mailed to the address, and the answer is the same whether or not the address
 * has an account.
 */
export const addMember = defineEndpoint({
  ...createInvitation,
  id: 'addMember',
  path: '/api/orgs/{id}/members',
  summary:
    'Invite someone by e-mail to join with a role (owners and admins; only owners grant `owner`): the same as creating an invitation; nobody joins without opening the mailed link.',
  response: { status: 202, body: Invitation },
});

export const invitationEndpoints = [
  addMember,
  createInvitation,
  listInvitations,
  revokeInvitation,
  acceptInvitation,
] as const;
