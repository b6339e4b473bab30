import { z } from 'zod';
import { SESSION_COOKIE } from './common.js';
import type { Endpoint } from './endpoint.js';
import { type ErrorCode, ErrorEnvelope, errorStatus } from './errors.js';

type JsonObject = Record<string, unknown>;

const toSchema = (schema: z.ZodType, io: 'input' | 'output'): JsonObject => {
  // Refinements and transforms have no JSON Schema form; their base type is still described.
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' });
  return rest;
};

const SECURITY: Record<Endpoint['auth'], Record<string, never[]>[]> = {
  none: [],
  session: [{ session: [] }, { apiToken: [] }],
  'session-only': [{ session: [] }],
  agent: [{ agentToken: [] }],
  'session-or-agent': [{ session: [] }, { apiToken: [] }, { agentToken: [] }],
};

/** Codes every endpoint of a kind can answer with, on top of its own list. */
function implicitErrors(endpoint: Endpoint): ErrorCode[] {
  // Any request can be refused before it reaches an endpoint (see the server's http-server.ts).
  const codes: ErrorCode[] = [
    'internal_error',
    'unavailable',
    'headers_too_large',
    'request_timeout',
  ];
  if (endpoint.params || endpoint.query || endpoint.body) codes.push('invalid_request');
  if (endpoint.params) codes.push('not_found');
  if (endpoint.body) codes.push('payload_too_large');
  if (endpoint.auth !== 'none') codes.push('unauthorized', 'forbidden');
  // A `read` personal access token on anything but GET, or on a GET that needs `write`.
  const needsWrite = endpoint.method !== 'GET' || endpoint.tokenScope === 'write';
  if (needsWrite && (endpoint.auth === 'session' || endpoint.auth === 'session-or-agent')) {
    codes.push('insufficient_scope');
  }
  return codes;
}

function parameters(endpoint: Endpoint): JsonObject[] {
  const out: JsonObject[] = [];
  for (const [where, schema] of [
    ['path', endpoint.params],
    ['query', endpoint.query],
  ] as const) {
    if (!schema) continue;
    for (const [name, field] of Object.entries(schema.shape)) {
      out.push({
        name,
        in: where,
        required: where === 'path' || !(field as z.ZodType).safeParse(undefined).success,
        schema: toSchema(field as z.ZodType, 'input'),
      });
    }
  }
  return out;
}

function responses(endpoint: Endpoint): JsonObject {
  const { status, body, description } = endpoint.response;
  const out: JsonObject = {
    [status]: {
      description: description ?? endpoint.summary,
      ...(body && { content: { 'application/json': { schema: toSchema(body, 'output') } } }),
    },
  };
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set([...implicitErrors(endpoint), ...endpoint.errors])) {
    const codeStatus = errorStatus[code];
    byStatus.set(codeStatus, [...(byStatus.get(codeStatus) ?? []), code]);
  }
  for (const [codeStatus, codes] of byStatus) {
    out[codeStatus] = {
      description: `Error: ${codes.join(', ')}`,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
    };
  }
  return out;
}

/** The OpenAPI 3.1 document for a list of endpoints, generated from their schemas. */
export function buildOpenApiDocument(
  endpoints: readonly Endpoint[],
  info: { title: string; version: string; serverUrl?: string },
): JsonObject {
  const paths: Record<string, JsonObject> = {};
  for (const endpoint of endpoints) {
    const operation: JsonObject = {
      operationId: endpoint.id,
      summary: endpoint.summary,
      tags: [endpoint.tag],
      parameters: parameters(endpoint),
      responses: responses(endpoint),
      security: SECURITY[endpoint.auth],
    };
    if (endpoint.body) {
      operation.requestBody = {
        required: true,
        content: { 'application/json': { schema: toSchema(endpoint.body, 'input') } },
      };
    }
    paths[endpoint.path] = { ...paths[endpoint.path], [endpoint.method.toLowerCase()]: operation };
  }
  return {
    openapi: '3.1.0',
    info: { title: info.title, version: info.version },
    ...(info.serverUrl && { servers: [{ url: info.serverUrl }] }),
    paths,
    components: {
      schemas: { ErrorEnvelope: toSchema(ErrorEnvelope, 'output') },
      securitySchemes: {
        session: { type: 'apiKey', in: 'cookie', name: SESSION_COOKIE },
        agentToken: {
          type: 'http',
          scheme: 'bearer',
          description: "An Agent's HMAC token, `svc1.<agentId>.<gen>.<mac>`",
        },
        apiToken: {
          type: 'http',
          scheme: 'bearer',
          description:
            'A personal access token, `svcp_…` (`read` scope: GET endpoints only), acting as its user',
        },
      },
    },
  };
}
