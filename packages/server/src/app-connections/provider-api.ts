import * as oidc from 'openid-client';
import type { ProviderClient } from './oauth-client.js';
import { PROVIDERS } from './providers.js';

/** Who the user is at the provider, as a connection records it. */
export interface ProviderIdentity {
  readonly providerSubject: string;
  readonly providerAccountId: string;
  readonly providerAccountName: string;
}

export class ProviderApiError extends Error {
  override name = 'ProviderApiError';
}

async function getJson(client: ProviderClient, path: string, accessToken: string) {
  const response = await client.fetch(new URL(path, `${client.urls.api}/`).toString(), {
    headers: {
      authorization: `Bearer ${accessToken}`,
      accept: 'application/json',
      // GitHub refuses API calls without one.
      'user-agent': 'svc-control-plane',
    },
  });
  if (!response.ok) throw new ProviderApiError(`GET ${path} answered ${response.status}`);
  return (await response.json()) as unknown;
}

const str = (value: unknown) =>
  typeof value === 'string' || typeof value === 'number' ? String(value) : undefined;

/**
 * Reads the identity: `suite` from the ID token (`sub`, `email`), `code` from `/user` and the
 * primary verified address of `/user/emails`, `music` from `/v1/me` (e-mail, else display name,
 * else id: development-mode apps no longer get the e-mail).
 */
export async function readIdentity(
  client: ProviderClient,
  tokens: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers,
): Promise<ProviderIdentity> {
  const source = PROVIDERS[client.provider].identity;
  if (source === 'id-token') {
    const claims = tokens.claims();
    const sub = str(claims?.sub);
    if (!sub) throw new ProviderApiError('no ID token subject');
    return {
      providerSubject: sub,
      providerAccountId: sub,
      providerAccountName: str(claims?.email) ?? sub,
    };
  }
  if (source === 'code-api') {
    const user = (await getJson(client, 'user', tokens.access_token)) as Record<string, unknown>;
    const id = str(user.id);
    if (!id) throw new ProviderApiError('no user id');
    const emails = await getJson(client, 'user/emails', tokens.access_token).catch(() => []);
    const primary = Array.isArray(emails)
      ? emails.find((e) => e && typeof e === 'object' && e.primary && e.verified)
      : undefined;
    const name = str(primary?.email) ?? str(user.login) ?? id;
    return { providerSubject: id, providerAccountId: id, providerAccountName: name };
  }
  const me = (await getJson(client, 'v1/me', tokens.access_token)) as Record<string, unknown>;
  const id = str(me.id);
  if (!id) throw new ProviderApiError('no user id');
  const name = str(me.email) ?? str(me.display_name) ?? id;
  return { providerSubject: id, providerAccountId: id, providerAccountName: name };
}

/**
 * Best-effort revocation on delete: `suite` RFC 7009 on the refresh token (it ends the grant),
 * `code` GitHub's `DELETE /applications/{client_id}/token` (only this token, not the whole
 * grant), `music` nothing (Spotify has no endpoint). Bounded by the client's timeout; throws on
 * failure so the caller can log it.
 */
export async function revokeAtProvider(
  client: ProviderClient,
  tokens: { accessToken: string; refreshToken: string | null },
): Promise<'revoked' | 'unsupported'> {
  const kind = PROVIDERS[client.provider].revocation;
  if (kind === 'none') return 'unsupported';
  if (kind === 'rfc7009') {
    const token = tokens.refreshToken ?? tokens.accessToken;
    const hint = tokens.refreshToken ? 'refresh_token' : 'access_token';
    await oidc.tokenRevocation(client.oidc, token, { token_type_hint: hint });
    return 'revoked';
  }
  const basic = Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64');
  const url = new URL(
    `applications/${encodeURIComponent(client.clientId)}/token`,
    `${client.urls.api}/`,
  );
  const response = await client.fetch(url.toString(), {
    method: 'DELETE',
    headers: {
      authorization: `Basic ${basic}`,
      'content-type': 'application/json',
      accept: 'application/json',
      'user-agent': 'svc-control-plane',
    },
    body: JSON.stringify({ access_token: tokens.accessToken }),
  });
  // 404: already gone, which is what we wanted.
  if (!response.ok && response.status !== 404) {
    throw new ProviderApiError(`token revocation answered ${response.status}`);
  }
  return 'revoked';
}
