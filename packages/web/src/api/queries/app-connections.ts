import {
  type AppProvider,
  authorizeApp,
  deleteAppConnection,
  listAppConnections,
  listAppProviders,
} from '@svc/contract';
import type { QueryClient } from '@tanstack/react-query';
import { callEndpoint } from '../client.js';

export const connectionsKey = (accountId: string) => ['app-connections', accountId] as const;

export const providersQuery = () => ({
  queryKey: ['app-providers'],
  queryFn: ({ signal }: { signal: AbortSignal }) => callEndpoint(listAppProviders, {}, { signal }),
  staleTime: 300_000,
});

export const connectionsQuery = (accountId: string) => ({
  queryKey: connectionsKey(accountId),
  queryFn: ({ signal }: { signal: AbortSignal }) =>
    callEndpoint(listAppConnections, { query: { accountId } }, { signal }),
});

export const disconnectMutation = (qc: QueryClient, accountId: string) => ({
  mutationFn: (id: string) => callEndpoint(deleteAppConnection, { params: { id } }),
  onSuccess: () => qc.invalidateQueries({ queryKey: connectionsKey(accountId) }),
});

/** Where the Connect popup goes: the service redirects it on to the provider's consent screen. */
export function authorizeUrl(provider: AppProvider, accountId: string, scopes: string[]): string {
  const query = new URLSearchParams({ provider, accountId });
  if (scopes.length > 0) query.set('scopes', scopes.join(','));
  return `${authorizeApp.path}?${query}`;
}
