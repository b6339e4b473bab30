import { createServer } from 'node:net';
import { pushPublicKey } from '@svc/contract/agent-env-push';
import type { CreateServerSpec } from '../../src/adapters/compute/compute-driver.js';
import { enrollSecretOf } from '../../src/adapters/compute/hetzner/gateway-exchange.js';
import { GatewayCa } from '../../src/crypto/gateway-ca.js';
import { TEST_ENV } from '../test-context.js';
import { startGatewayFromUserData } from '../test-gateway.js';
import { hetznerDriver } from './driver.js';
import type { startHetznerStandIn } from './stand-in.js';

type StandIn = Awaited<ReturnType<typeof startHetznerStandIn>>;

export const TEST_HMAC_KEY = Buffer.from(TEST_ENV.HMAC_KEY, 'base64');

/** An Agent's spec for the hetzner driver, its first token `token`. */
export const agentSpec = (id: string, token = 't0k'): CreateServerSpec => ({
  id,
  size: 'medium',
  region: 'us',
  bootstrapEnv: {
    SVC_API_URL: 'https://svc.example',
    SVC_AGENT_ID: id,
    SVC_HMAC_TOKEN: token,
    SVC_PUSH_KEY: pushPublicKey(TEST_HMAC_KEY),
  },
  labels: { managedBy: 'svc', kind: 'agent', agentId: id },
});

/** A port free now, where a test's gateway will listen once its server "boots". */
export const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });

/** The stand-in's servers of machine `id`. */
export const serversOf = (standIn: StandIn, id: string) =>
  [...standIn.state.servers.values()].filter((s) => s.labels['svc/machine'] === id);

/**
 * A driver with the service's gateway CA, and `boot(id)`: once the driver has made the server,
 * its gateway starts (on 127.0.0.1) from the server's user data, as its first boot would.
 */
export async function enrollingDriver(standIn: StandIn, extra: { homeSeedWaitMs?: number } = {}) {
  const pem = await GatewayCa.generate();
  const gatewayCa = new GatewayCa(pem.cert, pem.key);
  const gatewayPort = await freePort();
  const driver = await hetznerDriver(standIn, {
    gatewayCa,
    enrollSecret: enrollSecretOf(TEST_HMAC_KEY),
    gatewayPort,
    homeSeedWaitMs: 30_000,
    ...extra,
  });
  const boot = async (id: string, change = (userData: string) => userData) => {
    let userData: string | undefined;
    while (!userData) {
      userData = serversOf(standIn, id)[0]?.userData ?? undefined;
      if (!userData) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return startGatewayFromUserData(change(userData), gatewayPort);
  };
  return { driver, gatewayCa, gatewayPort, boot };
}
