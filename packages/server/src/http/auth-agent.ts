import type { Context, MiddlewareHandler } from 'hono';
import { AppError } from '../errors.js';
import type { AgentClaim, AgentPrincipal, AppEnv } from './app-env.js';

export type AgentAuthenticator = (token: string) => Promise<AgentPrincipal | undefined>;

/** The bearer token of the request, if it carries one. */
export function bearerToken(c: Context): string | undefined {
  const header = c.req.header('authorization');
  const match = header && /^Bearer\s+(\S+)$/i.exec(header);
  return match ? match[1] : undefined;
}

/** Requires a valid Agent HMAC token and publishes its Agent as `c.var.agent`; else 401. */
export function agentAuth(authenticate: AgentAuthenticator): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const token = bearerToken(c);
    const agent = token ? await authenticate(token) : undefined;
    if (!agent) throw new AppError('unauthorized');
    c.set('agent', agent);
    await next();
  };
}

/**
 * Requires a well-signed Agent HMAC token and publishes what it names as `c.var.agentClaim`
 * (no database); else 401. Only for handlers whose statement checks the claim itself.
 */
export function agentClaimAuth(
  read: (token: string) => AgentClaim | undefined,
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const token = bearerToken(c);
    const claim = token ? read(token) : undefined;
    if (!claim) throw new AppError('unauthorized');
    c.set('agentClaim', claim);
    await next();
  };
}
