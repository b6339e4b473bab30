import { z } from 'zod';
import { Id, Slug, Timestamp } from './common.js';
import { defineEndpoint } from './endpoint.js';

export const AccountKind = z.enum(['personal', 'organization']);
export type AccountKind = z.infer<typeof AccountKind>;

export const Role = z.enum(['owner', 'admin', 'member']);
export type Role = z.infer<typeof Role>;

/**
 * Where the account's subscription stands: `active`; `past_due` (an invoice is unpaid after its due
 * date; slots still work until the grace period ends); `inactive` (never activated, deactivated,
 * cancelled by the payment processor, or unpaid past the grace period). `subscriptionActive` is
 * `active` or `past_due`.
 */
export const SubscriptionStatus = z.enum(['inactive', 'active', 'past_due']);
export type SubscriptionStatus = z.infer<typeof SubscriptionStatus>;

export const Email = z.string().trim().toLowerCase().pipe(z.email().max(254));
export const Password = z
  .string()
  .min(8, 'Use at least 8 characters')
  .max(1024, 'Use at most 1024 characters');
/**
 * A person's or an organization's name: one line, no control characters (names reach mail
 * subjects and greetings).
 */
const DisplayName = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .regex(/^[^\p{Cc}\u2028\u2029]*$/u, 'Use one line of text, without control characters');
const PersonName = DisplayName;

export const User = z.object({
  id: Id,
  email: z.string(),
  name: z.string(),
  /** Whether the user opened the verification link sent to `email`. */
  emailVerified: z.boolean(),
  createdAt: Timestamp,
});
export type User = z.infer<typeof User>;

/**
 * A requested e-mail change: the new address takes effect only once the link mailed to it is
 * opened (before `expiresAt`); until then sign-in and resets use the current one.
 */
export const PendingEmailChange = z.object({ email: z.string(), expiresAt: Timestamp });
export type PendingEmailChange = z.infer<typeof PendingEmailChange>;

/** An account as seen by one of its members. */
export const AccountMembership = z.object({
  id: Id,
  slug: z.string(),
  name: z.string(),
  kind: AccountKind,
  role: Role,
  subscriptionActive: z.boolean(),
  subscriptionStatus: SubscriptionStatus,
});
export type AccountMembership = z.infer<typeof AccountMembership>;

export const Member = z.object({
  userId: Id,
  email: z.string(),
  name: z.string(),
  role: Role,
  createdAt: Timestamp,
});
export type Member = z.infer<typeof Member>;

export const Subscription = z.object({
  accountId: Id,
  subscriptionActive: z.boolean(),
  subscriptionStatus: SubscriptionStatus,
});

const AccountIdParams = z.object({ id: Id });

export const signUp = defineEndpoint({
  id: 'signUp',
  method: 'POST',
  path: '/api/auth/sign-up',
  auth: 'none',
  tag: 'accounts',
  summary: 'Create a user and their personal account, and sign in.',
  body: z.object({ email: Email, password: Password, name: PersonName }),
  response: { status: 201, body: z.object({ user: User, account: AccountMembership }) },
  errors: ['email_taken', 'rate_limited'],
});

export const signIn = defineEndpoint({
  id: 'signIn',
  method: 'POST',
  path: '/api/auth/sign-in',
  auth: 'none',
  tag: 'accounts',
  summary: 'Sign in with e-mail and password; sets the session cookie.',
  body: z.object({ email: Email, password: z.string().min(1).max(1024) }),
  response: { status: 200, body: z.object({ user: User }) },
  errors: ['invalid_credentials', 'rate_limited'],
});

export const signOut = defineEndpoint({
  id: 'signOut',
  method: 'POST',
  path: '/api/auth/sign-out',
  auth: 'none',
  tag: 'accounts',
  summary: 'End the current session, if any, and clear the cookie.',
  response: { status: 204 },
  errors: [],
});

