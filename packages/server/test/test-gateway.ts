import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { GatewayAuth } from '../../cli/src/gateway/gateway-auth.js';
import { createGatewayServer } from '../../cli/src/gateway/gateway-server.js';
import { AGENT_ENV_PATH, agentEnvFile } from '../src/adapters/compute/agent-env-file.js';

/**
 * An Agent's gateway (`svc gateway`'s server) on 127.0.0.1 in a home of its own with this
 * `agent.env`, as a cloud Agent runs it: what the hetzner driver's pushes reach in tests.
 */
export async function startTestGateway(env: Readonly<Record<string, string>>) {
  const home = await mkdtemp(path.join(tmpdir(), 'svc-gateway-home-'));
  await mkdir(path.join(home, '.crabglamp'));
  await writeFile(path.join(home, AGENT_ENV_PATH), agentEnvFile(env), { mode: 0o600 });
  const gatewayEnv = { HOME: home };
  const gateway = createGatewayServer({
    home,
    env: gatewayEnv,
    auth: new GatewayAuth(gatewayEnv),
    assets: async () => new Map(),
    version: 'test',
    secureCookies: false,
  });
  await new Promise<void>((resolve) => gateway.server.listen(0, '127.0.0.1', resolve));
  return {
    home,
    port: (gateway.server.address() as AddressInfo).port,
    async close() {
      await gateway.close();
      gateway.server.closeAllConnections();
      await rm(home, { recursive: true, force: true });
    },
  };
}
