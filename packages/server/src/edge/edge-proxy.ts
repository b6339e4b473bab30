import type { Agent, ClientRequest, IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { TLSSocket } from 'node:tls';
import { ENV_PUSH_PATH, HOME_SEED_PATH } from '@svc/contract/agent-env-push';
import { ENROLL_PROOF_PATH } from '@svc/contract/gateway-tls';
import { createProxyServer } from 'http-proxy-3';
import type { ProxyTrust } from '../http/client-address.js';
import type { HostRoute } from '../http/http-server.js';
import type { Logger } from '../logger.js';
import { agentHostMatcher } from './edge-host.js';
import {
  type EdgePage,
  NOT_FOUND,
  notRunning,
  sendPage,
  sendPageOnSocket,
  UNKNOWN_AGENT,
  UNREACHABLE,
} from './edge-pages.js';
import type { EdgeResolution, EdgeRoutes, EdgeTarget } from './edge-routes.js';
import type { GatewayConnector } from './gateway-connection.js';

/** A gateway that has not accepted the connection by then is taken for gone. */
const CONNECT_TIMEOUT_MS = 5_000;
/**
 * An HTTP exchange with a gateway that stays silent this long (no response, or a response that
 * stops streaming) is cut. WebSockets have no such limit: a terminal may sit idle for hours, and
 * the gateway itself ends sockets whose access has ended.
 */
const IDLE_TIMEOUT_MS = 120_000;
/** Connection failures that mean nothing answers at the route's address any more. */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'EADDRNOTAVAIL',
  'ETIMEDOUT',
]);

/**
 * The gateway's routes for the service alone (enrollment, signed pushes, an adopted home): the
 * service reaches gateways directly, never through the edge, and the edge's connections show
 * the service's own client certificate, so the public is stopped here. The path is read as the
 * gateway routes it (the same URL parsing), so no spelling of it passes one and reaches the
 * other.
 */
const SERVICE_ONLY_PATHS: ReadonlySet<string> = new Set([
  ENROLL_PROOF_PATH,
  ENV_PUSH_PATH,
  HOME_SEED_PATH,
]);

function isServiceOnly(req: IncomingMessage): boolean {
  try {
    return SERVICE_ONLY_PATHS.has(new URL(req.url ?? '/', 'http://gateway').pathname);
  } catch {
    return true;
  }
}

export interface EdgeProxyOptions {
  readonly routes: EdgeRoutes;
  /** How gateways are reached (`createGatewayConnector`; moves into `running` wait on it too). */
  readonly gateways: GatewayConnector;
  /** Where Agents are served: `<scheme>://<subdomain>.<domain>/` (`Config['http'].agentOrigin`). */
  readonly agentOrigin: { readonly domain: string };
  /** The dashboard's URL, which is never the edge's and which its pages link to. */
  readonly publicUrl: string;
  readonly trust: ProxyTrust;
  readonly log: Logger;
}

export type EdgeProxy = HostRoute & {
  /** Ends the proxied WebSockets and the idle connections to gateways (at shutdown). */
  close(): void;
};

/**
 * The edge: requests for `<subdomain>.<agent domain>` go to that Agent's gateway, found through
 * the route cache; streamed both ways (http-proxy-3), WebSocket upgrades included, with the
 * original path, query and headers, plus `X-Forwarded-For`, `-Proto` and `-Host`. The `Host`
 * stays the Agent's, so the gateway's same-origin checks see the browser's origin.
 */
