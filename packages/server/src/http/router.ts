import {
  type AuthKind,
  type Endpoint,
  type EndpointInput,
  type EndpointOutput,
  parseRequestPart,
  type RequestPart,
  type ValidationIssue,
} from '@svc/contract';
import { type Context, Hono, type MiddlewareHandler } from 'hono';
import type { ContentfulStatusCode, StatusCode } from 'hono/utils/http-status';
import type { z } from 'zod';
import { AppError } from '../errors.js';
import type { AppEnv } from './app-env.js';

export type Handler<E extends Endpoint> = (
  input: EndpointInput<E>,
  c: Context<AppEnv>,
) => Promise<EndpointOutput<E> | Response>;

type AgentAuthKind = Extract<AuthKind, 'agent' | 'session-or-agent'>;

export interface RouterOptions {
  /** The middleware that checks each kind of credential. */
  readonly authenticators: Readonly<Record<Exclude<AuthKind, 'none'>, MiddlewareHandler<AppEnv>>>;
  /**
   * For endpoints mounted with `agentToken: 'claim'`: the same, except that an Agent's token is
   * only checked for its MAC (`c.var.agentClaim`), the handler's statement checking the rest.
   */
  readonly claimAuthenticators?: Readonly<
    Partial<Record<AgentAuthKind, MiddlewareHandler<AppEnv>>>
  >;
}

export interface MountOptions {
  /**
   * `claim`: an Agent's token reaches the handler as `c.var.agentClaim`, checked for its MAC
   * only; the handler's one statement checks the Agent's generation and state (a hot path).
   */
  readonly agentToken?: 'claim';
}

/**
 * Mounts endpoints from their contract descriptors: the descriptor's auth runs first, then the
 * path, query and body are parsed with its schemas, every string in them required to be
 * well-formed text (400 `invalid_request` with `issues`), and the
 * handler's result is sent with the descriptor's status.
 */
export type Router = ReturnType<typeof createRouter>;

export function createRouter(options: RouterOptions) {
  const app = new Hono<AppEnv>();
  const authenticatorOf = (endpoint: Endpoint, mountOptions: MountOptions) => {
    const kind = endpoint.auth as Exclude<AuthKind, 'none'>;
    if (mountOptions.agentToken !== 'claim') return options.authenticators[kind];
    const claim =
      kind === 'agent' || kind === 'session-or-agent'
        ? options.claimAuthenticators?.[kind]
        : undefined;
    if (!claim) throw new Error(`${endpoint.id}: no claim authenticator for auth ${kind}`);
    return claim;
  };
  return {
    app,
    mount<E extends Endpoint>(endpoint: E, handler: Handler<E>, mountOptions: MountOptions = {}) {
      const path = endpoint.path.replace(/\{(\w+)\}/g, ':$1');
      const scope: MiddlewareHandler<AppEnv> = (c, next) => {
        c.set('tokenScope', endpoint.tokenScope ?? (endpoint.method === 'GET' ? 'read' : 'write'));
        return next();
      };
      const auth = endpoint.auth === 'none' ? [] : [scope, authenticatorOf(endpoint, mountOptions)];
      const respond: MiddlewareHandler<AppEnv> = async (c) => {
        const input = (await parseInput(endpoint, c)) as EndpointInput<E>;
        const result = await handler(input, c);
        if (result instanceof Response) return result;
        const { status, body } = endpoint.response;
        if (!body) return c.body(null, status as StatusCode);
        // Parsing strips anything the contract does not list, so no stray field can leak.
        const output = body.parse(result);
        return c.json(output, status as ContentfulStatusCode);
      };
      app.on(endpoint.method, [path], ...auth, respond);
    },
  };
}

async function parseInput(endpoint: Endpoint, c: Context) {
  const issues: ValidationIssue[] = [];
  const parse = (schema: z.ZodType | undefined, value: unknown, where: RequestPart) => {
    if (!schema) return undefined;
    const result = parseRequestPart(schema, value, where);
    if (result.success) return result.data;
    issues.push(...result.issues);
    return undefined;
  };
  const params = parse(endpoint.params, c.req.param(), 'params');
  const query = parse(endpoint.query, queryValues(c), 'query');
  const body = endpoint.body ? parse(endpoint.body, await readJson(c), 'body') : undefined;
  if (issues.length > 0) throw new AppError('invalid_request', { issues });
  return { params, query, body };
}

/** The query: one value per name, or an array for a name given more than once (`tag=a&tag=b`). */
function queryValues(c: Context): Record<string, string | string[]> {
  return Object.fromEntries(
    Object.entries(c.req.queries()).map(([name, values]) => [
      name,
      values.length === 1 ? (values[0] as string) : values,
    ]),
  );
}

async function readJson(c: Context): Promise<unknown> {
  const text = await c.req.text();
  const invalid = (message: string) =>
    new AppError('invalid_request', {
      issues: [{ path: ['body'], message, code: 'invalid_json' }],
    });
  const type = c.req.header('content-type') ?? '';
  if (!/^application\/(.+\+)?json\b/i.test(type))
    throw invalid('Send the body as application/json');
  try {
    return JSON.parse(text);
  } catch {
    throw invalid('The body is not valid JSON');
  }
}
