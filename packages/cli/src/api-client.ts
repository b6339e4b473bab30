import {
  buildPath,
  type Endpoint,
  type EndpointResult,
  type ErrorCode,
  ErrorEnvelope,
} from '@svc/contract';
import type { AgentCredentials } from './agent-env.js';

/** A service answer other than the endpoint's success status. */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly status: number,
    readonly code: ErrorCode | undefined,
  ) {
    super(`the service answered ${status}${code ? ` ${code}` : ''}`);
  }
}

/**
 * Calls one contract endpoint with the Agent's HMAC token and parses the answer with the
 * endpoint's own response schema.
 */
export async function callApi<E extends Endpoint>(
  fetchImpl: typeof fetch,
  credentials: AgentCredentials,
  endpoint: E,
  params: Record<string, string> = {},
): Promise<EndpointResult<E>> {
  const url = new URL(buildPath(endpoint.path, params), credentials.apiUrl);
  const response = await fetchImpl(url, {
    method: endpoint.method,
    headers: { authorization: `Bearer ${credentials.hmacToken}`, accept: 'application/json' },
  });
  const text = await response.text();
  if (response.status !== endpoint.response.status) {
    const envelope = ErrorEnvelope.safeParse(safeJson(text));
    throw new ApiError(response.status, envelope.success ? envelope.data.error : undefined);
  }
  const schema = endpoint.response.body;
  return (schema ? schema.parse(safeJson(text)) : undefined) as EndpointResult<E>;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
