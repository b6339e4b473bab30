import { z } from 'zod';
import { Id, Timestamp } from './common.js';
import { defineEndpoint } from './endpoint.js';

/** Every personal access token starts with this, so a leaked one is easy to recognize. */
export const API_TOKEN_PREFIX = 'svcp_';

/** `read`: GET endpoints only; `write`: every endpoint a token may use. */
export const ApiTokenScope = z.enum(['read', 'write']);
export type ApiTokenScope = z.infer<typeof ApiTokenScope>;

/** A personal access token as listed: never the token itself. */
export const ApiToken = z.object({
  id: Id,
  name: z.string(),
  scope: ApiTokenScope,
  createdAt: Timestamp,
  expiresAt: Timestamp.nullable(),
  lastUsedAt: Timestamp.nullable(),
});
export type ApiToken = z.infer<typeof ApiToken>;

export const createApiToken = defineEndpoint({
  id: 'createApiToken',
  method: 'POST',
  path: '/api/me/tokens',
  auth: 'session-only',
  tag: 'accounts',
  summary:
    'Create a personal access token for scripts (`Authorization: Bearer svcp_…`); the token is shown only in this answer.',
  body: z.object({
    name: z.string().trim().min(1, 'Give the token a name').max(100),
    scope: ApiTokenScope,
    /** When the token stops working; none: until revoked. */
    expiresAt: Timestamp.optional(),
  }),
  response: { status: 201, body: ApiToken.extend({ token: z.string() }) },
  errors: [],
});

export const listApiTokens = defineEndpoint({
  id: 'listApiTokens',
  method: 'GET',
  path: '/api/me/tokens',
  auth: 'session',
  tag: 'accounts',
  summary: "The signed-in user's personal access tokens (revoked and expired ones are gone).",
  response: { status: 200, body: z.object({ tokens: z.array(ApiToken) }) },
  errors: [],
});

export const revokeApiToken = defineEndpoint({
  id: 'revokeApiToken',
  method: 'DELETE',
  path: '/api/me/tokens/{id}',
  auth: 'session',
  tag: 'accounts',
  summary: 'Revoke a personal access token: it answers 401 from then on.',
  params: z.object({ id: Id }),
  response: { status: 204 },
  errors: [],
});

export const apiTokenEndpoints = [createApiToken, listApiTokens, revokeApiToken] as const;
