import type { CreateServerSpec, ServerInfo } from '../compute-driver.js';
import { GATEWAY_PORT } from './incus-agent.js';
import {
  instanceLimits,
  instanceName,
  KIND_KEY,
  labelsOf,
  MACHINE_ID_KEY,
  staticNetworkConfig,
} from './incus-instance-spec.js';

// An Incus instance as the driver reads it, and what the service sees of it.

/** The instance's one network interface, on the bridge. */
export const NIC = 'eth0';

export interface Instance {
  readonly name: string;
  readonly type?: 'container' | 'virtual-machine';
  readonly status: string;
  readonly config: Record<string, string>;
  readonly devices: Record<string, Record<string, string>>;
  /** When Incus made it (ISO time). */
  readonly created_at?: string;
}

/** What `PUT /1.0/instances/<name>` takes besides `config` and `devices`. */
export interface WritableInstance {
  readonly architecture: string;
  readonly ephemeral: boolean;
  readonly profiles: string[];
  readonly stateful: boolean;
  readonly description: string;
}

/** An instance being created or deleted meanwhile comes without config or devices. */
export const complete = (instance: Instance): Instance => ({
  ...instance,
  config: instance.config ?? {},
  devices: instance.devices ?? {},
});

export function requireName(id: string): string {
  const name = instanceName(id);
  if (!name) throw new Error(`not a machine id: ${JSON.stringify(id)}`);
  return name;
}

export function pinnedAddress(instance: Instance): string {
  const address = instance.devices[NIC]?.['ipv4.address'];
  if (!address) throw new Error(`instance ${instance.name} has no pinned IPv4 address`);
  return address;
}

export const isAgentInstance = (instance: Instance): boolean =>
  instance.config[KIND_KEY] === 'agent';

/**
 * What the service sees: the address pinned in the instance's NIC, never one the running
 * instance reports (root inside may add any address; the edge, pushes, SSH and the firewall must
 * go only where the machine's own is); where a Plain VM's SSH server or an Agent's gateway
 * answers there.
 */
export function info(instance: Instance): ServerInfo {
  const ipv4 = instance.devices[NIC]?.['ipv4.address'];
  return {
    id: instance.config[MACHINE_ID_KEY] as string,
    status: instance.status === 'Running' ? 'running' : 'off',
    labels: labelsOf(instance.config),
    ...(ipv4 && { ipv4 }),
    ...(ipv4 &&
      (isAgentInstance(instance)
        ? { gateway: { host: ipv4, port: GATEWAY_PORT, tls: true } }
        : { ssh: { host: ipv4, port: 22 } })),
  };
}

/**
 * The NIC sends only from its own MAC and pinned address: Incus drops frames, ARP and NDP with
 * any other, and, without IPv6 on the bridge, every IPv6 packet (router advertisements to the
 * host included); with IPv6 on the bridge, all but its own address. Root inside can add a
 * neighbour's address, but nothing it sends with it leaves the machine.
 */
export const NIC_FILTERING = {
  'security.mac_filtering': 'true',
  'security.ipv4_filtering': 'true',
  'security.ipv6_filtering': 'true',
} as const;

/**
 * Instance settings for tenants nobody vouches for (Incus's security guide): each container its
 * own host UID range (`idmap.isolated`: root inside is no host user another container shares),
 * unprivileged, no nesting, no 32-bit syscall entry points (a common kernel attack surface no
 * tenant program here needs), and no guest API socket (`/dev/incus`: cloud-init reads its NoCloud
 * seed from files, the Agent image nothing).
 */
export function hardenedConfig(type: 'container' | 'virtual-machine'): Record<string, string> {
  return {
    'security.guestapi': 'false',
    ...(type === 'container' && {
      'security.idmap.isolated': 'true',
      'security.privileged': 'false',
      'security.nesting': 'false',
      'security.syscalls.deny_compat': 'true',
    }),
  };
}

export interface NewInstance {
  readonly name: string;
  readonly spec: CreateServerSpec;
  /** Its identity config (`ownerConfig`): id, kind, labels, project. */
  readonly owner: Readonly<Record<string, string>>;
  /** An image alias, or the instance to copy (clones). */
  readonly source: Instance | string;
  readonly address: string;
  /** Its NIC's fixed MAC (`machineMac`), free on the bridge. */
  readonly hwaddr: string;
  readonly bridgeCidr: string;
}

/**
 * The `POST /1.0/instances` body of a new machine: from its image, or a copy of `source`, with
 * its identity, labels, cloud-init data, limits and pinned address.
 */
export function instanceBody(
  options: {
    readonly sizeFactor: number;
    readonly storagePool: string;
    readonly network: string;
    readonly instanceType: 'container' | 'virtual-machine';
  },
  { name, spec, owner, source, address, hwaddr, bridgeCidr }: NewInstance,
) {
  const limits = instanceLimits(spec.size, spec.region, options.sizeFactor);
  const type = spec.login ? options.instanceType : 'container';
  return {
    name,
    type,
    // A copy of a running instance needs no snapshot; the copy gets the NIC given here (its own
    // address and MAC, not the source's) and a new instance name, which the image's templates
    // make cloud-init's instance-id, so cloud-init runs again in it.
    source:
      typeof source === 'string'
        ? { type: 'image', alias: source }
        : { type: 'copy', source: source.name, instance_only: true },
    config: {
      ...owner,
      ...(spec.userData !== undefined && { 'cloud-init.user-data': spec.userData }),
      'cloud-init.network-config': staticNetworkConfig(address, bridgeCidr),
      'limits.cpu': String(limits.cpu),
      'limits.memory': `${limits.memoryMiB}MiB`,
      ...(type === 'container' && { 'limits.processes': String(limits.processes) }),
      ...hardenedConfig(type),
    },
    devices: {
      // `size` is enforced by btrfs, zfs and lvm pools; a `dir` pool ignores it.
      root: {
        type: 'disk',
        path: '/',
        pool: options.storagePool,
        size: `${limits.diskGiB}GiB`,
      },
      [NIC]: {
        type: 'nic',
        network: options.network,
        name: NIC,
        'ipv4.address': address,
        hwaddr,
        ...NIC_FILTERING,
      },
    },
  };
}
