import {
  type AuditLog,
  acceptInvitation,
  activateSubscription,
  changeMemberRole,
  changePassword,
  confirmPasswordReset,
  createApiToken,
  createInvitation,
  createOrg,
  deactivateSubscription,
  deleteMe,
  endSession,
  getMe,
  listApiTokens,
  listAuditEvents,
  listInvitations,
  listMembers,
  listSessions,
  type Role,
  removeMember,
  requestPasswordReset,
  resendVerification,
  revokeApiToken,
  revokeInvitation,
  signIn,
  signOut,
  signUp,
  undoEmailChange,
  updateMe,
  verifyEmail,
} from '@svc/contract';
import type { QueryClient } from '@tanstack/react-query';
import { type CallInput, callEndpoint } from '../client.js';
import { upcomingInvoiceKey } from './billing.js';

export const meKey = ['me'] as const;
export const membersKey = (orgId: string) => ['members', orgId] as const;

export const meQuery = () => ({
  queryKey: meKey,
  queryFn: ({ signal }: { signal: AbortSignal }) => callEndpoint(getMe, {}, { signal }),
});

export const membersQuery = (orgId: string) => ({
  queryKey: membersKey(orgId),
  queryFn: ({ signal }: { signal: AbortSignal }) =>
    callEndpoint(listMembers, { params: { id: orgId } }, { signal }),
});

export const signUpMutation = (qc: QueryClient) => ({
  mutationFn: (body: CallInput<typeof signUp>['body']) => callEndpoint(signUp, { body }),
  onSuccess: () => qc.invalidateQueries({ queryKey: meKey }),
});

export const signInMutation = (qc: QueryClient) => ({
  mutationFn: (body: CallInput<typeof signIn>['body']) => callEndpoint(signIn, { body }),
  onSuccess: () => qc.invalidateQueries({ queryKey: meKey }),
});

/** The sign-in page empties the cache once the account pages are gone (see SignInPage). */
export const signOutMutation = () => ({
  mutationFn: () => callEndpoint(signOut, {}),
});

export const createOrgMutation = (qc: QueryClient) => ({
  mutationFn: (body: CallInput<typeof createOrg>['body']) => callEndpoint(createOrg, { body }),
  onSuccess: () => qc.invalidateQueries({ queryKey: meKey }),
});

export const changeRoleMutation = (qc: QueryClient, orgId: string) => ({
  mutationFn: ({ userId, role }: { userId: string; role: Role }) =>
    callEndpoint(changeMemberRole, { params: { id: orgId, userId }, body: { role } }),
  onSuccess: () =>
    Promise.all([
      qc.invalidateQueries({ queryKey: membersKey(orgId) }),
      qc.invalidateQueries({ queryKey: meKey }),
    ]),
});

/** The account's audit log, newest first, a page at a time, narrowed to one kind or action. */
export const auditQuery = (accountId: string, kind: string | undefined) => ({
  queryKey: ['audit', accountId, kind] as const,
  queryFn: ({ pageParam, signal }: { pageParam: string | undefined; signal: AbortSignal }) =>
    callEndpoint(
      listAuditEvents,
      { params: { id: accountId }, query: { kind, cursor: pageParam } },
      { signal },
    ),
  initialPageParam: undefined as string | undefined,
  getNextPageParam: (last: AuditLog) => last.nextCursor ?? undefined,
});

export const removeMemberMutation = (qc: QueryClient, orgId: string) => ({
  mutationFn: (userId: string) => callEndpoint(removeMember, { params: { id: orgId, userId } }),
  onSuccess: () =>
    Promise.all([
      qc.invalidateQueries({ queryKey: membersKey(orgId) }),
      qc.invalidateQueries({ queryKey: meKey }),
    ]),
});

/** The status lives on the account (`/api/me`); the running bill's slots follow it. */
export const subscriptionMutation = (qc: QueryClient, accountId: string) => ({
  mutationFn: (active: boolean) =>
    callEndpoint(active ? activateSubscription : deactivateSubscription, {
      params: { id: accountId },
    }),
  onSuccess: () =>
    Promise.all([
      qc.invalidateQueries({ queryKey: meKey }),
      qc.invalidateQueries({ queryKey: upcomingInvoiceKey(accountId) }),
    ]),
});

export const sessionsKey = ['sessions'] as const;

export const sessionsQuery = () => ({
  queryKey: sessionsKey,
  queryFn: ({ signal }: { signal: AbortSignal }) => callEndpoint(listSessions, {}, { signal }),
});

