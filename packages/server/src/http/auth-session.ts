import type { MiddlewareHandler } from 'hono';
import { AppError } from '../errors.js';
import type { AppEnv } from './app-env.js';
import { readSessionCookie } from './session-cookie.js';

/** Whatever resolves a session cookie to its user (the sessions service). */
export interface SessionAuthenticator {
  authenticate(sessionId: string): Promise<AppEnv['Variables']['user'] | undefined>;
}

/** Requires a valid session cookie and publishes its user as `c.var.user`; else 401. */
export function sessionAuth(
  sessions: SessionAuthenticator,
  secureCookies: boolean,
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const sessionId = readSessionCookie(c, secureCookies);
    const user = sessionId ? await sessions.authenticate(sessionId) : undefined;
    if (!user) throw new AppError('unauthorized');
    c.set('user', user);
    await next();
  };
}
