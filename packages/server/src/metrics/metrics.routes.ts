import { timingSafeEqual } from 'node:crypto';
import type { Hono } from 'hono';
import type { AppContext } from '../context.js';
import { AppError } from '../errors.js';
import type { AppEnv } from '../http/app-env.js';
import { bearerToken } from '../http/auth-agent.js';
import { isForwarded, isLoopbackPeer } from '../http/client-address.js';

export const METRICS_PATH = '/metrics';

/**
 * `GET /metrics`, Prometheus' text format. Open to this host (the socket's peer on loopback,
 * never what `X-Forwarded-For` claims); from anywhere else only with `Authorization: Bearer
 * <METRICS_TOKEN>`. With `TRUST_PROXY`, a request a proxy forwarded (it carries
 * `X-Forwarded-For` or `Forwarded`) needs the token even when the proxy runs on this host.
 */
export function mountMetricsRoute(app: Hono<AppEnv>, ctx: AppContext): void {
  const expected = ctx.secrets.metricsToken && Buffer.from(ctx.secrets.metricsToken);
  app.get(METRICS_PATH, async (c) => {
    const proxied = ctx.config.http.trustProxy && isForwarded(c);
    if (!isLoopbackPeer(c) || proxied) {
      if (!expected) {
        throw new AppError('forbidden', {
          message:
            'metrics are served to this host only; set METRICS_TOKEN to scrape from elsewhere',
        });
      }
      const given = Buffer.from(bearerToken(c) ?? '');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        throw new AppError('unauthorized', { message: 'Authorization: Bearer <METRICS_TOKEN>' });
      }
    }
    const registry = ctx.metrics.registry;
    return c.body(await registry.metrics(), 200, { 'content-type': registry.contentType });
  });
}
