import {
  CallError,
  type CallErrorCode,
  type CallFailure,
  callEndpoint as callWith,
  type Endpoint,
  type EndpointCallInput,
  type EndpointResult,
  parseRequestPart,
  type ValidationIssue,
} from '@svc/contract';
import { errorSentence } from './error-messages.js';

/** What a call may fail with besides the service's own codes. */
export type ClientErrorCode = CallErrorCode;

/**
 * A failed call: the service's `{error, detail, issues}` envelope, or a client-side failure (the body
 * did not pass the contract schema before sending, the network failed, or the answer did not
 * match the contract), worded for the person (`errorSentence`). `issues` paths start with
 * `params`, `query` or `body`, like the server's.
 */
export class ApiError extends CallError {
  override name = 'ApiError';
  /**
   * The issues the form shows next to their fields (`issuesAt` notes each it hands out), so its
   * `ErrorMessage` says only the rest: one message per error.
   */
  readonly shownAtFields = new Set<ValidationIssue>();
  constructor(failure: CallFailure) {
    super(failure, errorSentence(failure.error, failure.issues, failure.detail));
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
 * Calls one endpoint of the service with the contract's caller over the browser's `fetch`, its
 * session cookie sent (same origin). The body is checked with the endpoint's schema before it is
 * sent (a failure throws the same `invalid_request` shape the server would), and the answer is
 * parsed with the response schema, never cast.
 */
export async function callEndpoint<E extends Endpoint>(
  endpoint: E,
  input: CallInput<E>,
  options: CallOptions = {},
): Promise<EndpointResult<E>> {
  if (endpoint.body) {
    // The server's own check (well-formed text, then the schema), so the issues are the same.
    const checked = parseRequestPart(endpoint.body, (input as { body?: unknown }).body, 'body');
    if (!checked.success) {
      throw new ApiError({ error: 'invalid_request', status: 400, issues: checked.issues });
    }
  }
  const fetchImpl = options.fetch ?? fetch;
  return callWith(endpoint, input, {
    transport: (url, init) => fetchImpl(url, { ...init, credentials: 'same-origin' }),
    ...(options.signal && { signal: options.signal }),
    toError: (failure) => new ApiError(failure),
  });
}

/**
 * The issues of one field (path after `body`), for showing next to it. Called as the form renders
 * its fields, before its `ErrorMessage`, which then leaves these out.
 */
export function issuesAt(error: unknown, ...path: (string | number)[]): string[] {
  if (!(error instanceof ApiError)) return [];
  const full = ['body', ...path];
  const issues = error.issues.filter((issue) =>
    full.every((segment, i) => issue.path[i] === segment),
  );
  for (const issue of issues) error.shownAtFields.add(issue);
  const messages = issues.map((issue) => issue.message);
  // The same sentence twice (two entries of a list, say) is said once.
  return [...new Set(messages)];
}