export function createEdgeProxy(options: EdgeProxyOptions): EdgeProxy {
  const { routes, log } = options;
  const subdomainOf = agentHostMatcher(options.agentOrigin.domain, options.publicUrl);
  const dashboardUrl = `${options.publicUrl}/dashboard/`;
  const targetUrl = (target: EdgeTarget) => options.gateways.url(target);
  const proxy = createProxyServer({ proxyTimeout: IDLE_TIMEOUT_MS });
  const upgraded = new WeakSet<Duplex>();
  const tunnels = new Set<Duplex>();

  proxy.on('proxyReq', (proxyReq, _req, _res, _options, socket) => limitConnect(proxyReq, socket));
  proxy.on('proxyReqWs', (proxyReq, _req, socket) => {
    proxyReq.once('socket', (outgoing: Socket) => limitConnect(proxyReq, outgoing));
    // Registered before the library's own listener: marked before the 101 reaches the client.
    proxyReq.once('upgrade', () => upgraded.add(socket));
  });
  // Errors go to each call's callback; this only keeps a stray one from ending the process.
  proxy.on('error', (err) => log.warn({ err }, 'edge proxy error'));

  /**
   * What the gateway cannot see for itself, set on the request's headers (which the proxy copies):
   * the client's address (after the trusted proxies' list, or alone: a client's own claim is
   * dropped), the scheme it used, and the host it asked for.
   */
  function forwardedHeaders(req: IncomingMessage) {
    const peer = req.socket.remoteAddress ?? '';
    const own = req.socket instanceof TLSSocket ? 'https' : 'http';
    const earlier = options.trust.trustProxy ? req.headers['x-forwarded-for'] : undefined;
    const proto = options.trust.trustProxy ? req.headers['x-forwarded-proto'] : undefined;
    req.headers['x-forwarded-for'] = earlier ? `${earlier}, ${peer}` : peer;
    req.headers['x-forwarded-proto'] = typeof proto === 'string' && proto ? proto : own;
    req.headers['x-forwarded-host'] = req.headers.host ?? '';
  }

  /** The route for the request's host, or the page to answer instead. */
  async function routeFor(
    req: IncomingMessage,
  ): Promise<{ subdomain: string; target: EdgeTarget; agent: Agent } | EdgePage> {
    if (isServiceOnly(req)) return NOT_FOUND;
    const subdomain = subdomainOf(req.headers.host) as string;
    let resolution: EdgeResolution;
    try {
      resolution = await routes.resolve(subdomain);
    } catch (err) {
      log.error({ err, subdomain }, 'edge route lookup failed');
      return UNREACHABLE;
    }
    if (resolution.kind === 'unknown') return UNKNOWN_AGENT;
    if (resolution.kind === 'not_running') return notRunning(resolution.state);
    if (resolution.kind === 'unreachable') return UNREACHABLE;
    try {
      return {
        subdomain,
        target: resolution.target,
        agent: options.gateways.agentFor(resolution.target),
      };
    } catch (err) {
      // A TLS gateway, and no gateway CA to reach it with (a misconfigured service).
      log.error({ err, subdomain }, 'edge cannot connect to the gateway');
      return UNREACHABLE;
    }
  }

  /** A connection that never reached the gateway drops the route: the next request looks again. */
  function failed(subdomain: string, err: NodeJS.ErrnoException): void {
    const unreachable = UNREACHABLE_CODES.has(err.code ?? '');
    if (unreachable) routes.forget(subdomain);
    log.info({ subdomain, code: err.code, unreachable }, 'edge proxying to the gateway failed');
  }

  return {
    claims: (req) => subdomainOf(req.headers.host) !== undefined,

    request(req, res) {
      void routeFor(req).then((route) => {
        if (res.destroyed) return;
        if ('status' in route) return sendPage(res, route, dashboardUrl);
        forwardedHeaders(req);
        const target = { target: targetUrl(route.target), agent: route.agent };
        proxy.web(req, res, target, (err, _req, out) => {
          failed(route.subdomain, err);
          const response = out as ServerResponse;
          if (response.destroyed) return;
          // Part of an answer already went out: only cutting it short tells the client.
          if (response.headersSent) response.destroy();
          else sendPage(response, UNREACHABLE, dashboardUrl);
        });
      });
    },

    upgrade(req, socket, head) {
      // A reset while the route is looked up must cost this socket only.
      socket.on('error', () => socket.destroy());
      tunnels.add(socket);
      socket.once('close', () => tunnels.delete(socket));
      void routeFor(req).then((route) => {
        if (socket.destroyed) return;
        if ('status' in route) return sendPageOnSocket(socket, route, dashboardUrl);
        forwardedHeaders(req);
        // Through the same agent: a TLS gateway is asked for by its machine's name.
        const target = { target: targetUrl(route.target), agent: route.agent };
        proxy.ws(req, socket, head, target, (err) => {
          failed(route.subdomain, err);
          // Before the gateway's 101 the client still waits for an HTTP answer; after it, the
          // library closes the tunnel.
          if (!upgraded.has(socket)) sendPageOnSocket(socket, UNREACHABLE, dashboardUrl);
        });
      });
    },

    close() {
      for (const socket of tunnels) socket.destroy();
      options.gateways.close();
    },
  };
}

/** Fails a connection to a gateway that does not accept it within `CONNECT_TIMEOUT_MS`. */
function limitConnect(proxyReq: ClientRequest, socket: Socket) {
  if (!socket.connecting) return;
  const timer = setTimeout(() => {
    const error: NodeJS.ErrnoException = new Error('connecting to the gateway timed out');
    error.code = 'ETIMEDOUT';
    proxyReq.destroy(error);
  }, CONNECT_TIMEOUT_MS);
  const stop = () => clearTimeout(timer);
  socket.once('connect', stop);
  socket.once('close', stop);
}
