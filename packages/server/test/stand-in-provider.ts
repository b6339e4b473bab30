import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import Provider, { type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import { mountStandInApi } from './stand-in-api.js';

/** Which real provider a stand-in behaves like. */
export type StandInKind = 'suite' | 'code' | 'music';

/** Faults the stand-in's token endpoint injects until cleared. */
export interface TokenFaults {
  /** Answer after this long (the service's timeout is 10 s). */
  delayMs?: number;
  /** Answer with this status and no OAuth body (500, 503) or `{error}` for 429. */
  status?: number;
  /** Answer 400 (401 for `invalid_client`) with this OAuth error. */
  error?: 'invalid_grant' | 'invalid_client' | 'unauthorized_client';
  /** Runs before the request is handled (tests change the database mid-refresh). */
  before?: () => Promise<void>;
  /** Revocation endpoints (RFC 7009 and the code API) answer after this long. */
  revocationDelayMs?: number;
  /** Revocation endpoints answer with this status. */
  revocationStatus?: number;
}

export interface StandIn {
  readonly kind: StandInKind;
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly provider: Provider;
  /** Calls to `/token`, to `/token/revocation` and to the code API's token deletion. */
  readonly counts: { token: number; revocation: number };
  /** Every authorize request's query, as sent. */
  readonly authorizeRequests: URLSearchParams[];
  faults: TokenFaults;
  /** `SUITE_*` / `CODE_*` / `MUSIC_*` variables that point the service here. */
  env(): Record<string, string>;
  close(): Promise<void>;
}

const SCOPES: Record<StandInKind, string[]> = {
  suite: [
    'openid',
    'email',
    'profile',
    ...['gmail.send', 'calendar', 'spreadsheets', 'documents', 'contacts', 'drive.file'].map(
      (s) => `https://www.googleapis.com/auth/${s}`,
    ),
  ],
  code: ['repo', 'user', 'read:org'],
  music: [
    'user-read-private',
    'user-read-email',
    'playlist-read-private',
    'playlist-read-collaborative',
    'playlist-modify-public',
    'playlist-modify-private',
    'user-read-playback-state',
    'user-modify-playback-state',
    'user-read-recently-played',
    'user-top-read',
  ],
};

/**
 * oidc-provider configured like one of the three providers: Google-like (OIDC, ID token with
 * e-mail, refresh tokens that do not rotate, RFC 7009 revocation), Spotify-like (plain OAuth,
 * rotating refresh tokens with reuse detection, `/v1/me`) or GitHub-like (no refresh token,
 * token errors with HTTP 200, comma-separated scopes, `/user`, `/user/emails` and
 * `DELETE /applications/{client_id}/token`). PKCE is required and redirect URIs match exactly.
 */
export async function startStandIn(
  kind: StandInKind,
  options: { redirectUri: string; accessTokenTtlSeconds?: number },
): Promise<StandIn> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = `${kind}-client`;
  const clientSecret = `${kind}-secret-${Math.random().toString(36).slice(2)}`;
  const configuration: Configuration = {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [options.redirectUri],
        response_types: ['code'],
        grant_types:
          kind === 'code' ? ['authorization_code'] : ['authorization_code', 'refresh_token'],
        token_endpoint_auth_method: kind === 'code' ? 'client_secret_post' : 'client_secret_basic',
      },
    ],
    pkce: { required: () => true },
    // Google and Spotify issue refresh tokens without `offline_access`.
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: kind === 'music',
    scopes: SCOPES[kind],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    conformIdTokenClaims: false,
    features: { revocation: { enabled: true }, devInteractions: { enabled: true } },
    ttl: {
      AccessToken: options.accessTokenTtlSeconds ?? (kind === 'code' ? 365 * 86400 : 3600),
      AuthorizationCode: 600,
      RefreshToken: 30 * 86400,
      Grant: 30 * 86400,
      Session: 3600,
      Interaction: 600,
    },
    findAccount: async (_ctx, sub) => ({
      accountId: sub,
      claims: async () => ({ sub, email: `${sub}@example.test`, email_verified: true, name: sub }),
    }),
    cookies: { keys: ['stand-in-cookie-key'] },
  };
  const provider = new Provider(issuer, configuration);
  const standIn: StandIn = {
    kind,
    issuer,
    clientId,
    clientSecret,
    provider,
    counts: { token: 0, revocation: 0 },
    authorizeRequests: [],
    faults: {},
    env: () => envFor(kind, issuer, clientId, clientSecret),
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        // A faulted request may still be sleeping; keep-alive sockets would hold close open.
        server.closeAllConnections();
      }),
  };
  provider.use(faultInjection(standIn));
  mountStandInApi(standIn);
  server.on('request', provider.callback());
  return standIn;
}

