import { API_TOKEN_PREFIX, type ApiTokenScope } from '@svc/contract';
import type { MiddlewareHandler } from 'hono';
import { AppError } from '../errors.js';
import type { AppEnv } from './app-env.js';
import { bearerToken } from './auth-agent.js';
import { readSessionCookie } from './session-cookie.js';

/** A signed-in user and the accounts they belong to. */
export interface UserPrincipal {
  readonly user: AppEnv['Variables']['user'];
  readonly memberships: AppEnv['Variables']['memberships'];
  readonly pendingEmailChange: AppEnv['Variables']['pendingEmailChange'];
}

/** Whatever resolves a session cookie to its user and the session's id (the sessions service). */
export interface SessionAuthenticator {
  authenticate(sessionId: string): Promise<(UserPrincipal & { recordId: string }) | undefined>;
}

/** Whatever resolves a personal access token to its user and scope (the API tokens service). */
export interface TokenAuthenticator {
  authenticate(
    token: string,
  ): Promise<(UserPrincipal & { scope: ApiTokenScope; tokenId: string }) | undefined>;
}

/** Whether the request carries a personal access token (rather than an Agent's). */
export const hasUserToken = (token: string | undefined) =>
  token?.startsWith(API_TOKEN_PREFIX) === true;

/**
 * Requires a signed-in user and publishes them as `c.var.user`, their accounts as
 * `c.var.memberships`, the session or token as `c.var.signedInBy`; else 401. A session cookie
 * always counts; with `tokens`, so does `Authorization: Bearer svcp_…` with the scope the router
 * set for the endpoint (`c.var.tokenScope`; a `read` token elsewhere is 403 `insufficient_scope`).
 * A bearer token that is not a live personal access token is 401, whatever cookie comes with it.
 */
export function userAuth(options: {
  sessions: SessionAuthenticator;
  tokens?: TokenAuthenticator;
  secureCookies: boolean;
}): MiddlewareHandler<AppEnv> {
  const { sessions, tokens, secureCookies } = options;
  return async (c, next) => {
    const token = bearerToken(c);
    if (token !== undefined) {
      if (!tokens || !hasUserToken(token)) {
        throw new AppError('unauthorized', {
          message: tokens
            ? 'Send a personal access token (svcp_…) or sign in'
            : 'This endpoint takes a signed-in browser session only, not a token',
        });
      }
      const found = await tokens.authenticate(token);
      if (!found) throw new AppError('unauthorized');
      if (found.scope !== 'write' && c.var.tokenScope !== 'read') {
        throw new AppError('insufficient_scope', {
          message: 'This needs a token with the write scope; this one may only read',
        });
      }
      c.set('user', found.user);
      c.set('memberships', found.memberships);
      c.set('pendingEmailChange', found.pendingEmailChange);
      c.set('signedInBy', { kind: 'token', id: found.tokenId });
      return next();
    }
    const sessionId = readSessionCookie(c, secureCookies);
    const found = sessionId ? await sessions.authenticate(sessionId) : undefined;
    if (!found) throw new AppError('unauthorized');
    c.set('user', found.user);
    c.set('memberships', found.memberships);
    c.set('pendingEmailChange', found.pendingEmailChange);
    c.set('signedInBy', { kind: 'session', id: found.recordId });
    await next();
  };
}
