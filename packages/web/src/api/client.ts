import {
  buildPath,
  type Endpoint,
  type EndpointCallInput,
  type EndpointResult,
  type ErrorCode,
  ErrorEnvelope,
  parseRequestPart,
  type ValidationIssue,
} from '@svc/contract';
import { errorSentence } from './error-messages.js';

/** What a call may fail with besides the service's own codes. */
export type ClientErrorCode = ErrorCode | 'network_error' | 'invalid_response';

/**
 * A failed call: the service's `{error, detail, issues}` envelope, or a client-side failure (the body
 * did not pass the contract schema before sending, the network failed, or the answer did not
 * match the contract). `issues` paths start with `params`, `query` or `body`, like the server's.
 */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly error: ClientErrorCode,
    readonly status: number,
    readonly issues: readonly ValidationIssue[] = [],
    /** The service's reason, in a sentence (statuses below 500 only). */
    readonly detail?: string,
  ) {
    super(errorSentence(error, issues, detail));
  }
}

/** The call's input, typed from the descriptor: only the parts the endpoint has. */
export type CallInput<E extends Endpoint> = EndpointCallInput<E>;

export interface CallOptions {
  readonly signal?: AbortSignal;
  /** For tests; the dashboard uses the browser's `fetch` (same origin, cookies included). */
  readonly fetch?: typeof fetch;
}

/**
 * Calls one endpoint of the service. The body is checked with the endpoint's schema before it
 * is sent (a failure throws the same `invalid_request` shape the server would), and the answer is
 * parsed with the response schema, never cast.
 */
export async function callEndpoint<E extends Endpoint>(
  endpoint: E,
  input: CallInput<E>,
  options: CallOptions = {},
): Promise<EndpointResult<E>> {
  const { params, query, body } = input as {
    params?: Record<string, string>;
    query?: Record<string, string | number | readonly string[] | undefined>;
    body?: unknown;
  };
  if (endpoint.body) {
    // The server's own check (well-formed text, then the schema), so the issues are the same.
    const checked = parseRequestPart(endpoint.body, body, 'body');
    if (!checked.success) throw new ApiError('invalid_request', 400, checked.issues);
  }
  let url = buildPath(endpoint.path, params);
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) {
    // A list is the parameter repeated (`tag=a&tag=b`), as the server reads it.
    for (const item of [value].flat()) {
      if (item !== undefined && item !== '') search.append(name, String(item));
    }
  }
  if (search.size > 0) url += `?${search}`;

  let response: Response;
  try {
    response = await (options.fetch ?? fetch)(url, {
      method: endpoint.method,
      credentials: 'same-origin',
      headers: {
        accept: 'application/json',
        ...(endpoint.body && { 'content-type': 'application/json' }),
      },
      ...(endpoint.body && { body: JSON.stringify(body) }),
      ...(options.signal && { signal: options.signal }),
    });
  } catch (cause) {
    if (options.signal?.aborted) throw cause;
    throw new ApiError('network_error', 0);
  }

  if (!response.ok) {
    const envelope = ErrorEnvelope.safeParse(await response.json().catch(() => null));
    if (!envelope.success) throw new ApiError('invalid_response', response.status);
    const { error, issues, detail } = envelope.data;
    throw new ApiError(error, response.status, issues, detail);
  }
  const schema = endpoint.response.body;
  if (!schema) return undefined as EndpointResult<E>;
  const parsed = schema.safeParse(await response.json().catch(() => undefined));
  if (!parsed.success) throw new ApiError('invalid_response', response.status);
  return parsed.data as EndpointResult<E>;
}

/** The issues of one field (path after `body`), for showing next to it. */
export function issuesAt(error: unknown, ...path: (string | number)[]): string[] {
  if (!(error instanceof ApiError)) return [];
  const full = ['body', ...path];
  const messages = error.issues
    .filter((issue) => full.every((segment, i) => issue.path[i] === segment))
    .map((issue) => issue.message);
  // The same sentence twice (two entries of a list, say) is said once.
  return [...new Set(messages)];
}
