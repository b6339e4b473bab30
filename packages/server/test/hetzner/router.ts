import type { ActionEngine } from './actions.js';
import { HetznerError, notFound } from './errors.js';
import type { FaultSet } from './faults.js';
import type { Store } from './state.js';

/** What a route handler sees of one request and of the stand-in. */
export interface RouteContext {
  readonly store: Store;
  readonly actions: ActionEngine;
  readonly faults: FaultSet;
  readonly limits: { readonly servers?: number; readonly firewalls?: number };
  readonly baseUrl: string;
  readonly path: string;
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
  readonly body: unknown;
}

export interface RouteAnswer {
  readonly status: number;
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
}

export interface Route {
  readonly method: string;
  /** The description's path template, e.g. `/servers/{id}/actions/poweron`. */
  readonly template: string;
  readonly handle: (context: RouteContext) => RouteAnswer;
}

export interface RouteMatch {
  readonly route: Route;
  readonly params: Record<string, string>;
}

function matchTemplate(template: string, path: string): Record<string, string> | undefined {
  const want = template.split('/');
  const have = path.split('/');
  if (want.length !== have.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const segment = want[i]!;
    if (segment.startsWith('{')) params[segment.slice(1, -1)] = decodeURIComponent(have[i]!);
    else if (segment !== have[i]) return undefined;
  }
  return params;
}

/** Finds the route for a path under `/v1`; 404 for an unknown path, 405 for a wrong method. */
export function findRoute(routes: readonly Route[], method: string, path: string): RouteMatch {
  let pathKnown = false;
  for (const route of routes) {
    const params = matchTemplate(route.template, path);
    if (!params) continue;
    pathKnown = true;
    if (route.method === method) return { route, params };
  }
  if (pathKnown) throw new HetznerError(405, 'method_not_allowed', 'method not allowed');
  throw notFound('resource');
}

/** Reads a path id; a non-numeric id cannot name anything, hence 404. */
export function idParam(context: RouteContext, what: string, name = 'id'): number {
  const text = context.params[name] ?? '';
  if (!/^[1-9]\d{0,15}$/.test(text)) throw notFound(what);
  return Number(text);
}

/** The body as an object; anything else is not what any served operation takes. */
export function bodyObject(context: RouteContext): Record<string, unknown> {
  const body = context.body ?? {};
  if (typeof body !== 'object' || Array.isArray(body) || body === null)
    throw new HetznerError(400, 'json_error', 'the request body must be a JSON object');
  return body as Record<string, unknown>;
}
