import { z } from 'zod';
import { Id, Timestamp } from './common.js';
import { defineEndpoint } from './endpoint.js';

/** The three OAuth providers, by neutral names (docs/reference.md#app-connections). */
export const AppProvider = z.enum(['suite', 'code', 'music']);
export type AppProvider = z.infer<typeof AppProvider>;

export const ConnectionStatus = z.enum(['active', 'error']);
export type ConnectionStatus = z.infer<typeof ConnectionStatus>;

/** The public projection of a provider registry entry: no OAuth URLs, no secrets. */
export const AppProviderEntry = z.object({
  provider: AppProvider,
  displayName: z.string(),
  description: z.string(),
  envVar: z.string(),
  accountEnvVar: z.string(),
  tool: z.object({ name: z.string(), installCmd: z.string(), checkCmd: z.string() }),
  exampleCommand: z.string(),
  tokenLifetime: z.string(),
  /** Labels of the optional scopes, by scope identifier (empty when scopes are fixed). */
  scopeLabels: z.record(z.string(), z.string()),
  /**
   * Whether the operator configured this provider's OAuth client on the service: only then can
   * it be connected (else `authorizeApp` answers `provider_not_configured`).
   */
  configured: z.boolean(),
});
export type AppProviderEntry = z.infer<typeof AppProviderEntry>;

/** A connection as the API shows it: never any token. */
export const AppConnection = z.object({
  id: Id,
  accountId: Id,
  provider: AppProvider,
  status: ConnectionStatus,
  scopes: z.array(z.string()),
  providerSubject: z.string(),
  providerAccountId: z.string(),
  providerAccountName: z.string(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type AppConnection = z.infer<typeof AppConnection>;

export const ConnectionToken = z.object({
  accessToken: z.string(),
  expiresAt: Timestamp,
  provider: AppProvider,
  providerSubject: z.string(),
  providerAccountId: z.string(),
  providerAccountName: z.string(),
  scopes: z.array(z.string()),
});
export type ConnectionToken = z.infer<typeof ConnectionToken>;

export const listAppProviders = defineEndpoint({
  id: 'listAppProviders',
  method: 'GET',
  path: '/api/apps/providers',
  auth: 'session-or-agent',
  tag: 'apps',
  summary:
    'The provider registry (public fields only), each with whether the operator configured it; ' +
    'cacheable privately for 300 s.',
  response: { status: 200, body: z.array(AppProviderEntry) },
  errors: [],
});

export const authorizeApp = defineEndpoint({
  id: 'authorizeApp',
  method: 'GET',
  path: '/api/apps/authorize',
  auth: 'session-only',
  tag: 'apps',
  summary:
    "Starts a connection: 302 to the provider's consent screen with a state and PKCE, and sets " +
    'the cookie that binds the flow to this browser (sent only to the callback, 10 minutes).',
  query: z.object({
    /** An unknown provider is a 400 `invalid_request` (docs/reference.md#app-connections). */
    provider: AppProvider,
    /** Comma-separated optional scopes (`suite`); `code` and `music` have fixed scopes. */
    scopes: z.string().max(2_000).optional(),
    accountId: Id.optional(),
  }),
  response: { status: 302, description: "Redirect to the provider's consent screen" },
  errors: ['scope_not_allowed', 'provider_not_configured'],
});

export const appCallback = defineEndpoint({
  id: 'appCallback',
  method: 'GET',
  path: '/api/apps/callback',
  auth: 'none',
  tag: 'apps',
  summary:
    'The redirect target of every provider: consumes the state, checks the browser binding ' +
    'cookie `authorize` set (and clears it), exchanges the code and answers an HTML page that ' +
    'tells the dashboard (status 400 when the attempt failed).',
  response: { status: 200, description: 'HTML page that closes the popup' },
  errors: [],
});

export const appCallbackScript = defineEndpoint({
  id: 'appCallbackScript',
  method: 'GET',
  path: '/api/apps/callback.js',
  auth: 'none',
  tag: 'apps',
  summary: "The callback page's script (a same-origin file, so the page needs no inline script).",
  response: { status: 200, description: 'JavaScript' },
  errors: [],
});

export const listAppConnections = defineEndpoint({
  id: 'listAppConnections',
  method: 'GET',
  path: '/api/apps',
  auth: 'session-or-agent',
  tag: 'apps',
  summary: "Connections of the caller's accounts (`accountId` filters), or of the Agent's account.",
  query: z.object({ accountId: Id.optional() }),
  response: { status: 200, body: z.array(AppConnection) },
  errors: [],
});

export const getConnectionToken = defineEndpoint({
  id: 'getConnectionToken',
  // The provider's access token acts with full rights there, and a refresh writes.
  tokenScope: 'write',
  method: 'GET',
  path: '/api/apps/{id}/token',
  auth: 'session-or-agent',
  tag: 'apps',
  summary:
    'A fresh access token: the cached one while more than min(5 minutes, half its lifetime) ' +
    'remains, else refreshed.',
  params: z.object({ id: Id }),
  response: { status: 200, body: ConnectionToken },
  errors: ['connection_error', 'refresh_unavailable'],
});

export const deleteAppConnection = defineEndpoint({
  id: 'deleteAppConnection',
  method: 'DELETE',
  path: '/api/apps/{id}',
  auth: 'session',
  tag: 'apps',
  summary: 'Revokes at the provider (best effort, at most 10 s) and removes the connection.',
  params: z.object({ id: Id }),
  response: { status: 204 },
  errors: [],
});

export const appEndpoints = [
  listAppProviders,
  authorizeApp,
  appCallback,
  appCallbackScript,
  listAppConnections,
  getConnectionToken,
  deleteAppConnection,
] as const;
