import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ActionEngine } from './actions.js';
import type { Conformance } from './conformance.js';
import { HetznerError, notFound } from './errors.js';
import { FaultSet, type Faults } from './faults.js';
import { linkHeader, type PaginationMeta } from './pagination.js';
import { DEFAULT_RATE_LIMIT, type RateLimit, RateLimiter } from './rate-limiter.js';
import { findRoute, type Route, type RouteAnswer, type RouteMatch } from './router.js';
import { catalogRoutes } from './routes-catalog.js';
import { firewallRoutes } from './routes-firewalls.js';
import { imageRoutes } from './routes-images.js';
import { serverActionRoutes } from './routes-server-actions.js';
import { serverRoutes } from './routes-servers.js';
import { type StandInState, Store } from './state.js';

export interface StandInOptions {
  /** The accepted Bearer token (default: random hex); any other gets 401 `unauthorized`. */
  token?: string;
  /** Token bucket per token; default Hetzner's `{ limit: 3600, refillPerSecond: 1 }`. */
  rateLimit?: RateLimit;
  /** How long every action stays `running` (default 150); progress rises 0→100 meanwhile. */
  actionMs?: number;
  /** Project limits; one more answers 403 `resource_limit_exceeded`. */
  limits?: { servers?: number; firewalls?: number };
  /** When given, every request and response is checked against Hetzner's description. */
  conformance?: Conformance;
}

export interface StandInStats {
  requests: number;
  rateLimited: number;
  byOperation: Map<string, number>;
  /** Every request as it arrived (before any delay), for waiting on one in particular. */
  received: { method: string; path: string; body: unknown }[];
}

export interface HetznerStandIn {
  /** Base URL including `/v1`, e.g. `http://127.0.0.1:PORT/v1`. */
  readonly url: string;
  readonly token: string;
  /** Read access for assertions; only the stand-in writes it. */
  readonly state: StandInState;
  readonly faults: Faults;
  readonly stats: StandInStats;
  /** The next server made gets this IPv4 address (a test's own listener, on loopback). */
  pinNextIpv4(address: string): void;
  close(): Promise<void>;
}

const ROUTES: readonly Route[] = [
  ...serverRoutes,
  ...serverActionRoutes,
  ...firewallRoutes,
  ...imageRoutes,
  ...catalogRoutes,
];

/** The route for a path under `/v1`, or the error to answer. */
function route(method: string, pathname: string): RouteMatch | HetznerError {
  if (!/^\/v1\//.test(pathname)) return notFound('resource');
  try {
    return findRoute(ROUTES, method, pathname.slice('/v1'.length));
  } catch (error) {
    if (error instanceof HetznerError) return error;
    throw error;
  }
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/**
 * A stateful stand-in for the Hetzner Cloud API on 127.0.0.1 (a real HTTP server, so a
 * service in a child process can use it through `HCLOUD_ENDPOINT`).
 */
export async function startHetznerStandIn(options: StandInOptions = {}): Promise<HetznerStandIn> {
  const token = options.token ?? randomBytes(32).toString('hex');
  const store = new Store();
  const faults = new FaultSet();
  const actions = new ActionEngine(store, faults, options.actionMs ?? 150);
  const limiter = new RateLimiter(options.rateLimit ?? DEFAULT_RATE_LIMIT);
  const conformance = options.conformance;
  const stats: StandInStats = {
    requests: 0,
    rateLimited: 0,
    byOperation: new Map(),
    received: [],
  };
  let baseUrl = '';

  async function exchange(req: http.IncomingMessage, res: http.ServerResponse) {
    const method = req.method ?? 'GET';
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const rawBody = await readBody(req);
    stats.requests += 1;
    const path = url.pathname.slice('/v1'.length);
    const headers: Record<string, string> = {};
    const send = (answer: RouteAnswer) => {
      conformance?.checkResponse(method, url.pathname, answer.status, answer.body);
      const json = answer.body === undefined ? undefined : JSON.stringify(answer.body);
      if (json !== undefined) headers['Content-Type'] = 'application/json';
      res.writeHead(answer.status, { ...headers, ...answer.headers });
      res.end(json);
    };
    const fail = (error: HetznerError) => send({ status: error.status, body: error.toBody() });

    let body: unknown;
    try {
      body = rawBody === '' ? undefined : JSON.parse(rawBody);
    } catch {
      body = rawBody;
    }
    conformance?.checkRequest(method, url.pathname, url.searchParams, body);
    stats.received.push({ method, path, body });
    const routing = route(method, url.pathname);
    const operation = routing instanceof HetznerError ? '(unknown)' : routing.route.template;
    stats.byOperation.set(
      `${method} ${operation}`,
      (stats.byOperation.get(`${method} ${operation}`) ?? 0) + 1,
    );

    const rate = limiter.take(req.headers.authorization ?? '');
    Object.assign(headers, rate.headers);
    if (!rate.allowed) {
      stats.rateLimited += 1;
      return fail(new HetznerError(429, 'rate_limit_exceeded', 'limit of requests exceeded'));
    }
    const delayMs = faults.delayMs(method, path);
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    const fault = faults.takeFailure(method, path);
    if (fault === 'drop') return void req.socket.destroy();
    if (fault && fault !== 'lose-answer')
      return fail(new HetznerError(fault.status, fault.code, fault.message ?? fault.code));
    if (req.headers.authorization !== `Bearer ${token}`)
      return fail(new HetznerError(401, 'unauthorized', 'unable to authenticate'));
    if (typeof body === 'string')
      return fail(new HetznerError(400, 'json_error', 'the request body is not valid JSON'));
    if (routing instanceof HetznerError) return fail(routing);
    try {
      const answer = routing.route.handle({
        store,
        actions,
        faults,
        baseUrl,
        path,
        body,
        query: url.searchParams,
        limits: options.limits ?? {},
        params: routing.params,
      });
      const meta = (answer.body as { meta?: { pagination?: PaginationMeta } })?.meta?.pagination;
      if (meta) headers.Link = linkHeader(baseUrl, path, meta);
      // The work is done, its answer lost on the way (a crash or a dropped connection).
      if (fault === 'lose-answer') return void req.socket.destroy();
      send(answer);
    } catch (error) {
      if (error instanceof HetznerError) return fail(error);
      console.error('Hetzner stand-in: a handler failed', error);
      fail(new HetznerError(500, 'server_error', 'the stand-in failed on this request'));
    }
  }

  const server = http.createServer((req, res) => {
    exchange(req, res).catch((error: unknown) => {
      console.error('Hetzner stand-in: an exchange failed', error);
      res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return {
    url: baseUrl,
    token,
    state: store,
    faults,
    stats,
    pinNextIpv4: (address) => {
      store.pinnedIpv4.push(address);
    },
    async close() {
      actions.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