export const getMe = defineEndpoint({
  id: 'getMe',
  method: 'GET',
  path: '/api/me',
  auth: 'session',
  tag: 'accounts',
  summary: 'The signed-in user and every account they belong to.',
  response: {
    status: 200,
    body: z.object({
      user: User,
      accounts: z.array(AccountMembership),
      /**
       * `required`: until the e-mail is verified, creating machines and publishing answer 403
       * `email_unverified`; `optional`: the dashboard only reminds.
       */
      emailVerification: z.enum(['required', 'optional']),
      /** A requested new address waiting for its link to be opened; null when none waits. */
      pendingEmailChange: PendingEmailChange.nullable(),
    }),
  },
  errors: [],
});

export const updateMe = defineEndpoint({
  id: 'updateMe',
  method: 'PATCH',
  path: '/api/me',
  // Browser session only: a token that could move the e-mail could reset the password there.
  auth: 'session-only',
  tag: 'accounts',
  summary:
    "Change the signed-in user's name, or ask to change their e-mail (with the current password): the new address takes effect once the link mailed to it is opened, and the current one is told, with a link that takes the account back. The answer is the same whether or not the new address has an account.",
  body: z
    .object({
      name: PersonName.optional(),
      email: Email.optional(),
      /** Needed with `email`: a session alone does not move the account's address. */
      currentPassword: z.string().max(1024).optional(),
    })
    .refine((body) => body.name !== undefined || body.email !== undefined, {
      message: 'Give a name or an e-mail to change',
    })
    .refine((body) => body.email === undefined || body.currentPassword !== undefined, {
      message: 'Give your current password to change the e-mail address',
      path: ['currentPassword'],
    }),
  response: {
    status: 200,
    body: User.extend({ pendingEmailChange: PendingEmailChange.nullable() }),
  },
  errors: ['forbidden', 'rate_limited'],
});

export const deleteMe = defineEndpoint({
  id: 'deleteMe',
  method: 'DELETE',
  path: '/api/me',
  auth: 'session-only',
  tag: 'accounts',
  summary:
    "Delete the signed-in user and their personal account; refused while they are an organization's only owner, or their account has machines or bundles.",
  response: { status: 204 },
  errors: ['invalid_state'],
});

/** What a new password ended: the user's other sessions and their personal access tokens. */
export const Revoked = z.object({
  revokedSessions: z.number().int().nonnegative(),
  revokedTokens: z.number().int().nonnegative(),
});
export type Revoked = z.infer<typeof Revoked>;

export const changePassword = defineEndpoint({
  id: 'changePassword',
  method: 'POST',
  path: '/api/me/password',
  auth: 'session-only',
  tag: 'accounts',
  summary:
    'Change the password (the current one required); every other session of the user ends and every personal access token is revoked (the answer counts them).',
  body: z.object({ currentPassword: z.string().max(1024), newPassword: Password }),
  response: { status: 200, body: Revoked },
  errors: ['rate_limited'],
});

/** A signed-in browser of the user, as the settings page lists it. */
export const Session = z.object({
  id: Id,
  /** The session of this request. */
  current: z.boolean(),
  userAgent: z.string().nullable(),
  clientAddress: z.string().nullable(),
  createdAt: Timestamp,
  lastSeenAt: Timestamp.nullable(),
  expiresAt: Timestamp,
});
export type Session = z.infer<typeof Session>;

export const listSessions = defineEndpoint({
  id: 'listSessions',
  method: 'GET',
  path: '/api/me/sessions',
  auth: 'session',
  tag: 'accounts',
  summary: "The signed-in user's sessions, newest first.",
  response: { status: 200, body: z.object({ sessions: z.array(Session) }) },
  errors: [],
});

export const endSession = defineEndpoint({
  id: 'endSession',
  method: 'DELETE',
  path: '/api/me/sessions/{id}',
  auth: 'session',
  tag: 'accounts',
  summary: "End one of the user's sessions (that browser is signed out).",
  params: z.object({ id: Id }),
  response: { status: 204 },
  errors: [],
});

export const createOrg = defineEndpoint({
  id: 'createOrg',
  method: 'POST',
  path: '/api/orgs',
  auth: 'session',
  tag: 'accounts',
  summary: 'Create an organization account; the caller becomes its owner.',
  body: z.object({ name: DisplayName, slug: Slug }),
  response: { status: 201, body: AccountMembership },
  errors: ['slug_taken'],
});

