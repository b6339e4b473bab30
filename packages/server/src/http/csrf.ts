import type { MiddlewareHandler } from 'hono';
import { getCookie } from 'hono/cookie';
import { AppError } from '../errors.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Refuses cross-origin state changes. A browser names the page's origin in `Origin` (or at least
 * `Sec-Fetch-Site`) on every unsafe request; one from another origin is refused outright, and a
 * cookie-carrying one that names no origin is refused too, since the cookie alone proves nothing
 * about who sent it. Clients without cookies (curl, the CLI), or with a bearer token, pass.
 */
export function csrfProtection(
  allowedOrigins: readonly string[],
  sessionCookie: string,
): MiddlewareHandler {
  const allowed = new Set(allowedOrigins);
  return async (c, next) => {
    if (SAFE_METHODS.has(c.req.method)) return next();
    const origin = c.req.header('origin');
    if (origin !== undefined) {
      if (!allowed.has(origin))
        throw new AppError('forbidden', { message: 'cross-origin request refused' });
      return next();
    }
    const fetchSite = c.req.header('sec-fetch-site');
    if (fetchSite !== undefined && fetchSite !== 'same-origin') {
      throw new AppError('forbidden', { message: `cross-site request refused (${fetchSite})` });
    }
    // A request with a bearer token authenticates by it, never by the cookie beside it (a
    // command-line client may keep cookies), and a page cannot send one cross-site unasked.
    const hasBearer = /^Bearer\s/i.test(c.req.header('authorization') ?? '');
    if (fetchSite === undefined && !hasBearer && getCookie(c, sessionCookie) !== undefined) {
      throw new AppError('forbidden', {
        message: 'cookie-authenticated request without Origin refused',
      });
    }
    return next();
  };
}
