import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { HTTPException } from 'hono/http-exception';
import { requestId } from 'hono/request-id';
import { secureHeaders } from 'hono/secure-headers';
import { mountAccountsRoutes } from './accounts/accounts.routes.js';
import { mountAgentsRoutes } from './agents/agents.routes.js';
import { mountBillingRoutes } from './billing/billing.routes.js';
import type { AppContext } from './context.js';
import { AppError, toErrorEnvelope } from './errors.js';
import type { AppEnv } from './http/app-env.js';
import { agentAuth, bearerToken } from './http/auth-agent.js';
import { sessionAuth } from './http/auth-session.js';
import { csrfProtection } from './http/csrf.js';
import { createRouter } from './http/router.js';
import { mountOperationsRoutes } from './operations.routes.js';
import { mountVaultRoutes } from './vault/vault.routes.js';

export const MAX_BODY_BYTES = 1024 * 1024;

/** The HTTP application: middleware, every feature's routes, and the one error handler. No listen. */
export function createApp(ctx: AppContext): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const log = ctx.log.http;

  app.use(requestId());
  app.use(async (c, next) => {
    const started = performance.now();
    await next();
    const line = {
      requestId: c.var.requestId,
      method: c.req.method,
      // The path only: query strings can carry OAuth codes and state.
      path: c.req.path,
      status: c.res.status,
      ms: Math.round((performance.now() - started) * 10) / 10,
    };
    if (c.res.status >= 500) log.error(line, 'request failed');
    else log.info(line, 'request');
  });
  app.use(
    secureHeaders({
      contentSecurityPolicy: {
        defaultSrc: ["'self'"],
        objectSrc: ["'none'"],
        baseUri: ["'self'"],
        frameAncestors: ["'none'"],
      },
    }),
  );
  app.use(
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: () => {
        throw new AppError('payload_too_large');
      },
    }),
  );
  app.use('/api/*', csrfProtection([new URL(ctx.config.http.publicUrl).origin]));

  const session = sessionAuth(ctx.accounts);
  const agent = agentAuth((token) => ctx.agents.authenticateToken(token));
  const router = createRouter({
    authenticators: {
      session,
      agent,
      'session-or-agent': (c, next) => (bearerToken(c) ? agent(c, next) : session(c, next)),
    },
  });
  mountOperationsRoutes(router, ctx);
  mountAccountsRoutes(router, ctx);
  mountAgentsRoutes(router, ctx);
  mountBillingRoutes(router, ctx);
  mountVaultRoutes(router, ctx);
  app.route('/', router.app);

  app.notFound((c) => c.json(toErrorEnvelope(new AppError('not_found')), 404));
  app.onError((error, c) => {
    if (error instanceof AppError) {
      for (const [name, value] of Object.entries(error.headers ?? {})) c.header(name, value);
      if (error.status >= 500) log.error({ requestId: c.var.requestId, err: error }, error.message);
      return c.json(toErrorEnvelope(error), error.status as 400);
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
