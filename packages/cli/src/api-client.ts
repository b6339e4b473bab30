import {
  buildPath,
  type Endpoint,
  type EndpointCallInput,
  type EndpointResult,
  type ErrorCode,
  ErrorEnvelope,
  type ValidationIssue,
} from '@svc/contract';
import { type AgentCredentials, requireAgentCredentials } from './agent-env.js';
import type { CliIo } from './main.js';

/** What a call may fail with besides the service's own codes. */
export type ClientErrorCode = ErrorCode | 'network_error' | 'invalid_response';

/**
 * A failed call, printable as it is: the service's `{error, detail, issues}` envelope, or a
 * client-side failure (the service could not be reached, or answered something that is not the
 * contract's: a proxy's HTML error page, a body its schema refuses). Where the service's own
 * answer is missing the message names the URL, so the person can see which hop failed.
 */
export class ApiError extends Error {
  override name = 'ApiError';
  /** The service's reason, in a sentence (statuses below 500 only). */
  readonly detail?: string;
  readonly issues: readonly ValidationIssue[];
  constructor(
    readonly error: ClientErrorCode,
    /** The HTTP status; 0 when no answer arrived. */
    readonly status: number,
    message: string,
    options: { detail?: string; issues?: readonly ValidationIssue[]; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    if (options.detail) this.detail = options.detail;
    this.issues = options.issues ?? [];
  }
}

/** The input is required exactly when the endpoint has path parameters or a body. */
type CallArgs<E extends Endpoint> = E['params'] extends object
  ? [input: EndpointCallInput<E>]
  : E['body'] extends object
    ? [input: EndpointCallInput<E>]
    : [input?: EndpointCallInput<E>];

/** Calls one contract endpoint with the Agent's token; see `createApiClient`. */
export type ApiClient = <E extends Endpoint>(
  endpoint: E,
  ...args: CallArgs<E>
) => Promise<EndpointResult<E>>;

/**
 * The one client of the service: calls contract endpoints with the Agent's HMAC token through
 * the given `fetch` (the in-memory app's in tests) and parses the answers with the endpoint's
 * response schema, so a result is what the contract says or an error. Every failure is an
 * `ApiError`.
 */
export function createApiClient(
  credentials: AgentCredentials,
  fetchImpl: typeof fetch = fetch,
): ApiClient {
  return async (endpoint, ...[input]) => {
    const { params, query, body } = (input ?? {}) as {
      params?: Record<string, string>;
      query?: Record<string, string | undefined>;
      body?: unknown;
    };
    const url = new URL(buildPath(endpoint.path, params), credentials.apiUrl);
    for (const [name, value] of Object.entries(query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, value);
    }
    const where = `${endpoint.method} ${url}`;
    let status = 0;
    let text: string;
    try {
      const response = await fetchImpl(url, {
        method: endpoint.method,
        headers: {
          authorization: `Bearer ${credentials.hmacToken}`,
          accept: 'application/json',
          ...(body !== undefined && { 'content-type': 'application/json' }),
        },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
      status = response.status;
      text = await response.text();
    } catch (error) {
      const cause = describeCause(error);
      const what = status
        ? `the answer to ${where} broke off`
        : `cannot reach the service at ${where}`;
      throw new ApiError('network_error', status, `${what}: ${cause}`, { cause: error });
    }
    if (status !== endpoint.response.status) throw failure(status, text, where);
    const schema = endpoint.response.body;
    if (!schema) return undefined as EndpointResult<typeof endpoint>;
    const parsed = schema.safeParse(parseJson(text));
    if (!parsed.success) {
      throw new ApiError(
        'invalid_response',
        status,
        `the answer to ${where} (${status}) does not match the service's contract: is SVC_API_URL the service?`,
      );
    }
    return parsed.data as EndpointResult<typeof endpoint>;
  };
}

/** The client for this Agent, from its credentials and `io.fetch`. */
export async function agentApiClient(io: CliIo): Promise<ApiClient> {
  return createApiClient(await requireAgentCredentials(io.env), io.fetch);
}

/**
 * An answer other than the endpoint's success status. Only the service's JSON envelope is
 * trusted; anything else (a proxy's 502 page, a login page) is named by its status and URL.
 */
function failure(status: number, text: string, where: string): ApiError {
  const envelope = ErrorEnvelope.safeParse(parseJson(text));
  if (!envelope.success) {
    return new ApiError(
      'invalid_response',
      status,
      `${where} answered ${status} without the service's error body (a proxy or another server in between?)`,
    );
  }
  const { error, detail, issues } = envelope.data;
  const lines = issues?.map((i) => `\n  - ${i.path.join('.')}: ${i.message}`).join('') ?? '';
  const reason = detail ?? (error === 'unauthorized' ? "it did not accept this Agent's token" : '');
  return new ApiError(
    error,
    status,
    `the service answered ${status} ${error}${reason && `: ${reason}`}${lines}`,
    { detail, issues },
  );
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
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
