import type { AppProvider } from '@svc/contract';
import * as oidc from 'openid-client';
import type { Config } from '../config/config.js';
import type { Secrets } from '../config/secrets.js';
import { PROVIDERS } from './providers.js';

/** One configured provider: openid-client's configuration plus what the plain API calls need. */
export interface ProviderClient {
  readonly provider: AppProvider;
  readonly oidc: oidc.Configuration;
  readonly clientId: string;
  readonly clientSecret: string;
  /** The provider's endpoint URLs from `Config` (`api` for `code` and `music`). */
  readonly urls: Readonly<Record<string, string>>;
  /** `fetch` with the timeout applied, for identity and revocation calls. */
  readonly fetch: (url: string, init?: RequestInit) => Promise<Response>;
}

/** Which of a provider's endpoints a call went to, as `/metrics` names it. */
export type ProviderEndpoint = 'token' | 'userinfo' | 'revocation' | 'api';

const isLoopbackHttp = (url: string) =>
  /^http:\/\/(127\.0\.0\.1|localhost|\[::1\])(:\d+)?(\/|$)/.test(url);

/**
 * GitHub answers token errors with HTTP 200 and an `error` field; openid-client only parses 4xx
 * bodies as OAuth errors. Rewriting them to 400 makes them `ResponseBodyError`s like everyone
 * else's, so one classifier serves all providers (oauth-notes.md §2.2).
 */
async function errorsAsStatus400(response: Response): Promise<Response> {
  if (response.status !== 200) return response;
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const isError = typeof body === 'object' && body !== null && 'error' in body;
  return new Response(text, {
    status: isError ? 400 : 200,
    headers: response.headers,
  });
}

/**
 * openid-client configurations built from static metadata (no discovery), one per provider with
 * a client id and secret. `code` and `music` are plain OAuth 2.0: their issuer is the origin of
 * the authorization endpoint, so an `iss` in a callback (RFC 9207) still pins the provider.
 */
export function createProviderClients(
  config: Config,
  secrets: Secrets,
  fetchImpl: typeof fetch = fetch,
  /** Told how long each call to a provider took (`/metrics`); `endpoint` names no URL. */
  observe: (provider: AppProvider, endpoint: ProviderEndpoint, seconds: number) => void = () => {},
): Partial<Record<AppProvider, ProviderClient>> {
  const timeoutMs = config.timing.refreshTimeoutMs;
  const out: Partial<Record<AppProvider, ProviderClient>> = {};
  for (const provider of Object.keys(PROVIDERS) as AppProvider[]) {
    const endpoints = config.providers[provider];
    const clientSecret = secrets.oauthClientSecrets[provider];
    if (!endpoints.clientId || !clientSecret) continue;
    const urls = endpoints.urls;
    const authorization = urls.authorization as string;
    const metadata: oidc.ServerMetadata = {
      issuer: urls.issuer ?? new URL(authorization).origin,
      authorization_endpoint: authorization,
      token_endpoint: urls.token as string,
      ...(urls.revocation && { revocation_endpoint: urls.revocation }),
      ...(urls.jwks && { jwks_uri: urls.jwks }),
      ...(urls.userinfo && { userinfo_endpoint: urls.userinfo }),
    };
    // GitHub takes the client secret in the body; Google and Spotify take HTTP Basic.
    const auth =
      provider === 'code'
        ? oidc.ClientSecretPost(clientSecret)
        : oidc.ClientSecretBasic(clientSecret);
    const configuration = new oidc.Configuration(metadata, endpoints.clientId, undefined, auth);
    configuration.timeout = timeoutMs / 1000;
    const endpointOf = (url: string): ProviderEndpoint =>
      url === metadata.token_endpoint
        ? 'token'
        : url === metadata.userinfo_endpoint
          ? 'userinfo'
          : url === metadata.revocation_endpoint
            ? 'revocation'
            : 'api';
    const timedFetch = async (url: string, init: RequestInit = {}) => {
      const startedAt = performance.now();
      try {
        return await fetchImpl(url, {
          ...init,
          signal: init.signal
            ? AbortSignal.any([init.signal, AbortSignal.timeout(timeoutMs)])
            : AbortSignal.timeout(timeoutMs),
        });
      } finally {
        observe(provider, endpointOf(url), (performance.now() - startedAt) / 1000);
      }
    };
    configuration[oidc.customFetch] = async (url, options) => {
      const response = await timedFetch(url, options as RequestInit);
      return provider === 'code' && url === metadata.token_endpoint
        ? errorsAsStatus400(response)
        : response;
    };
    // Only test and local stand-ins listen on plain-HTTP loopback addresses.
    if (Object.values(urls).every(isLoopbackHttp)) oidc.allowInsecureRequests(configuration);
    out[provider] = {
      provider,
      oidc: configuration,
      clientId: endpoints.clientId,
      clientSecret,
      urls,
      fetch: timedFetch,
    };
  }
  return out;
}
