import {
  buildPath,
  type Endpoint,
  type EndpointCallInput,
  type EndpointResult,
  type HttpMethod,
} from './endpoint.js';
import { type ErrorCode, ErrorEnvelope, type ValidationIssue } from './errors.js';

/**
 * The one way to call an endpoint from its descriptor, shared by the dashboard, the CLI and the
 * server's tests: the descriptor's path template is filled, the query and body are written the
 * way the server reads them, and the answer is read against the descriptor (its success status and
 * response schema) or the error envelope. Each client brings its own transport (the dashboard the
 * browser's fetch with its cookies, the CLI fetch with the Agent's token, tests the app in memory).
 */

/** The input of a call: required exactly when the endpoint has path parameters or a body. */
export type EndpointCallArgs<E extends Endpoint> = E['params'] extends object
  ? [input: EndpointCallInput<E>]
  : E['body'] extends object
    ? [input: EndpointCallInput<E>]
    : [input?: EndpointCallInput<E>];

/** What a call may fail with besides the service's own codes. */
export type CallErrorCode = ErrorCode | 'network_error' | 'invalid_response';

/** Why a call failed, as data: what each client turns into its own message. */
export interface CallFailure {
  readonly error: CallErrorCode;
  /** The HTTP status; 0 when no answer arrived. */
  readonly status: number;
  /** The service's reason, in a sentence (statuses below 500 only). */
  readonly detail?: string;
  readonly issues: readonly ValidationIssue[];
  /** What the transport threw, for `network_error`. */
  readonly cause?: unknown;
}

/** A failed call: the envelope's code, detail and issues, or a client-side failure. */
export class CallError extends Error {
  override name = 'CallError';
  readonly error: CallErrorCode;
  readonly status: number;
  readonly detail?: string;
  readonly issues: readonly ValidationIssue[];
  constructor(failure: CallFailure, message = `${failure.status} ${failure.error}`) {
    super(message, failure.cause === undefined ? {} : { cause: failure.cause });
    this.error = failure.error;
    this.status = failure.status;
    if (failure.detail !== undefined) this.detail = failure.detail;
    this.issues = failure.issues;
  }
}

/** The request of one call: a path (with its query) relative to the service, and fetch's init. */
export interface EndpointRequest {
  readonly method: HttpMethod;
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body?: string;
}

type LooseInput = {
  params?: Record<string, string>;
  query?: Record<string, string | number | boolean | readonly string[] | undefined>;
  body?: unknown;
};

/**
 * The request for a call: the path template filled (each value URL-encoded), the query with a list
 * as the parameter repeated (`tag=a&tag=b`) and empty values left out, the body as JSON.
 */
export function endpointRequest<E extends Endpoint>(
  endpoint: E,
  ...[input]: EndpointCallArgs<E>
): EndpointRequest {
  const { params, query, body } = (input ?? {}) as LooseInput;
  let url = buildPath(endpoint.path, params);
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) {
    for (const item of [value].flat()) {
      if (item !== undefined && item !== '') search.append(name, String(item));
    }
  }
  if (search.size > 0) url += `?${search}`;
  const sendsBody = endpoint.body !== undefined && body !== undefined;
  return {
    method: endpoint.method,
    url,
    headers: {
      accept: 'application/json',
      ...(sendsBody && { 'content-type': 'application/json' }),
    },
    ...(sendsBody && { body: JSON.stringify(body) }),
  };
}

export type EndpointAnswer<E extends Endpoint> =
  | { readonly ok: true; readonly data: EndpointResult<E> }
  | { readonly ok: false; readonly failure: CallFailure };

/**
 * Reads an answer against the descriptor: the success status with a body its response schema
 * accepts (parsed, never cast), or the service's error envelope; anything else (a proxy's HTML
 * page, a body the schema refuses) is `invalid_response`.
 */
export function readAnswer<E extends Endpoint>(
  endpoint: E,
  status: number,
  text: string,
): EndpointAnswer<E> {
  if (status !== endpoint.response.status) {
    const envelope = ErrorEnvelope.safeParse(parseJson(text));
    if (!envelope.success) {
      return { ok: false, failure: { error: 'invalid_response', status, issues: [] } };
    }
    const { error, detail, issues } = envelope.data;
    return {
      ok: false,
      failure: { error, status, issues: issues ?? [], ...(detail !== undefined && { detail }) },
    };
  }
  const schema = endpoint.response.body;
  if (!schema) return { ok: true, data: undefined as EndpointResult<E> };
  const parsed = schema.safeParse(parseJson(text));
  if (!parsed.success) {
    return { ok: false, failure: { error: 'invalid_response', status, issues: [] } };
  }
  return { ok: true, data: parsed.data as EndpointResult<E> };
}

/** A fetch-like transport: what the dashboard, the CLI and the tests each pass in. */
export type Transport = (
  url: string,
  init: {
    method: string;
    headers: Record<string, string>;
    body?: string;
    signal?: AbortSignal;
  },
) => Promise<{ readonly status: number; text(): Promise<string> }>;

export interface CallOptions {
  readonly transport: Transport;
  /** Resolves the request's path against this URL (the CLI's `SVC_API_URL`); else sent as is. */
  readonly baseUrl?: string | URL;
  readonly signal?: AbortSignal;
  /** The error to throw for a failure (each client words its own); a `CallError` by default. */
  readonly toError?: (failure: CallFailure, where: string) => Error;
}

/**
 * Calls one endpoint: builds the request from the descriptor, sends it through the transport and
 * reads the answer. Resolves with the parsed success body; throws `options.toError`'s error (a
 * `CallError` by default) for an error envelope, an unexpected answer or a failed transport. An
 * aborted call rethrows the abort.
 */
export async function callEndpoint<E extends Endpoint>(
  endpoint: E,
  input: EndpointCallInput<E> | undefined,
  options: CallOptions,
): Promise<EndpointResult<E>> {
  const request = endpointRequest(endpoint, ...([input] as EndpointCallArgs<E>));
  const url = options.baseUrl ? new URL(request.url, options.baseUrl).href : request.url;
  const where = `${endpoint.method} ${url}`;
  const fail = (failure: CallFailure) =>
    options.toError ? options.toError(failure, where) : new CallError(failure);
  let status = 0;
  let text: string;
  try {
    const response = await options.transport(url, {
      method: request.method,
      headers: request.headers,
      ...(request.body !== undefined && { body: request.body }),
      ...(options.signal && { signal: options.signal }),
    });
    status = response.status;
    text = await response.text();
  } catch (cause) {
    if (options.signal?.aborted) throw cause;
    throw fail({ error: 'network_error', status, issues: [], cause });
  }
  const answer = readAnswer(endpoint, status, text);
  if (!answer.ok) throw fail(answer.failure);
  return answer.data;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