function faultInjection(standIn: StandIn) {
  return async (ctx: KoaContextWithOIDC, next: () => Promise<void>) => {
    if (ctx.path === '/auth' && ctx.method === 'GET') {
      standIn.authorizeRequests.push(new URLSearchParams(ctx.querystring));
      // oidc-provider knows no `select_account` prompt; Google does.
      const query = new URLSearchParams(ctx.querystring);
      const prompt = query.get('prompt');
      if (prompt) query.set('prompt', prompt.replace('select_account', '').trim() || 'consent');
      // GitHub reads comma-separated scopes; oidc-provider reads space-separated ones.
      const scope = query.get('scope');
      if (standIn.kind === 'code' && scope) query.set('scope', scope.replaceAll(',', ' '));
      ctx.querystring = query.toString();
    }
    if (ctx.path === '/token/revocation' || /^\/applications\/[^/]+\/token$/.test(ctx.path)) {
      if (ctx.path === '/token/revocation') standIn.counts.revocation += 1;
      if (standIn.faults.revocationDelayMs) await sleep(standIn.faults.revocationDelayMs);
      if (standIn.faults.revocationStatus) {
        ctx.status = standIn.faults.revocationStatus;
        return;
      }
    }
    if (ctx.path !== '/token' || ctx.method !== 'POST') return next();
    standIn.counts.token += 1;
    const faults = standIn.faults;
    if (faults.before) await faults.before();
    if (faults.delayMs) await sleep(faults.delayMs);
    if (faults.status) {
      ctx.status = faults.status;
      ctx.body = faults.status === 429 ? { error: 'rate_limited' } : 'unavailable';
      return;
    }
    if (faults.error) {
      ctx.status = faults.error === 'invalid_client' ? 401 : 400;
      ctx.body = { error: faults.error };
    } else await next();
    if (standIn.kind !== 'code') return;
    // GitHub answers token errors with HTTP 200, and lists granted scopes with commas.
    const body = ctx.body as { error?: string; scope?: string } | undefined;
    if (ctx.status >= 400 && body?.error) ctx.status = 200;
    if (body?.scope) body.scope = body.scope.replaceAll(' ', ',');
  };
}

function envFor(kind: StandInKind, issuer: string, clientId: string, secret: string) {
  const prefix = kind.toUpperCase();
  const common = {
    [`${prefix}_CLIENT_ID`]: clientId,
    [`${prefix}_CLIENT_SECRET`]: secret,
    [`${prefix}_AUTHORIZATION_URL`]: `${issuer}/auth`,
    [`${prefix}_TOKEN_URL`]: `${issuer}/token`,
  };
  if (kind !== 'suite') return { ...common, [`${prefix}_API_URL`]: issuer };
  return {
    ...common,
    SUITE_ISSUER: issuer,
    SUITE_REVOCATION_URL: `${issuer}/token/revocation`,
    SUITE_JWKS_URL: `${issuer}/jwks`,
    SUITE_USERINFO_URL: `${issuer}/me`,
  };
}
