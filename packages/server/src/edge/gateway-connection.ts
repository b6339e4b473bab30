import { Agent, request } from 'node:http';
import { isIP } from 'node:net';
import { GATEWAY_PREFIX } from '@svc/contract/gateway-ticket';
import type { ServerInfo } from '../adapters/compute/compute-driver.js';
import { type EdgeTarget, gatewayTarget } from './edge-routes.js';

/**
 * How the service connects to Agents' gateways: the URL of a gateway and one pool of kept-alive
 * connections. The edge proxies through it, and a move into `running` waits on it
 * (`gatewayAnswers`), so a gateway counted as answering was reached the way the edge reaches it.
 */
export interface GatewayConnector {
  /** The connections to gateways (kept alive, reused by the edge's requests). */
  readonly agent: Agent;
  /** The origin the edge sends a gateway's requests to. */
  url(target: EdgeTarget): string;
  /** Ends the idle connections (at shutdown). */
  close(): void;
}

export function createGatewayConnector(): GatewayConnector {
  // Idle connections to gateways are reused; Node closes them by the gateway's keep-alive hint.
  const agent = new Agent({ keepAlive: true });
  return { agent, url: gatewayUrl, close: () => agent.destroy() };
}

function gatewayUrl(target: EdgeTarget): string {
  const host = isIP(target.host) === 6 ? `[${target.host}]` : target.host;
  return `http://${host}:${target.port}`;
}

/**
 * One try: whether the gateway at `target` answers its health check (`/_svc/health`, 200) through
 * `connector`, before `signal` ends it. The user's own `/` is never asked: it may be anything.
 */
export function gatewayAnswers(
  connector: GatewayConnector,
  target: EdgeTarget,
  signal: AbortSignal,
): Promise<boolean> {
  return new Promise((resolve) => {
    const health = `${connector.url(target)}${GATEWAY_PREFIX}/health`;
    const req = request(health, { agent: connector.agent, signal }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
    req.end();
  });
}

/**
 * A move's probe of an Agent's server: its health check at the gateway the edge would route to
 * (`gatewayTarget`), through `connector`.
 */
export const gatewayProbe =
  (connector: GatewayConnector) =>
  async (
    server: ServerInfo,
    signal: AbortSignal,
  ): Promise<'answered' | 'silent' | 'no_address'> => {
    const target = gatewayTarget(server);
    if (!target) return 'no_address';
    return (await gatewayAnswers(connector, target, signal)) ? 'answered' : 'silent';
  };
