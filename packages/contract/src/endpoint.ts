import type { z } from 'zod';
import type { ErrorCode } from './errors.js';

/**
 * Which credential an endpoint takes:
 * - `session`: a user, by session cookie or personal access token (`Authorization: Bearer
 *   svcp_…`; a `read` token on GET only, else 403 `insufficient_scope`);
 * - `session-only`: a user by session cookie alone (what a token must not do: mint tokens, change
 *   the password or e-mail, delete the user, start an OAuth consent);
 * - `agent`: an Agent's HMAC token (`Authorization: Bearer svc1.…`);
 * - `session-or-agent`: a user (as `session`) or an Agent;
 * - `none`: the endpoint carries its own proof or is public.
 */
export type AuthKind = 'none' | 'session' | 'session-only' | 'agent' | 'session-or-agent';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

type ObjectSchema = z.ZodObject<z.ZodRawShape>;

/**
 * One HTTP endpoint as a value: the server mounts and validates from it, clients build typed calls
 * from it, and the OpenAPI document is generated from the list of them.
 */
export interface Endpoint {
  /** Stable operation id, also the OpenAPI `operationId`. */
  readonly id: string;
  readonly method: HttpMethod;
  /** Path with `{name}` segments, as the OpenAPI document writes it. */
  readonly path: string;
  readonly auth: AuthKind;
  /**
   * The scope a personal access token needs: by default `read` for GET and `write` for the rest;
   * `write` on a GET that hands out a credential (a `read` token must not widen itself).
   */
  readonly tokenScope?: 'write';
  readonly summary: string;
  readonly tag: string;
  readonly params?: ObjectSchema;
  readonly query?: ObjectSchema;
  readonly body?: z.ZodType;
  readonly response: {
    readonly status: 200 | 201 | 202 | 204 | 302;
    /** Absent for bodiless answers (204, redirects). */
    readonly body?: z.ZodType;
    readonly description?: string;
  };
  /** The error codes this endpoint may answer with besides the ones every endpoint has. */
  readonly errors: readonly ErrorCode[];
}

export function defineEndpoint<const E extends Endpoint>(endpoint: E): E {
  return endpoint;
}

type Infer<S> = S extends z.ZodType ? z.infer<S> : undefined;

/** The validated input a handler receives. */
export interface EndpointInput<E extends Endpoint> {
  params: Infer<E['params']>;
  query: Infer<E['query']>;
  body: Infer<E['body']>;
}

/** What a handler returns for the endpoint's success status. */
export type EndpointOutput<E extends Endpoint> = E['response']['body'] extends z.ZodType
  ? z.input<E['response']['body']>
  : undefined;

/** What a client receives, after parsing with the response schema. */
export type EndpointResult<E extends Endpoint> = E['response']['body'] extends z.ZodType
  ? z.output<E['response']['body']>
  : undefined;

type InputOf<S> = S extends z.ZodType ? z.input<S> : never;

/** A client's input for one call, typed from the descriptor: only the parts the endpoint has. */
export type EndpointCallInput<E extends Endpoint> = (E['params'] extends z.ZodType
  ? { params: InputOf<E['params']> }
  : { params?: never }) &
  (E['query'] extends z.ZodType ? { query?: InputOf<E['query']> } : { query?: never }) &
  (E['body'] extends z.ZodType ? { body: InputOf<E['body']> } : { body?: never });

/** Builds a concrete path from a descriptor path and its parameters. */
export function buildPath(path: string, params: Record<string, string> = {}): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`Missing path parameter "${name}" for ${path}`);
    return encodeURIComponent(value);
  });
}
