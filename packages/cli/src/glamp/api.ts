import type { Endpoint, EndpointResult } from '@svc/contract';
import { buildPath, ErrorEnvelope } from '@svc/contract';
import type { AgentCredentials } from '../agent-env.js';

/** A service answer that is not a success: its code and issues, printable as they are. */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly status: number,
    readonly envelope: ErrorEnvelope | undefined,
  ) {
    const issues =
      envelope?.issues?.map((i) => `\n  - ${i.path.join('.')}: ${i.message}`).join('') ?? '';
    super(`the service answered ${status} ${envelope?.error ?? ''}${issues}`.trim());
  }
}

/** Calls contract endpoints with the Agent's token and parses the answers with their schemas. */
export function createApiClient(credentials: AgentCredentials) {
  const base = credentials.apiUrl.replace(/\/+$/, '');
  return async function call<E extends Endpoint>(
    endpoint: E,
    input: { params?: Record<string, string>; body?: unknown } = {},
  ): Promise<EndpointResult<E>> {
    const res = await fetch(`${base}${buildPath(endpoint.path, input.params)}`, {
      method: endpoint.method,
      headers: {
        authorization: `Bearer ${credentials.hmacToken}`,
        ...(input.body !== undefined && { 'content-type': 'application/json' }),
      },
      ...(input.body !== undefined && { body: JSON.stringify(input.body) }),
    });
    const text = await res.text();
    if (res.status !== endpoint.response.status) {
      const parsed = ErrorEnvelope.safeParse(text ? JSON.parse(text) : undefined);
      throw new ApiError(res.status, parsed.success ? parsed.data : undefined);
    }
    const schema = endpoint.response.body;
    return (schema ? schema.parse(JSON.parse(text)) : undefined) as EndpointResult<E>;
  };
}
export type ApiClient = ReturnType<typeof createApiClient>;
