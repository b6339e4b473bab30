import type { MiddlewareHandler } from 'hono';
import type { AccountsService } from '../accounts/accounts.service.js';
import { AppError } from '../errors.js';
import type { AppEnv } from './app-env.js';
import { readSessionCookie } from './session-cookie.js';

/** Requires a valid session cookie and publishes its user as `c.var.user`; else 401. */
export function sessionAuth(
  accounts: Pick<AccountsService, 'authenticate'>,
  secureCookies: boolean,
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const sessionId = readSessionCookie(c, secureCookies);
    const user = sessionId ? await accounts.authenticate(sessionId) : undefined;
    if (!user) throw new AppError('unauthorized');
    c.set('user', user);
    await next();
  };
}