export const listMembers = defineEndpoint({
  id: 'listMembers',
  method: 'GET',
  path: '/api/orgs/{id}/members',
  auth: 'session',
  tag: 'accounts',
  summary: "The organization's members (any member may list them).",
  params: AccountIdParams,
  response: { status: 200, body: z.object({ members: z.array(Member) }) },
  errors: [],
});

export const removeMember = defineEndpoint({
  id: 'removeMember',
  method: 'DELETE',
  path: '/api/orgs/{id}/members/{userId}',
  auth: 'session',
  tag: 'accounts',
  summary: 'Remove a member (owners and admins, or a member leaving); the last owner stays.',
  params: z.object({ id: Id, userId: Id }),
  response: { status: 204 },
  errors: ['last_owner'],
});

export const changeMemberRole = defineEndpoint({
  id: 'changeMemberRole',
  method: 'PATCH',
  path: '/api/orgs/{id}/members/{userId}',
  auth: 'session',
  tag: 'accounts',
  summary:
    "Change a member's role (owners and admins; only owners grant or take `owner`); the last owner stays.",
  params: z.object({ id: Id, userId: Id }),
  body: z.object({ role: Role }),
  response: { status: 200, body: Member },
  errors: ['last_owner'],
});

/** One thing done in an account, as its audit log shows it. */
export const AuditEvent = z.object({
  id: Id,
  /** `<kind>.<verb>`, e.g. `agent.destroy`, `member.role`, `bundle.publish`. */
  action: z.string(),
  resourceKind: z.string(),
  resourceId: Id,
  /** Who did it; null for the operator or the service itself. */
  actor: z.object({ userId: Id, email: z.string(), name: z.string() }).nullable(),
  data: z.record(z.string(), z.unknown()),
  createdAt: Timestamp,
});
export type AuditEvent = z.infer<typeof AuditEvent>;

export const AuditLog = z.object({
  items: z.array(AuditEvent),
  /** Pass as `cursor` for the next (older) page; null on the last one. */
  nextCursor: z.string().nullable(),
});
export type AuditLog = z.infer<typeof AuditLog>;

export const listAuditEvents = defineEndpoint({
  id: 'listAuditEvents',
  method: 'GET',
  path: '/api/accounts/{id}/audit',
  auth: 'session',
  tag: 'accounts',
  summary: "The account's audit log, newest first (owners and admins).",
  params: AccountIdParams,
  query: z.object({
    /** An action (`agent.destroy`) or a whole kind (`agent`). */
    kind: z
      .string()
      .regex(/^[a-z_]+(?:\.[a-z_]+)*$/, 'An action such as agent.destroy, or a kind such as agent')
      .max(60)
      .optional(),
    /** Only what this user did. */
    actor: Id.optional(),
    cursor: z.string().max(200).optional(),
    limit: z.coerce.number().int().min(1).max(100).optional(),
  }),
  response: { status: 200, body: AuditLog },
  errors: [],
});

export const activateSubscription = defineEndpoint({
  id: 'activateSubscription',
  method: 'POST',
  path: '/api/accounts/{id}/subscription',
  auth: 'session',
  tag: 'billing',
  summary:
    "Activate the account's subscription (owners and admins); with Stripe, creates its customer and subscription.",
  params: AccountIdParams,
  response: { status: 200, body: Subscription },
  errors: ['invoices_overdue', 'billing_unavailable', 'invalid_state'],
});

export const deactivateSubscription = defineEndpoint({
  id: 'deactivateSubscription',
  method: 'DELETE',
  path: '/api/accounts/{id}/subscription',
  auth: 'session',
  tag: 'billing',
  summary: "Deactivate the account's subscription (owners and admins).",
  params: AccountIdParams,
  response: { status: 200, body: Subscription },
  errors: [],
});

export const accountEndpoints = [
  signUp,
  signIn,
  signOut,
  getMe,
  updateMe,
  deleteMe,
  changePassword,
  listSessions,
  endSession,
  createOrg,
  listMembers,
  changeMemberRole,
  removeMember,
  listAuditEvents,
  activateSubscription,
  deactivateSubscription,
] as const;
