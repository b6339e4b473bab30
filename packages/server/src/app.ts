import { Hono, type MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { HTTPException } from 'hono/http-exception';
import { requestId } from 'hono/request-id';
import { routePath } from 'hono/route';
import { secureHeaders } from 'hono/secure-headers';
import { mountAccountsRoutes } from './accounts/accounts.routes.js';
import { FS_UPLOAD_PATH } from './adapters/object-store/fs-object-store.js';
import { ObjectStoreUnavailable } from './adapters/object-store/object-store.js';
import { mountAgentsRoutes } from './agents/agents.routes.js';
import { mountAppConnectionsRoutes } from './app-connections/app-connections.routes.js';
import { mountAuditRoutes } from './audit/audit.routes.js';
import { mountBillingRoutes } from './billing/billing.routes.js';
import { mountPaymentWebhookRoutes } from './billing/payment-webhook.routes.js';
import { mountBundlePages, readerOf } from './bundles/bundle-pages.routes.js';
import { mountBundlesRoutes } from './bundles/bundles.routes.js';
import { mountExplorePages, wantsHtml } from './bundles/explore-pages.routes.js';
import { notFoundPage } from './bundles/page-layout.html.js';
import type { AppContext } from './context.js';
import { DatabaseUnavailable } from './db/database-unavailable.js';
import { AppError, toErrorEnvelope } from './errors.js';
import type { AppEnv } from './http/app-env.js';
import { agentAuth, agentClaimAuth, bearerToken } from './http/auth-agent.js';
import { hasUserToken, userAuth } from './http/auth-session.js';
import { csrfProtection } from './http/csrf.js';
import { mountDashboard } from './http/dashboard.js';
import { mountDownloads } from './http/downloads.js';
import { createRouter } from './http/router.js';
import { sessionCookieName } from './http/session-cookie.js';
import { mountMetricsRoute } from './metrics/metrics.routes.js';
import { mountNoticesRoutes } from './notices/notices.routes.js';
import { mountOperationsRoutes } from './operations.routes.js';
import { mountPlainVmsRoutes } from './plain-vms/plain-vms.routes.js';
import { mountVaultRoutes } from './vault/vault.routes.js';

const HEALTH_CHECK_PATHS = new Set(['/healthz', '/readyz']);
/** How soon a client may try again while the database or the object store is out of reach. */
const RETRY_AFTER_SECONDS = 5;

/** `error`, or the error it was caused by, that is a `kind`. */
function causeOf<E extends Error>(
  error: unknown,
  kind: new (...args: never[]) => E,
): E | undefined {
  for (let at = error, depth = 0; at && depth < 8; depth += 1) {
    if (at instanceof kind) return at;
    at = (at as { cause?: unknown }).cause;
  }
  return undefined;
}

export const MAX_BODY_BYTES = 1024 * 1024;
/** Staging reports and publishes list every file of a bundle (20,000 files ≈ 3 MB of JSON). */
export const MAX_BUNDLE_BODY_BYTES = 32 * 1024 * 1024;

/** A read that succeeded (or redirected): what polling is made of, logged at debug. */
const isQuietRead = (method: string, status: number) =>
  (method === 'GET' || method === 'HEAD') && status < 400;

/**
 * The HTTP application: middleware, every feature's routes, and the one error handler. No listen.
 * `operations` mounts only `/healthz`, `/readyz` and the OpenAPI document: what a process that
 * serves nothing but the edge (`--role=edge`) answers on the service's own host. While the
 * process's start-up work runs (`ctx.readiness`), `/readyz` says `not_ready` and every request
 * but the health checks waits for it.
 */
export function createApp(
  ctx: AppContext,
  options: { readonly only?: 'operations' } = {},
): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const log = ctx.log.http;
  app.use(async (c, next) => {
    const waiting = HEALTH_CHECK_PATHS.has(c.req.path) ? undefined : ctx.readiness.whenServing();
    if (waiting) await waiting;
    await next();
  });

  app.use(requestId());
  app.use(async (c, next) => {
    const started = performance.now();
    await next();
    const ms = performance.now() - started;
    // The pattern of the route that answered (`/api/agents/:id`): one series per route, not per
    // id. Unmatched requests answer from a catch-all middleware's `*` pattern.
    ctx.metrics.observeRequest(
      { method: c.req.method, route: routePath(c) || '*', status: c.res.status },
      ms / 1000,
    );
    const line = {
      requestId: c.var.requestId,
      method: c.req.method,
      // The path only: query strings can carry OAuth codes and state.
      path: c.req.path,
      status: c.res.status,
      ms: Math.round(ms * 10) / 10,
    };
    // A 503 from /readyz is the process saying it is starting, stopping or without its
    // database, which is what the probe asks; whatever caused it is logged where it happens.
    const notReady = c.res.status === 503 && HEALTH_CHECK_PATHS.has(c.req.path);
    if (notReady) log.info(line, 'not ready');
    else if (c.res.status >= 500) log.error(line, 'request failed');
    // Probes ask every few seconds and the dashboard polls every 250 ms while a machine moves (successful GETs): at
    // info they would bury what happened. Changes and refusals stay at info.
    else if (HEALTH_CHECK_PATHS.has(c.req.path) || isQuietRead(c.req.method, c.res.status)) {
      log.debug(line, 'request');
    } else log.info(line, 'request');
  });
  app.use(
    secureHeaders({
      // A response that sets one of these headers itself keeps it: the dashboard's page and the
      // app-connection popup's pages relax Cross-Origin-Opener-Policy so the popup can report back.
      overwrite: false,
      contentSecurityPolicy: {
        defaultSrc: ["'self'"],
        objectSrc: ["'none'"],
        baseUri: ["'self'"],
        frameAncestors: ["'none'"],
      },
    }),
  );
  const limit = (maxSize: number) =>
    bodyLimit({
      maxSize,
      onError: () => {
        // The rest of the body may still be on its way: the connection cannot carry another
        // request, and saying so keeps a keep-alive client from sending one into a closing socket.
        throw new AppError('payload_too_large', { headers: { Connection: 'close' } });
      },
    });
  const limitBody = limit(MAX_BODY_BYTES);
  const limitBundleBody = limit(MAX_BUNDLE_BODY_BYTES);
  app.use((c, next) => {
    // No GET or HEAD handler reads a body (the router reads one only for endpoints that declare
    // it), so the limit is not needed there; asking for the body would make @hono/node-server
    // build a whole fetch Request (headers, abort controller) for each request, a tenth of a
    // hot path's time. Node drops an unread body.
    if (c.req.method === 'GET' || c.req.method === 'HEAD') return next();
    // fs object uploads are raw bytes bounded by their signed size, not JSON bodies.
    if (c.req.path.startsWith(`${FS_UPLOAD_PATH}/`)) return next();
    if (c.req.path.startsWith('/api/glamps/')) return limitBundleBody(c, next);
    return limitBody(c, next);
  });
  app.use(
    '/api/*',
    csrfProtection(
      [new URL(ctx.config.http.publicUrl).origin],
      sessionCookieName(ctx.config.http.secureCookies),
    ),
  );

  const secureCookies = ctx.config.http.secureCookies;
  const session = userAuth({ sessions: ctx.sessions, tokens: ctx.apiTokens, secureCookies });
  const sessionOnly = userAuth({ sessions: ctx.sessions, secureCookies });
  const agent = agentAuth((token) => ctx.agents.authenticateToken(token));
  const agentClaim = agentClaimAuth((token) => ctx.agents.readTokenClaim(token));
  const sessionOr =
    (other: MiddlewareHandler<AppEnv>): MiddlewareHandler<AppEnv> =>
    (c, next) => {
      const token = bearerToken(c);
      return token && !hasUserToken(token) ? other(c, next) : session(c, next);
    };
  const router = createRouter({
    authenticators: {
      session,
      'session-only': sessionOnly,
      agent,
      'session-or-agent': sessionOr(agent),
    },
    claimAuthenticators: { agent: agentClaim, 'session-or-agent': sessionOr(agentClaim) },
  });
  mountOperationsRoutes(router, ctx);
  mountMetricsRoute(app, ctx);
  if (options.only === 'operations') {
    app.route('/', router.app);
  } else {
    mountAccountsRoutes(router, ctx);
    mountNoticesRoutes(router, ctx);
    mountAuditRoutes(router, ctx);
    mountAgentsRoutes(router, ctx);
    mountBillingRoutes(router, ctx);
    mountPaymentWebhookRoutes(router, ctx);
    mountVaultRoutes(router, ctx);
    mountPlainVmsRoutes(router, ctx);
    mountAppConnectionsRoutes(router, ctx);
    mountBundlesRoutes(router, ctx);
    ctx.bundles.store.mount?.(app);
    app.route('/', router.app);
    mountDashboard(app, ctx.config.http.dashboardDir);
    mountDownloads(app, { cliBuildDir: ctx.config.http.cliBuildDir, dataDir: ctx.config.dataDir });
    // Last: the public pages' one- and two-segment routes must not shadow anything above.
    mountExplorePages(app, ctx);
    mountBundlePages(app, ctx);
  }

  app.notFound((c) =>
    // A browser gets a page; the API and every other client keep the JSON envelope.
    options.only !== 'operations' && wantsHtml(c) && !c.req.path.startsWith('/api/')
      ? c.html(notFoundPage(readerOf(c, ctx.config.http.secureCookies)), 404)
      : c.json(toErrorEnvelope(new AppError('not_found')), 404),
  );
  app.onError((error, c) => {
    if (error instanceof AppError) {
      for (const [name, value] of Object.entries(error.headers ?? {})) c.header(name, value);
      if (error.status >= 500) log.error({ requestId: c.var.requestId, err: error }, error.message);
      return c.json(toErrorEnvelope(error), error.status as 400);
    }
    const lost = causeOf(error, DatabaseUnavailable);
    if (lost) {
      // Said once per request, as a warning: the outage itself is the operator's alert.
      log.warn({ requestId: c.var.requestId, err: error }, 'database unavailable');
      // Only a request that never reached the database is surely safe to send again.
      if (lost.phase === 'connect') c.header('Retry-After', String(RETRY_AFTER_SECONDS));
      return c.json(toErrorEnvelope(new AppError('unavailable')), 503);
    }
    const storeAway = causeOf(error, ObjectStoreUnavailable);
    if (storeAway) {
      log.warn({ requestId: c.var.requestId, err: error }, 'object store unavailable');
      // Whatever the request did is safe to do again: an upload waits until a commit hashes it.
      c.header('Retry-After', String(RETRY_AFTER_SECONDS));
      return c.json(toErrorEnvelope(new AppError('unavailable')), 503);
    }
    if (error instanceof HTTPException && error.status < 500) {
      // Hono's own 4xx (e.g. a malformed request it refused before our handlers).
      return c.json(toErrorEnvelope(new AppError('invalid_request')), 400);
    }
    log.error({ requestId: c.var.requestId, err: error }, 'unhandled error');
    return c.json(toErrorEnvelope(new AppError('internal_error')), 500);
  });
  return app;
}
