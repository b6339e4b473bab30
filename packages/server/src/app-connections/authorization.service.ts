import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { AppProvider } from '@svc/contract';
import * as oidc from 'openid-client';
import type { Membership } from '../accounts/membership.js';
import type { Clock } from '../adapters/clock.js';
import type { TokenCipher } from '../crypto/token-cipher.js';
import type { Database } from '../db/database.js';
import { AppError } from '../errors.js';
import type { Logger } from '../logger.js';
import * as repo from './app-connections.repo.js';
import { isSameBrowser, newBrowserBinding } from './browser-binding.js';
import type { ProviderClient } from './oauth-client.js';
import { readIdentity } from './provider-api.js';
import { PROVIDERS } from './providers.js';
import { describeProviderError } from './refresh-errors.js';
import { grantedScopes, resolveRequestedScopes } from './scopes.js';
import { accessTokenLifetime } from './token-freshness.js';

/** The authorization window (spec: 10 minutes). */
export const STATE_TTL_MS = 10 * 60_000;

const hashState = (state: string) => createHash('sha256').update(state).digest('base64url');

export type CallbackOutcome =
  | { readonly outcome: 'connected'; readonly provider: AppProvider; readonly connectionId: string }
  | { readonly outcome: 'failed'; readonly provider?: AppProvider };

/** The authorization-code flow with PKCE: the authorize redirect and the callback. */
export function createAuthorizationService(deps: {
  database: Database;
  clock: Clock;
  membership: Membership;
  cipher: TokenCipher;
  clients: Partial<Record<AppProvider, ProviderClient>>;
  /** `PUBLIC_URL` + `/api/apps/callback`, the one redirect URI, sent identically every time. */
  redirectUri: string;
  log: Logger;
}) {
  const { database, clock, membership, cipher, log } = deps;

  /** Stores the connection, replacing the one of the same provider account (same id kept). */
  async function saveConnection(
    state: NonNullable<Awaited<ReturnType<typeof repo.consumeState>>>,
    tokens: oidc.TokenEndpointResponse,
    identity: Awaited<ReturnType<typeof readIdentity>>,
  ): Promise<string> {
    const now = clock.now();
    const provider = state.provider;
    const lifetime = PROVIDERS[provider].refreshes ? accessTokenLifetime(tokens) : null;
    return database.transaction(async (tx) => {
      // The user may have left the account during the 10 minutes.
      await membership.requireMember(tx, { userId: state.userId }, state.accountId);
      const existing = await repo.findConnectionBySubject(tx, {
        accountId: state.accountId,
        provider,
        providerSubject: identity.providerSubject,
      });
      const row = (id: string) => {
        const binding = { connectionId: id, provider };
        return {
          id,
          accountId: state.accountId,
          provider,
          status: 'active' as const,
          scopes: grantedScopes(provider, tokens.scope, state.scopes),
          ...identity,
          accessToken: cipher.seal(tokens.access_token, binding),
          refreshToken: tokens.refresh_token ? cipher.seal(tokens.refresh_token, binding) : null,
          accessTokenExpiresAt: lifetime && new Date(now.getTime() + lifetime.ms),
          accessTokenLifetimeSeconds: lifetime?.seconds ?? null,
          createdAt: now,
          updatedAt: now,
        };
      };
      const wanted = existing?.id ?? randomUUID();
      const { id } = await repo.upsertConnection(tx, row(wanted));
      // A concurrent callback created the row first: seal again, bound to its id.
      if (id !== wanted) await repo.upsertConnection(tx, row(id));
      return id;
    });
  }

  return {
    /** Whether the operator configured the provider's OAuth client (it can be connected). */
    isConfigured(provider: AppProvider): boolean {
      return deps.clients[provider] !== undefined;
    },

    /**
     * The provider's consent URL and the browser binding value, which the caller sets as a
     * cookie in the browser that asked. Refusals (scope, configuration, account) come first.
     */
    async authorize(
      userId: string,
      input: { provider: AppProvider; scopes?: string; accountId?: string },
    ): Promise<{ url: URL; browserBinding: string }> {
      const scopes = resolveRequestedScopes(input.provider, input.scopes);
      const client = deps.clients[input.provider];
      if (!client) throw new AppError('provider_not_configured');
      const account = await membership.resolveTargetAccount(database.db, userId, input.accountId);
      const state = randomBytes(32).toString('base64url');
      const codeVerifier = oidc.randomPKCECodeVerifier();
      const binding = newBrowserBinding();
      const now = clock.now();
      await repo.deleteExpiredStates(database.db, now);
      await repo.insertState(database.db, {
        stateHash: hashState(state),
        userId,
        accountId: account.id,
        provider: input.provider,
        codeVerifier,
        scopes,
        browserBindingHash: binding.hash,
        expiresAt: new Date(now.getTime() + STATE_TTL_MS),
        createdAt: now,
      });
      const definition = PROVIDERS[input.provider];
      const url = oidc.buildAuthorizationUrl(client.oidc, {
        redirect_uri: deps.redirectUri,
        scope: scopes.join(definition.scopeSeparator),
        state,
        code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: 'S256',
        ...definition.extraAuthorizeParams,
      });
      return { url, browserBinding: binding.value };
    },

    /**
     * Consumes the state first (single use, whatever happens next), refuses a browser other than
     * the one that authorized (`browserBinding`: its cookie's value), then exchanges the code with
     * the stored verifier at the provider the state names (never another: mix-up defence).
     */
    async callback(
      query: URLSearchParams,
      browserBinding: string | undefined,
    ): Promise<CallbackOutcome> {
      const state = query.get('state');
      const consumed = state ? await repo.consumeState(database.db, hashState(state)) : undefined;
      if (!state || !consumed || consumed.expiresAt <= clock.now()) {
        log.info({ reason: consumed ? 'expired' : 'unknown_state' }, 'app callback refused');
        return { outcome: 'failed' };
      }
      const provider = consumed.provider;
      // Someone else's browser: its consent must not land in the account that authorized.
      if (!isSameBrowser(browserBinding, consumed.browserBindingHash)) {
        log.info(
          { provider, reason: browserBinding ? 'other_browser' : 'no_browser_binding' },
          'app callback refused',
        );
        return { outcome: 'failed', provider };
      }
      const client = deps.clients[provider];
      if (query.has('error') || !client) {
        log.info(
          { provider, reason: client ? 'provider_error' : 'not_configured' },
          'app callback refused',
        );
        return { outcome: 'failed', provider };
      }
      // The token request's redirect_uri is built from this URL: the configured one, exactly.
      const currentUrl = new URL(deps.redirectUri);
      currentUrl.search = query.toString();
      try {
        const tokens = await oidc.authorizationCodeGrant(client.oidc, currentUrl, {
          pkceCodeVerifier: consumed.codeVerifier,
          expectedState: state,
          idTokenExpected: PROVIDERS[provider].identity === 'id-token',
        });
        const identity = await readIdentity(client, tokens);
        const connectionId = await saveConnection(consumed, tokens, identity);
        log.info({ provider, connectionId }, 'app connected');
        return { outcome: 'connected', provider, connectionId };
      } catch (error) {
        if (error instanceof AppError && error.code === 'not_found') {
          log.info({ provider, reason: 'no_longer_member' }, 'app callback refused');
        } else log.warn({ provider, ...describeProviderError(error) }, 'app callback failed');
        return { outcome: 'failed', provider };
      }
    },
  };
}

export type AuthorizationService = ReturnType<typeof createAuthorizationService>;
