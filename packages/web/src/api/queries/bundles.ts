import { deleteBundle, deleteBundleVersion, listAccountBundles } from '@svc/contract';
import type { QueryClient } from '@tanstack/react-query';
import { callEndpoint } from '../client.js';

export const bundlesKey = (accountId: string) => ['bundles', accountId] as const;

export const bundlesQuery = (accountId: string) => ({
  queryKey: bundlesKey(accountId),
  queryFn: ({ signal }: { signal: AbortSignal }) =>
    callEndpoint(listAccountBundles, { params: { id: accountId } }, { signal }),
});

/** Bundles are addressed by account slug and name, as their public pages are. */
export const deleteBundleMutation = (qc: QueryClient, accountId: string, accountSlug: string) => ({
  mutationFn: (name: string) => callEndpoint(deleteBundle, { params: { accountSlug, name } }),
  onSuccess: () => qc.invalidateQueries({ queryKey: bundlesKey(accountId) }),
});

export const deleteVersionMutation = (qc: QueryClient, accountId: string, accountSlug: string) => ({
  mutationFn: ({ name, version }: { name: string; version: number }) =>
    callEndpoint(deleteBundleVersion, { params: { accountSlug, name, version } }),
  onSuccess: () => qc.invalidateQueries({ queryKey: bundlesKey(accountId) }),
});
