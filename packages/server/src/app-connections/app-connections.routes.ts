import * as api from '@svc/contract';
import type { Context } from 'hono';
import type { AppContext } from '../context.js';
import type { AppEnv } from '../http/app-env.js';
import type { Router } from '../http/router.js';
import type { Caller, TokenCaller } from './app-connections.service.js';
import { STATE_TTL_MS } from './authorization.service.js';
import { clearBindingCookie, readBindingCookie, writeBindingCookie } from './browser-binding.js';
import { CALLBACK_HEADERS, CALLBACK_SCRIPT, callbackPage } from './callback-page.js';
import { providerEntries } from './providers.js';

/** The caller of a `session-or-agent` endpoint: the Agent when a token authenticated. */
const callerOf = (c: Context<AppEnv>): Caller => {
  const agent = c.get('agent');
  return agent ? { agentAccountId: agent.accountId } : { userId: c.var.user.id };
};

/** The caller of the token endpoint, mounted with `agentToken: 'claim'`. */
const tokenCallerOf = (c: Context<AppEnv>): TokenCaller => {
  const agentClaim = c.get('agentClaim');
  return agentClaim ? { agentClaim } : { userId: c.var.user.id };
};

export function mountAppConnectionsRoutes(router: Router, ctx: AppContext) {
  const { appConnections, appAuthorization } = ctx;
  const dashboardOrigin = new URL(ctx.config.http.publicUrl).origin;
  const { secureCookies } = ctx.config.http;

  router.mount(api.listAppProviders, async (_input, c) => {
    c.header('cache-control', 'private, max-age=300');
    return providerEntries((provider) => appAuthorization.isConfigured(provider));
  });
  router.mount(api.authorizeApp, async ({ query }, c) => {
    const { url, browserBinding } = await appAuthorization.authorize(c.var.user.id, query);
    // A newer authorize in the same browser replaces the cookie: only its flow can complete.
    writeBindingCookie(c, browserBinding, STATE_TTL_MS, secureCookies);
    // See CALLBACK_HEADERS: the popup keeps its opener through this redirect too.
    c.header('cross-origin-opener-policy', 'unsafe-none');
    return c.redirect(url.toString(), 302);
  });
  router.mount(api.appCallback, async (_input, c) => {
    const result = await appAuthorization.callback(
      new URL(c.req.url).searchParams,
      readBindingCookie(c, secureCookies),
    );
    // One use, whatever the outcome.
    clearBindingCookie(c, secureCookies);
    const page = callbackPage({ ...result, dashboardOrigin });
    return c.body(page, result.outcome === 'connected' ? 200 : 400, CALLBACK_HEADERS);
  });
  router.mount(api.appCallbackScript, async (_input, c) =>
    c.body(CALLBACK_SCRIPT, 200, {
      'content-type': 'text/javascript; charset=utf-8',
      'cache-control': 'public, max-age=3600',
    }),
  );
  router.mount(api.listAppConnections, async ({ query }, c) =>
    appConnections.list(callerOf(c), query.accountId),
  );
  router.mount(
    api.getConnectionToken,
    async ({ params }, c) => {
      // A token must not sit in any cache between the service and the caller.
      c.header('cache-control', 'no-store');
      return appConnections.token(tokenCallerOf(c), params.id);
    },
    // The hot path of an Agent's app: its token and the connection in one statement.
    { agentToken: 'claim' },
  );
  router.mount(api.deleteAppConnection, async ({ params }, c) => {
    await appConnections.remove(c.var.user.id, params.id);
    return undefined;
  });
}
