import * as oidc from 'openid-client';

/**
 * The 410/503 split (docs/reference.md#app-connections): only `invalid_grant` means the refresh
 * token is dead.
 * Everything else (timeout, abort, network, 5xx, 429, `invalid_client`, `unauthorized_client`,
 * a malformed answer) is transient or our own misconfiguration, and the connection stays active.
 */
export type RefreshFailure = 'dead' | 'unavailable';

export function classifyRefreshError(error: unknown): RefreshFailure {
  return error instanceof oidc.ResponseBodyError && error.error === 'invalid_grant'
    ? 'dead'
    : 'unavailable';
}

/** What may go in a log line about a failed provider call: codes and statuses, never bodies. */
export function describeProviderError(error: unknown): Record<string, unknown> {
  if (error instanceof oidc.ResponseBodyError) {
    return { kind: 'response_body', error: error.error, status: error.status };
  }
  if (error instanceof oidc.ClientError) return { kind: 'client', code: error.code };
  if (error instanceof Error) return { kind: error.name };
  return { kind: typeof error };
}
