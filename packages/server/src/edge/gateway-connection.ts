import { Agent, type ClientRequestArgs, request } from 'node:http';
import { Agent as TlsAgent, request as tlsRequest } from 'node:https';
import { isIP, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { GATEWAY_PREFIX } from '@svc/contract/gateway-ticket';
import { gatewayServerName } from '@svc/contract/gateway-tls';
import type { ServerInfo } from '../adapters/compute/compute-driver.js';
import type { GatewayCa } from '../crypto/gateway-ca.js';
import { type ConnectTarget, connectRetrying } from '../util/connect-retrying.js';
import { type EdgeTarget, gatewayTarget } from './edge-routes.js';

/**
 * How the service connects to Agents' gateways: the URL of a gateway and one pool of kept-alive
 * connections. The edge proxies through it, and a move into `running` waits on it
 * (`gatewayAnswers`), so a gateway counted as answering was reached the way the edge reaches it.
 */
export interface GatewayConnector {
  /**
   * The connections to the gateway at `target` (kept alive, reused by the edge's requests): over
   * TLS for a cloud machine, trusting the service's CA alone, asking for the machine's own name
   * and showing the service's client certificate; plain HTTP on loopback for the local driver.
   */
  agentFor(target: EdgeTarget): Agent;
  /** The origin the edge sends a gateway's requests to. */
  url(target: EdgeTarget): string;
  /** Ends the idle connections (at shutdown). */
  close(): void;
}

/** At most this many machines' TLS connection pools are kept; past it the oldest goes. */
const MAX_TLS_AGENTS = 10_000;
/** A gateway that has not accepted the connection by then is taken for gone (`ETIMEDOUT`). */
const CONNECT_TIMEOUT_MS = 5_000;

/**
 * Has `agent` open its connections through `connectRetrying` (a connection that failed for a
 * moment's missing route is tried again, and one not accepted in `CONNECT_TIMEOUT_MS` fails);
 * a TLS agent then handshakes on the connected socket. A request is given its socket only once
 * it is connected, so its body waits in the request until then and is sent once, on that socket.
 */
function connectingRetrying<A extends Agent>(agent: A, tls: boolean): A {
  const handshake = agent.createConnection.bind(agent);
  agent.createConnection = (options, created) => {
    const done = created as (err: Error | null, stream?: Duplex) => void;
    // What the agent adds for `net.connect` beyond a request's own options.
    const tcp = options as ConnectTarget;
    connectRetrying({
      host: options.host ?? undefined,
      port: Number(options.port),
      localAddress: options.localAddress,
      family: options.family,
      keepAlive: tcp.keepAlive,
      keepAliveInitialDelay: tcp.keepAliveInitialDelay,
      noDelay: tcp.noDelay,
      timeoutMs: CONNECT_TIMEOUT_MS,
    }).then((socket) => {
      if (!tls) return done(null, socket);
      // `tls.connect` takes `socket`: its handshake runs on the connection made.
      const onSocket: ClientRequestArgs & { socket: Socket } = { ...options, socket };
      try {
        done(null, handshake(onSocket) ?? undefined);
      } catch (err) {
        socket.destroy();
        done(err as Error);
      }
    }, done);
    return undefined;
  };
  return agent;
}

/** `ca`: the gateway CA (`Secrets.gatewayCa`, ready); without it TLS gateways cannot be reached. */
export function createGatewayConnector(ca?: GatewayCa): GatewayConnector {
  // Idle connections to gateways are reused; Node closes them by the gateway's keep-alive hint.
  const agent = connectingRetrying(new Agent({ keepAlive: true }), false);
  // One pool per machine: its name is the agent's `servername`, which the certificate must carry
  // (left to itself, Node would ask for the Agent's own host, from the `Host` header).
  const tlsAgents = new Map<string, { agent: TlsAgent; cert: string }>();
  function agentFor(target: EdgeTarget): Agent {
    if (!target.tls) return agent;
    if (!ca) throw new Error('no gateway CA: this service cannot reach TLS gateways');
    const client = ca.clientCredentials();
    const known = tlsAgents.get(target.machineId);
    tlsAgents.delete(target.machineId);
    // A renewed client certificate starts new pools; the old ones' connections end by themselves.
    if (known && known.cert === client.cert) {
      tlsAgents.set(target.machineId, known);
      return known.agent;
    }
    if (tlsAgents.size >= MAX_TLS_AGENTS) {
      const [oldest] = tlsAgents.keys();
      tlsAgents.get(oldest as string)?.agent.destroy();
      tlsAgents.delete(oldest as string);
    }
    const made = connectingRetrying(
      new TlsAgent({
        keepAlive: true,
        ca: ca.cert,
        cert: client.cert,
        key: client.key,
        servername: gatewayServerName(target.machineId),
        minVersion: 'TLSv1.3',
      }),
      true,
    );
    tlsAgents.set(target.machineId, { agent: made, cert: client.cert });
    return made;
  }
  return {
    agentFor,
    url: gatewayUrl,
    close: () => {
      agent.destroy();
      for (const entry of tlsAgents.values()) entry.agent.destroy();
      tlsAgents.clear();
    },
  };
}

function gatewayUrl(target: EdgeTarget): string {
  const host = isIP(target.host) === 6 ? `[${target.host}]` : target.host;
  return `${target.tls ? 'https' : 'http'}://${host}:${target.port}`;
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
    const send = target.tls ? tlsRequest : request;
    let agent: Agent;
    try {
      agent = connector.agentFor(target);
    } catch {
      // No CA to reach a TLS gateway with: nothing answers this service there.
      return resolve(false);
    }
    const req = send(health, { agent, signal }, (res) => {
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
