import type { Agent, IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { TLSSocket } from 'node:tls';
import { LISTENING_PORTS_PATH, type MachineState, PORT_HEADER } from '@svc/contract';
import { ENV_PUSH_PATH, HOME_SEED_PATH } from '@svc/contract/agent-env-push';
import { ENROLL_PROOF_PATH } from '@svc/contract/gateway-tls';
import { createProxyServer } from 'http-proxy-3';
import type { AgentActivity } from '../agents/agent-activity.js';
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
  sendRedirect,
  UNKNOWN_AGENT,
  UNREACHABLE,
} from './edge-pages.js';
import type { EdgePorts } from './edge-ports.js';
import type { EdgeResolution, EdgeRoutes, EdgeTarget } from './edge-routes.js';
import { answerNotRunning, type Wake, type WakeAnswer } from './edge-wake.js';
import type { GatewayConnector } from './gateway-connection.js';

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
  LISTENING_PORTS_PATH,
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
  /** Told of each request proxied to an Agent, and of its open WebSockets (its idle stop). */
  readonly activity?: AgentActivity;
  /** Starts a stopped Agent a browser that may open it visits (`edge-wake.ts`). */
  readonly wake?: Wake;
  /** Who may reach a shared port (`<port>--<subdomain>`); without it those hosts answer 404. */
  readonly ports?: EdgePorts;
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

  // A connection to a gateway times out, and a moment's missing route is tried again, in the
  // connector's agents (`createGatewayConnector`): a request gets its socket once connected.
  proxy.on('proxyReqWs', (proxyReq, _req, socket) => {
    // Registered before the library's own listener: marked before the 101 reaches the client.
    proxyReq.once('upgrade', () => upgraded.add(socket));
  });
  // Errors go to each call's callback; this only keeps a stray one from ending the process.
  proxy.on('error', (err) => log.warn({ err }, 'edge proxy error'));

  /**
   * What the gateway cannot see for itself, set on the request's headers (which the proxy copies):
   * the client's address (after the trusted proxies' list, or alone: a client's own claim is
   * dropped), the scheme it used, and the host it asked for; and the shared port it was admitted
   * to, which only the edge may say (a client's own `x-svc-port` is dropped).
   */
  function forwardedHeaders(req: IncomingMessage, port: number | undefined) {
    const peer = req.socket.remoteAddress ?? '';
    const own = req.socket instanceof TLSSocket ? 'https' : 'http';
    const earlier = options.trust.trustProxy ? req.headers['x-forwarded-for'] : undefined;
    const proto = options.trust.trustProxy ? req.headers['x-forwarded-proto'] : undefined;
    req.headers['x-forwarded-for'] = earlier ? `${earlier}, ${peer}` : peer;
    req.headers['x-forwarded-proto'] = typeof proto === 'string' && proto ? proto : own;
    req.headers['x-forwarded-host'] = req.headers.host ?? '';
    if (port === undefined) delete req.headers[PORT_HEADER];
    else req.headers[PORT_HEADER] = String(port);
  }

  /** The route for the request's host, the Agent that is not running, or the page to answer. */
  async function routeFor(
    req: IncomingMessage,
  ): Promise<
    | { subdomain: string; agentId: string; target: EdgeTarget; agent: Agent }
    | { notRunning: { agentId: string; state: MachineState } }
    | EdgePage
  > {
    if (isServiceOnly(req)) return NOT_FOUND;
    const subdomain = subdomainOf(req.headers.host)?.subdomain as string;
    let resolution: EdgeResolution;
    try {
      resolution = await routes.resolve(subdomain);
    } catch (err) {
      log.error({ err, subdomain }, 'edge route lookup failed');
      return UNREACHABLE;
    }
    if (resolution.kind === 'unknown') return UNKNOWN_AGENT;
    if (resolution.kind === 'not_running') return { notRunning: resolution };
    if (resolution.kind === 'unreachable') return UNREACHABLE;
    try {
      return {
        subdomain,
        agentId: resolution.agentId,
        target: resolution.target,
        agent: options.gateways.agentFor(resolution.target),
      };
    } catch (err) {
      // A TLS gateway, and no gateway CA to reach it with (a misconfigured service).
      log.error({ err, subdomain }, 'edge cannot connect to the gateway');
      return UNREACHABLE;
    }
  }

  /**
   * An open WebSocket (a terminal, the editor) is a person at the Agent: it counts as activity
   * now and every `intervalMs` until it closes, however quiet it is.
   */
  function keepActive(agentId: string, socket: Duplex): void {
    const { activity } = options;
    if (!activity) return;
    activity.touch(agentId);
    const timer = setInterval(() => activity.touch(agentId), activity.intervalMs);
    timer.unref();
    socket.once('close', () => clearInterval(timer));
  }

  /**
   * A page visit may wake a stopped Agent (`answerNotRunning`); anything else hears its state. A
   * shared port's visit must first pass the port's own rules (its cookie set at `port-open`
   * included), which then are what allows the start.
   */
  async function answerStopped(
    req: IncomingMessage,
    res: ServerResponse,
    agent: { agentId: string; state: MachineState },
  ): Promise<void> {
    const { port } = subdomainOf(req.headers.host) ?? {};
    if (port !== undefined && !(await admitPort(req, res, agent.agentId, port))) return;
    const { wake } = options;
    const proof = port === undefined ? { cookieHeader: req.headers.cookie } : { port };
    let answer: WakeAnswer;
    try {
      answer = await answerNotRunning(req, agent, {
        wake: wake && ((agentId) => wake(agentId, proof)),
        dashboardUrl,
      });
    } catch (err) {
      log.error({ err, agentId: agent.agentId }, 'edge could not wake the Agent');
      answer = { page: UNREACHABLE };
    }
    if (res.destroyed) return;
    if ('redirect' in answer) return sendRedirect(res, answer.redirect);
    sendPage(res, answer.page, dashboardUrl);
  }

  /** Whether a shared port's request may go on (`edge-ports.ts`); else it has been answered. */
  async function admitPort(
    req: IncomingMessage,
    res: ServerResponse,
    agentId: string,
    port: number,
  ): Promise<boolean> {
    if (options.ports) return options.ports.admit(req, res, agentId, port, dashboardUrl);
    sendPage(res, NOT_FOUND, dashboardUrl);
    return false;
  }

  async function admitPortUpgrade(
    req: IncomingMessage,
    socket: Duplex,
    agentId: string,
    port: number,
  ): Promise<boolean> {
    if (options.ports) return options.ports.admitUpgrade(req, socket, agentId, port, dashboardUrl);
    sendPageOnSocket(socket, NOT_FOUND, dashboardUrl);
    return false;
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
      void routeFor(req).then(async (route) => {
        if (res.destroyed) return;
        if ('status' in route) return sendPage(res, route, dashboardUrl);
        if ('notRunning' in route) return answerStopped(req, res, route.notRunning);
        const { port } = subdomainOf(req.headers.host) ?? {};
        if (port !== undefined && !(await admitPort(req, res, route.agentId, port))) return;
        options.activity?.touch(route.agentId);
        forwardedHeaders(req, port);
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
      void routeFor(req).then(async (route) => {
        if (socket.destroyed) return;
        if ('status' in route) return sendPageOnSocket(socket, route, dashboardUrl);
        if ('notRunning' in route) {
          return sendPageOnSocket(socket, notRunning(route.notRunning.state), dashboardUrl);
        }
        const { port } = subdomainOf(req.headers.host) ?? {};
        if (port !== undefined && !(await admitPortUpgrade(req, socket, route.agentId, port))) {
          return;
        }
        keepActive(route.agentId, socket);
        forwardedHeaders(req, port);
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
