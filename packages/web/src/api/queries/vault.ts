import { addVaultEntry, deleteVaultEntry, listVaultEntries } from '@svc/contract';
import type { QueryClient } from '@tanstack/react-query';
import { type CallInput, callEndpoint } from '../client.js';

export const vaultKey = (accountId: string) => ['vault', accountId] as const;

export const vaultQuery = (accountId: string) => ({
  queryKey: vaultKey(accountId),
  queryFn: ({ signal }: { signal: AbortSignal }) =>
    callEndpoint(listVaultEntries, { query: { accountId } }, { signal }),
});

export const addVaultEntryMutation = (qc: QueryClient, accountId: string) => ({
  mutationFn: (body: CallInput<typeof addVaultEntry>['body']) =>
    callEndpoint(addVaultEntry, { body }),
  onSuccess: () => qc.invalidateQueries({ queryKey: vaultKey(accountId) }),
});

export const deleteVaultEntryMutation = (qc: QueryClient, accountId: string) => ({
  mutationFn: (id: string) => callEndpoint(deleteVaultEntry, { params: { id } }),
  onSuccess: () => qc.invalidateQueries({ queryKey: vaultKey(accountId) }),
});
