import { z } from 'zod';

export const Id = z.uuid();

/** ISO 8601 UTC with a `Z`, as every timestamp in the API. */
export const Timestamp = z.iso.datetime();

/**
 * Account slugs share one namespace for personal and organization accounts and are the first
 * segment of public bundle URLs, so the service's own top-level paths are reserved.
 */
export const RESERVED_SLUGS: ReadonlySet<string> = new Set([
  'admin',
  'api',
  'app',
  'assets',
  'dashboard',
  'docs',
  'downloads',
  'explore',
  'healthz',
  'metrics',
  'readyz',
  'stagings',
  'static',
  'www',
]);

export const SLUG_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$/;

export const Slug = z
  .string()
  .regex(SLUG_PATTERN, 'Use 1 to 40 lower-case letters, digits and inner hyphens')
  .refine((slug) => !RESERVED_SLUGS.has(slug), 'This slug is reserved');

/** The session cookie's name, shared by server, dashboard and documentation. */
export const SESSION_COOKIE = 'svc_session';
