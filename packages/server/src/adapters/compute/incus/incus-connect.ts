import type { Logger } from '../../../logger.js';
import { ComputeUnavailable } from '../compute-driver.js';
import { requireBridgeNetfilter } from './incus-bridge-netfilter.js';
import { type IncusClient, IncusError, IncusUnreachableError, isNotFound } from './incus-client.js';

/**
 * What a project of the service shares with the default project: the images (`incus:setup` and
 * `images build|sync` import them there), the profiles (the default profile gives each machine
 * its root disk and NIC), the networks (the bridge) and storage volumes. A project created with
 * `incus project create` keeps images and profiles of its own, empty: every machine would fail
 * with `image_unavailable`.
 */
export const SHARED_PROJECT_CONFIG: Readonly<Record<string, string>> = {
  'features.images': 'false',
  'features.profiles': 'false',
  'features.storage.volumes': 'false',
  'features.networks': 'false',
};

/** The features an existing project must leave off for the service's machines to work. */
const REQUIRED_SHARED = ['features.images', 'features.profiles', 'features.networks'];

interface Project {
  readonly config: Record<string, string>;
}

/**
 * What the driver checks before the service starts, each failure one line naming what to do:
 * the daemon answers (and, remote, trusts us), the project exists sharing the default project's
 * images and profiles (created so when missing, said once in the log), the bridge exists with an
 * IPv4 subnet, and so does the storage pool; on the local socket, the host's kernel filters
 * bridged traffic (`requireBridgeNetfilter`). Answers what the driver needs of them.
 */
export async function connectIncus(
  client: IncusClient,
  options: { readonly project: string; readonly network: string; readonly storagePool: string },
  log: Logger,
): Promise<{ isClustered: boolean; bridgeCidr: string; bridgeIpv6Cidr?: string }> {
  if (!client.options.remote) await requireBridgeNetfilter();
  try {
    const { isClustered } = await client.ping();
    await ensureProject(client, options.project, log);
    const { bridgeCidr, bridgeIpv6Cidr } = await requireBridge(client, options.network);
    await requirePool(client, options.storagePool);
    return { isClustered, bridgeCidr, ...(bridgeIpv6Cidr && { bridgeIpv6Cidr }) };
  } catch (error) {
    // An absent daemon and Incus's own refusals are the operator's to fix: their message alone.
    if (error instanceof IncusError || error instanceof IncusUnreachableError) {
      throw new ComputeUnavailable(error.message, { cause: error });
    }
    throw error;
  }
}

/** The project, created when missing; one that keeps its own images or profiles is refused. */
async function ensureProject(client: IncusClient, project: string, log: Logger): Promise<void> {
  // The default project holds the images and the profile itself.
  if (project === 'default') return;
  let existing = await findProject(client, project);
  if (!existing) {
    try {
      await client.call('POST', '/1.0/projects', {
        body: { name: project, config: SHARED_PROJECT_CONFIG },
      });
      log.info(
        { project, config: SHARED_PROJECT_CONFIG },
        `created Incus project ${project}, sharing the default project's images, profiles and networks`,
      );
      return;
    } catch (error) {
      // Another process starting beside this one may have made it meanwhile.
      existing = await findProject(client, project);
      if (!existing) {
        const why = error instanceof IncusError ? error.incusMessage : (error as Error).message;
        throw new ComputeUnavailable(
          `Incus at ${client.location} did not create project ${project} (INCUS_PROJECT): ${why}; create it as an Incus administrator with \`incus project create ${project} ${projectFlags()}\``,
        );
      }
    }
  }
  const own = REQUIRED_SHARED.filter((key) => existing.config[key] === 'true');
  if (own.length > 0) {
    throw new ComputeUnavailable(
      `Incus project ${project} (INCUS_PROJECT) keeps its own ${own.join(', ')}, so it lacks the default project's images, profile and bridge that machines need: while it is empty, run \`incus project set ${project} ${own.map((key) => `${key}=false`).join(' ')}\`, or name a project that does not exist yet and the service creates it`,
    );
  }
}

async function findProject(client: IncusClient, project: string): Promise<Project | undefined> {
  try {
    return await client.call<Project>('GET', `/1.0/projects/${encodeURIComponent(project)}`);
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

/** The bridge's IPv4 address with its prefix (`10.77.0.1/24`). */
async function requireBridge(
  client: IncusClient,
  network: string,
): Promise<{ bridgeCidr: string; bridgeIpv6Cidr?: string }> {
  let config: Record<string, string>;
  try {
    ({ config } = await client.call<Project>(
      'GET',
      `/1.0/networks/${encodeURIComponent(network)}`,
    ));
  } catch (error) {
    if (!isNotFound(error)) throw error;
    throw new ComputeUnavailable(
      `Incus at ${client.location} has no network ${network} (INCUS_NETWORK): \`sudo npm run incus:setup\` creates incusbr0, or name an existing managed bridge`,
    );
  }
  const cidr = config['ipv4.address'];
  if (!cidr?.includes('/')) {
    throw new ComputeUnavailable(
      `Incus network ${network} (INCUS_NETWORK) has no IPv4 subnet: give it one with \`incus network set ${network} ipv4.address=10.77.0.1/24\`, or name another bridge`,
    );
  }
  // `none`, `auto` before Incus picked one, or unset: the bridge has no IPv6 address of its own.
  const cidr6 = config['ipv6.address'];
  return {
    bridgeCidr: cidr,
    ...(cidr6?.includes(':') && cidr6.includes('/') && { bridgeIpv6Cidr: cidr6 }),
  };
}

async function requirePool(client: IncusClient, pool: string): Promise<void> {
  try {
    await client.call('GET', `/1.0/storage-pools/${encodeURIComponent(pool)}`);
  } catch (error) {
    if (!isNotFound(error)) throw error;
    throw new ComputeUnavailable(
      `Incus at ${client.location} has no storage pool ${pool} (INCUS_STORAGE_POOL): \`sudo npm run incus:setup\` creates one named svc, or name an existing pool`,
    );
  }
}

/** `incus project create` flags for the shared features. */
const projectFlags = (): string =>
  Object.entries(SHARED_PROJECT_CONFIG)
    .map(([key, value]) => `-c ${key}=${value}`)
    .join(' ');
