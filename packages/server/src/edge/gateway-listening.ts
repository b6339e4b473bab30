import { request } from 'node:http';
import { request as tlsRequest } from 'node:https';
import { LISTENING_PORTS_PATH } from '@svc/contract';
import type { ComputeDriver } from '../adapters/compute/compute-driver.js';
import { type EdgeTarget, gatewayTarget } from './edge-routes.js';
import type { GatewayConnector } from './gateway-connection.js';

/** How long a listing waits for the gateway before it lists shared ports alone. */
const LISTENING_TIMEOUT_MS = 3_000;

/** The most of the gateway's answer read: a port list is a few hundred bytes. */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * The TCP ports the gateway at `target` sees listening inside its machine (`GET /_svc/ports`,
 * a route for the service alone: the edge never forwards it), reached as the edge reaches it.
 * `undefined` when it does not answer well before `signal` ends the try.
 */
export function listeningPorts(
  connector: GatewayConnector,
  target: EdgeTarget,
  signal: AbortSignal,
): Promise<number[] | undefined> {
  return new Promise((resolve) => {
    const send = target.tls ? tlsRequest : request;
    let agent: ReturnType<GatewayConnector['agentFor']>;
    try {
      agent = connector.agentFor(target);
    } catch {
      return resolve(undefined);
    }
    const req = send(
      `${connector.url(target)}${LISTENING_PORTS_PATH}`,
      { agent, signal },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_ANSWER_BYTES) return res.destroy();
          chunks.push(chunk);
        });
        res.on('error', () => resolve(undefined));
        res.on('end', () => {
          if (res.statusCode !== 200) return resolve(undefined);
          try {
            const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { ports?: unknown };
            const ports = Array.isArray(body.ports) ? body.ports : [];
            resolve(ports.filter((port): port is number => Number.isInteger(port)));
          } catch {
            resolve(undefined);
          }
        });
      },
    );
    req.on('error', () => resolve(undefined));
    req.end();
  });
}

/**
 * The ports an Agent's gateway sees listening, found where the edge finds it (the Agent ports'
 * `listening`): `undefined` when its machine names no gateway or it does not answer in 3 s.
 */
export const gatewayListening =
  (compute: ComputeDriver, connector: GatewayConnector) =>
  async (agentId: string): Promise<number[] | undefined> => {
    const target = gatewayTarget(await compute.getServer(agentId));
    if (!target) return undefined;
    return listeningPorts(connector, target, AbortSignal.timeout(LISTENING_TIMEOUT_MS));
  };
