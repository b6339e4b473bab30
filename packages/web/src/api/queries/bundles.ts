import {
  deleteBundle,
  deleteBundleVersion,
  getBundle,
  listAccountBundles,
  type SearchResult,
  type SearchSort,
  searchBundles,
} from '@svc/contract';
import { keepPreviousData, type QueryClient } from '@tanstack/react-query';
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

/** A search of published bundles, as `GET /api/glamps` takes it; no `sort` is the server's default. */
export interface BundleSearch {
  readonly q: string;
  readonly tag: string[];
  readonly sort: SearchSort | undefined;
}

/** Pages of a search, each asked for with the previous page's `nextCursor`. */
export const searchQuery = (search: BundleSearch) => ({
  queryKey: ['bundles', 'search', search] as const,
  queryFn: ({ pageParam, signal }: { pageParam: string | undefined; signal: AbortSignal }) =>
    callEndpoint(searchBundles, { query: { ...search, cursor: pageParam } }, { signal }),
  initialPageParam: undefined as string | undefined,
  getNextPageParam: (last: SearchResult) => last.nextCursor ?? undefined,
  // While a new search loads, the last results stay instead of a loading line at each keystroke.
  placeholderData: keepPreviousData,
});

/** A published bundle by its public address, as its public page shows it. */
export const bundleQuery = (accountSlug: string, name: string) => ({
  queryKey: ['bundles', 'detail', accountSlug, name] as const,
  queryFn: ({ signal }: { signal: AbortSignal }) =>
    callEndpoint(getBundle, { params: { accountSlug, name } }, { signal }),
});