export const endSessionMutation = (qc: QueryClient) => ({
  mutationFn: (id: string) => callEndpoint(endSession, { params: { id } }),
  onSuccess: () => qc.invalidateQueries({ queryKey: sessionsKey }),
});

export const updateMeMutation = (qc: QueryClient) => ({
  mutationFn: (body: CallInput<typeof updateMe>['body']) => callEndpoint(updateMe, { body }),
  onSuccess: () => qc.invalidateQueries({ queryKey: meKey }),
});

/** Every other session and every token ends with it: both lists are read again. */
export const changePasswordMutation = (qc: QueryClient) => ({
  mutationFn: (body: CallInput<typeof changePassword>['body']) =>
    callEndpoint(changePassword, { body }),
  onSuccess: () =>
    Promise.all([
      qc.invalidateQueries({ queryKey: sessionsKey }),
      qc.invalidateQueries({ queryKey: apiTokensKey }),
    ]),
});

/** Always answers the same, whether or not the address has an account. */
export const requestPasswordResetMutation = () => ({
  mutationFn: (email: string) => callEndpoint(requestPasswordReset, { body: { email } }),
});

/**
 * The browser is signed in as the link's user afterwards (every other session ended): nothing
 * cached for whoever was signed in before survives.
 */
export const confirmPasswordResetMutation = (qc: QueryClient) => ({
  mutationFn: (body: CallInput<typeof confirmPasswordReset>['body']) =>
    callEndpoint(confirmPasswordReset, { body }),
  onSuccess: () => qc.resetQueries(),
});

/** Like a reset: the browser is signed in as the link's user, with a new password. */
export const undoEmailChangeMutation = (qc: QueryClient) => ({
  mutationFn: (body: CallInput<typeof undoEmailChange>['body']) =>
    callEndpoint(undoEmailChange, { body }),
  onSuccess: () => qc.resetQueries(),
});

/** Single use: the page calls it once per token (a second call would find the link used). */
export const verifyEmailMutation = (qc: QueryClient) => ({
  mutationFn: (token: string) => callEndpoint(verifyEmail, { body: { token } }),
  onSuccess: () => qc.invalidateQueries({ queryKey: meKey }),
});

export const resendVerificationMutation = () => ({
  mutationFn: () => callEndpoint(resendVerification, {}),
});

/** Ends the session too: the caller leaves for the sign-in page, which empties the cache. */
export const deleteMeMutation = () => ({
  mutationFn: () => callEndpoint(deleteMe, {}),
});

export const invitationsKey = (orgId: string) => ['invitations', orgId] as const;

export const invitationsQuery = (orgId: string) => ({
  queryKey: invitationsKey(orgId),
  queryFn: ({ signal }: { signal: AbortSignal }) =>
    callEndpoint(listInvitations, { params: { id: orgId } }, { signal }),
});

export const createInvitationMutation = (qc: QueryClient, orgId: string) => ({
  mutationFn: (body: CallInput<typeof createInvitation>['body']) =>
    callEndpoint(createInvitation, { params: { id: orgId }, body }),
  onSuccess: () => qc.invalidateQueries({ queryKey: invitationsKey(orgId) }),
});

export const revokeInvitationMutation = (qc: QueryClient, orgId: string) => ({
  mutationFn: (invitationId: string) =>
    callEndpoint(revokeInvitation, { params: { id: orgId, invitationId } }),
  onSuccess: () => qc.invalidateQueries({ queryKey: invitationsKey(orgId) }),
});

/** The user joins an organization: their list of accounts changes. */
export const acceptInvitationMutation = (qc: QueryClient) => ({
  mutationFn: (token: string) => callEndpoint(acceptInvitation, { body: { token } }),
  onSuccess: () => qc.invalidateQueries({ queryKey: meKey }),
});

export const apiTokensKey = ['api-tokens'] as const;

export const apiTokensQuery = () => ({
  queryKey: apiTokensKey,
  queryFn: ({ signal }: { signal: AbortSignal }) => callEndpoint(listApiTokens, {}, { signal }),
});

/** The answer carries the token itself, which no later call shows again. */
export const createApiTokenMutation = (qc: QueryClient) => ({
  mutationFn: (body: CallInput<typeof createApiToken>['body']) =>
    callEndpoint(createApiToken, { body }),
  onSuccess: () => qc.invalidateQueries({ queryKey: apiTokensKey }),
});

export const revokeApiTokenMutation = (qc: QueryClient) => ({
  mutationFn: (id: string) => callEndpoint(revokeApiToken, { params: { id } }),
  onSuccess: () => qc.invalidateQueries({ queryKey: apiTokensKey }),
});
