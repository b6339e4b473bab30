import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { GATEWAY_TLS_DIR, GATEWAY_TLS_FILES } from '@svc/contract/gateway-tls';
import { parse } from 'yaml';
import { GatewayAuth } from '../../cli/src/gateway/gateway-auth.js';
import { createGatewayServer } from '../../cli/src/gateway/gateway-server.js';
import { GatewayTls } from '../../cli/src/gateway/gateway-tls.js';
import { AGENT_ENV_PATH, agentEnvFile } from '../src/adapters/compute/agent-env-file.js';
import { ENROLLMENT_KEY_COMMAND } from '../src/adapters/compute/hetzner/hetzner-agent.js';
import type { GatewayCa } from '../src/crypto/gateway-ca.js';

/**
 * The gateway's TLS: `issued`, a key and certificate from `ca` for `machineId` (as the Incus
 * driver writes them); `enrolling`, the CA certificate only, and a key and self-signed
 * certificate made on the machine by `ENROLLMENT_KEY_COMMAND` (a Hetzner Agent's first boot).
 */
export type TestGatewayTls =
  | { readonly issued: GatewayCa; readonly machineId: string }
  | { readonly enrolling: string };

/**
 * A Hetzner Agent's gateway as its cloud-init user data leaves it: the files it writes into the
 * agent's home (`agent.env`, the CA certificate), and the key its first boot makes.
 */
export async function startGatewayFromUserData(userData: string, port = 0) {
  const document = parse(userData.replace(/^#cloud-config\n/, '')) as {
    write_files: { path: string; content: string }[];
  };
  const fileOf = (suffix: string) =>
    document.write_files.find((file) => file.path.endsWith(suffix))?.content ?? '';
  const env = Object.fromEntries(
    fileOf(AGENT_ENV_PATH)
      .split('\n')
      .filter(Boolean)
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
  const ca = fileOf(`${GATEWAY_TLS_DIR}/${GATEWAY_TLS_FILES.ca}`);
  return { env, gateway: await startTestGateway(env, { enrolling: ca }, port) };
}

/**
 * An Agent's gateway (`svc gateway`'s server) on 127.0.0.1 in a home of its own with this
 * `agent.env`, as a cloud Agent runs it: what the hetzner driver's pushes reach in tests.
 */
export async function startTestGateway(
  env: Readonly<Record<string, string>>,
  tlsSetup?: TestGatewayTls,
  port = 0,
) {
  // The home in a folder of its own: a test may watch the home's parent (nothing written beside
  // it), which the system's temporary folder shared with other tests is not.
  const root = await mkdtemp(path.join(tmpdir(), 'svc-gateway-'));
  const home = path.join(root, 'home');
  await mkdir(path.join(home, '.crabglamp'), { recursive: true });
  await writeFile(path.join(home, AGENT_ENV_PATH), agentEnvFile(env), { mode: 0o600 });
  if (tlsSetup) await writeTls(path.join(home, GATEWAY_TLS_DIR), tlsSetup);
  const tls = await GatewayTls.load(home);
  const gatewayEnv = { HOME: home };
  const gateway = createGatewayServer({
    tls,
    home,
    env: gatewayEnv,
    auth: new GatewayAuth(gatewayEnv),
    assets: async () => new Map(),
    version: 'test',
    secureCookies: false,
  });
  await new Promise<void>((resolve) => gateway.server.listen(port, '127.0.0.1', resolve));
  return {
    home,
    /** The gateway's TLS (a certificate can be handed to it as a push would). */
    tls,
    port: (gateway.server.address() as AddressInfo).port,
    async close() {
      await gateway.close();
      gateway.server.closeAllConnections();
      await rm(root, { recursive: true, force: true });
    },
  };
}

async function writeTls(dir: string, setup: TestGatewayTls): Promise<void> {
  await mkdir(dir, { mode: 0o700 });
  const ca = 'issued' in setup ? setup.issued.cert : setup.enrolling;
  await writeFile(path.join(dir, GATEWAY_TLS_FILES.ca), ca);
  if ('issued' in setup) {
    const { key, cert } = await setup.issued.machineCredentials(setup.machineId);
    await writeFile(path.join(dir, GATEWAY_TLS_FILES.key), key, { mode: 0o600 });
    await writeFile(path.join(dir, GATEWAY_TLS_FILES.cert), cert);
    return;
  }
  const [command, ...args] = ENROLLMENT_KEY_COMMAND;
  await promisify(execFile)(command as string, args, { cwd: dir });
}
