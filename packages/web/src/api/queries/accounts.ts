import {
  activateSubscription,
  addMember,
  createOrg,
  deactivateSubscription,
  getMe,
  listMembers,
  removeMember,
  signIn,
  signOut,
  signUp,
} from '@svc/contract';
import type { QueryClient } from '@tanstack/react-query';
import { type CallInput, callEndpoint } from '../client.js';

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

export const addMemberMutation = (qc: QueryClient, orgId: string) => ({
  mutationFn: (body: CallInput<typeof addMember>['body']) =>
    callEndpoint(addMember, { params: { id: orgId }, body }),
  onSuccess: () => qc.invalidateQueries({ queryKey: membersKey(orgId) }),
});

export const removeMemberMutation = (qc: QueryClient, orgId: string) => ({
  mutationFn: (userId: string) => callEndpoint(removeMember, { params: { id: orgId, userId } }),
  onSuccess: () =>
    Promise.all([
      qc.invalidateQueries({ queryKey: membersKey(orgId) }),
      qc.invalidateQueries({ queryKey: meKey }),
    ]),
});

export const subscriptionMutation = (qc: QueryClient, accountId: string) => ({
  mutationFn: (active: boolean) =>
    callEndpoint(active ? activateSubscription : deactivateSubscription, {
      params: { id: accountId },
    }),
  onSuccess: () => qc.invalidateQueries({ queryKey: meKey }),
});
