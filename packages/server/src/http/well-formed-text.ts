import { textIssues } from '@svc/contract';
import type { Context, MiddlewareHandler } from 'hono';
import { AppError } from '../errors.js';
import type { AppEnv } from './app-env.js';

/**
 * The routes served outside the router (public pages, dashboard files, fs uploads) take the same
 * rule as every contract endpoint: a path parameter or query value that is not well-formed text
 * (a NUL, an unpaired surrogate) is 400 `invalid_request` naming it, before any handler runs.
 */
export function requireWellFormedText(c: Context): void {
  const issues = [
    ...textIssues(c.req.param(), ['params']),
    ...textIssues(c.req.query(), ['query']),
  ];
  if (issues.length > 0) throw new AppError('invalid_request', { issues });
}

/** `requireWellFormedText` as a route's middleware. */
export const wellFormedText: MiddlewareHandler<AppEnv> = async (c, next) => {
  requireWellFormedText(c);
  await next();
};
