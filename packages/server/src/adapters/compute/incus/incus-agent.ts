import { X509Certificate } from 'node:crypto';
import type { Dirent } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { FirewallRule } from '@svc/contract';
import { GATEWAY_TLS_DIR, GATEWAY_TLS_FILES } from '@svc/contract/gateway-tls';
import ipaddr from 'ipaddr.js';
import type { GatewayCa } from '../../../crypto/gateway-ca.js';
import type { CliBuild } from '../../../util/cli-build.js';
import { AGENT_ENV_PATH, agentEnvFile } from '../agent-env-file.js';
import type { IncusClient } from './incus-client.js';

// What an Agent instance is beyond a plain one: the Agent image's user and gateway (see
// scripts/incus-image-agent-root.sh), its credentials and the `svc` build, pushed in through the
// Incus file API, never through the host's filesystem.

/** The image's `agent` user: the Agent's home is theirs, and `svc gateway` runs as them. */
const AGENT_USER = { uid: 1000, gid: 1000 } as const;
const AGENT_HOME = '/home/agent';
/** Where the image's `svc gateway` service listens on the machine's address. */
export const GATEWAY_PORT = 8443;
/** Where the image keeps Node and the one-file `svc` (`/usr/local/bin/svc` runs it). */
const CLI_ROOT = '/opt/svc';
/** The hash of the `svc` build an instance holds, so a start brings a newer one in. */
export const CLI_BUILD_KEY = 'user.svc.cli-build';

/**
 * An Agent's firewall: its gateway, reachable from the host only (where the service's edge
 * proxy runs), so no other machine on the bridge can reach another Agent's gateway.
 */
export function agentFirewall(bridgeCidr: string): FirewallRule[] {
  const [host] = ipaddr.IPv4.parseCIDR(bridgeCidr);
  return [
    {
      direction: 'in',
      protocol: 'tcp',
      port: String(GATEWAY_PORT),
      sourceIps: [`${host.toString()}/32`],
      description: "the service's edge proxy",
    },
  ];
}

/** Writes `~/.crabglamp/agent.env` (the service URL, Agent id and token), the agent's own, 0600. */
export async function pushAgentEnv(
  client: IncusClient,
  instance: string,
  env: Readonly<Record<string, string>>,
): Promise<void> {
  const file = path.posix.join(AGENT_HOME, AGENT_ENV_PATH);
  await client.makeDirectory(instance, path.posix.dirname(file), { ...AGENT_USER, mode: 0o700 });
  await client.pushFile(instance, file, agentEnvFile(env), { ...AGENT_USER, mode: 0o600 });
}

/** When the certificate last given to an Agent's gateway ends (ISO time), kept by the driver. */
export const GATEWAY_CERT_EXPIRES_KEY = 'user.svc.gateway-cert-expires';
/** A running Agent's certificate is renewed by the reconciler within its last days. */
const RENEW_BEFORE_MS = 10 * 24 * 60 * 60_000;

/**
 * Whether an Agent's gateway certificate is in its last days, read from the instance's config
 * (no file read per pass); one pushed before the driver kept its end counts as due.
 */
export function gatewayCertDue(config: Readonly<Record<string, string>>, now = Date.now()) {
  const expires = Date.parse(config[GATEWAY_CERT_EXPIRES_KEY] ?? '');
  return !(expires - now > RENEW_BEFORE_MS);
}

/**
 * Gives the Agent's gateway its TLS (`@svc/contract/gateway-tls`): the service's CA certificate,
 * and a new key with its certificate naming the machine (valid `days`), the agent's own, 0600.
 * Written before each start, with each token and by the reconciler in the certificate's last
 * days; the gateway follows the file while it runs. Answers when the certificate ends.
 */
export async function pushGatewayTls(
  client: IncusClient,
  instance: string,
  ca: GatewayCa,
  machineId: string,
  days?: number,
): Promise<Date> {
  const dir = path.posix.join(AGENT_HOME, GATEWAY_TLS_DIR);
  const { key, cert } = await ca.machineCredentials(machineId, days);
  const own = { ...AGENT_USER, mode: 0o600 };
  await client.makeDirectory(instance, path.posix.dirname(dir), { ...AGENT_USER, mode: 0o700 });
  await client.makeDirectory(instance, dir, { ...AGENT_USER, mode: 0o700 });
  await client.pushFile(instance, path.posix.join(dir, GATEWAY_TLS_FILES.ca), ca.cert, own);
  // The key before its certificate: the gateway reloads when the certificate changes.
  await client.pushFile(instance, path.posix.join(dir, GATEWAY_TLS_FILES.key), key, own);
  await client.pushFile(instance, path.posix.join(dir, GATEWAY_TLS_FILES.cert), cert, own);
  return new Date(new X509Certificate(cert).validTo);
}

/**
 * Brings a tree of this host (an adopted bundle's home: files and directories only) into the
 * Agent's home, owned by the agent, with the tree's modes. Parents are made before what they hold.
 */
export async function pushHome(client: IncusClient, instance: string, dir: string): Promise<void> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const relative = (entry: Dirent) => path.relative(dir, path.join(entry.parentPath, entry.name));
  const ordered = entries
    .map((entry) => ({ entry, relative: relative(entry) }))
    .sort((a, b) => a.relative.split(path.sep).length - b.relative.split(path.sep).length);
  for (const { entry, relative: rel } of ordered) {
    const source = path.join(dir, rel);
    const target = path.posix.join(AGENT_HOME, ...rel.split(path.sep));
    const mode = (await stat(source)).mode & 0o777;
    if (entry.isDirectory()) {
      await client.makeDirectory(instance, target, { ...AGENT_USER, mode });
    } else if (entry.isFile()) {
      await client.pushFile(instance, target, await readFile(source), { ...AGENT_USER, mode });
    } else {
      throw new Error(`${rel} in an adopted home is neither a file nor a directory`);
    }
  }
}

/**
 * Brings `build` into the instance's /opt/svc, beside the Node binary the image carries, root's
 * with the build's installed modes (readable by all, whatever the umask it was built under).
 * Parent directories sort before their files; directory creation is idempotent in Incus.
 */
export async function pushCliBuild(
  client: IncusClient,
  instance: string,
  dir: string,
  build: CliBuild,
): Promise<void> {
  const root = { uid: 0, gid: 0 };
  for (const file of build.files) {
    const target = path.posix.join(CLI_ROOT, file.relative);
    if (file.isDirectory) {
      await client.makeDirectory(instance, target, { ...root, mode: file.mode });
    } else {
      const content = await readFile(path.join(dir, file.relative));
      await client.pushFile(instance, target, content, { ...root, mode: file.mode });
    }
  }
}
