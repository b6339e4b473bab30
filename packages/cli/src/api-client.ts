import {
  CallError,
  type CallErrorCode,
  type CallFailure,
  callEndpoint,
  type Endpoint,
  type EndpointCallArgs,
  type EndpointResult,
} from '@svc/contract';
import { type AgentCredentials, requireAgentCredentials } from './agent-env.js';
import type { CliIo } from './main.js';

/** What a call may fail with besides the service's own codes. */
export type ClientErrorCode = CallErrorCode;

/**
 * A failed call, printable as it is: the service's `{error, detail, issues}` envelope, or a
 * client-side failure (the service could not be reached, or answered something that is not the
 * contract's: a proxy's HTML error page, a body its schema refuses). Where the service's own
 * answer is missing the message names the URL, so the person can see which hop failed.
 */
export class ApiError extends CallError {
  override name = 'ApiError';
}

/** Calls one contract endpoint with the Agent's token; see `createApiClient`. */
export type ApiClient = <E extends Endpoint>(
  endpoint: E,
  ...args: EndpointCallArgs<E>
) => Promise<EndpointResult<E>>;

/**
 * The one client of the service: calls contract endpoints through the contract's caller with the
 * Agent's HMAC token, over the given `fetch` (the in-memory app's in tests), so a result is what
 * the contract says or an error. Every failure is an `ApiError`.
 */
export function createApiClient(
  credentials: AgentCredentials,
  fetchImpl: typeof fetch = fetch,
): ApiClient {
  return (endpoint, ...[input]) =>
    callEndpoint(endpoint, input, {
      baseUrl: credentials.apiUrl,
      transport: (url, init) =>
        fetchImpl(url, {
          ...init,
          headers: { ...init.headers, authorization: `Bearer ${credentials.hmacToken}` },
        }),
      toError: (failure, where) =>
        new ApiError(failure, describeFailure(failure, where, endpoint.response.status)),
    });
}

/** The client for this Agent, from its credentials and `io.fetch`. */
export async function agentApiClient(io: CliIo): Promise<ApiClient> {
  return createApiClient(await requireAgentCredentials(io.env), io.fetch);
}

/**
 * What went wrong, for a person reading a terminal. Only the service's JSON envelope is trusted;
 * anything else (a proxy's 502 page, a login page) is named by its status and URL.
 */
function describeFailure(failure: CallFailure, where: string, success: number): string {
  const { error, status, detail, issues } = failure;
  if (error === 'network_error') {
    const what = status
      ? `the answer to ${where} broke off`
      : `cannot reach the service at ${where}`;
    return `${what}: ${describeCause(failure.cause)}`;
  }
  if (error === 'invalid_response') {
    return status === success
      ? `the answer to ${where} (${status}) does not match the service's contract: is SVC_API_URL the service?`
      : `${where} answered ${status} without the service's error body (a proxy or another server in between?)`;
  }
  const lines = issues.map((i) => `\n  - ${i.path.join('.')}: ${i.message}`).join('');
  const reason = detail ?? (error === 'unauthorized' ? "it did not accept this Agent's token" : '');
  return `the service answered ${status} ${error}${reason && `: ${reason}`}${lines}`;
}

/**
 * Why a request got no answer, in the system's words: undici wraps the socket's error
 * (`ECONNREFUSED`, `ENOTFOUND`, …) as the `cause` of a bare "fetch failed"; connecting to a name
 * with several addresses fails with an `AggregateError` whose message is empty.
 */
function describeCause(error: unknown): string {
  const inner = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  if (!(inner instanceof Error)) return String(inner);
  const code = (inner as { code?: unknown }).code;
  if (inner.message) return inner.message;
  return typeof code === 'string' ? code : inner.name;
}
