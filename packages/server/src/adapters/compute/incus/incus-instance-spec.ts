import { createHash } from 'node:crypto';
import { type Region, SIZE_SPECS, type Size } from '@svc/contract';
import ipaddr from 'ipaddr.js';
import { stringify } from 'yaml';

/** Config keys starting with `user.` are the caller's: ours carry the machine's identity. */
export const MACHINE_ID_KEY = 'user.svc.machine-id';
export const KIND_KEY = 'user.svc.kind';
/** The Incus project of a machine's ACL (ACLs may be shared by projects, instances are not). */
export const PROJECT_KEY = 'user.svc.project';
export const LABEL_PREFIX = 'user.svc.label.';
/** A warm-pool member's cell (`incus-warm-pool.ts`), on its instance and its ACL. */
export const POOL_CELL_KEY = 'user.svc.pool-cell';

const MACHINE_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The instance (and ACL) name of a machine: Incus names are letters, digits and hyphens, at most
 * 63, starting with a letter, so the machine's UUID gets a prefix. `undefined` for an id that is
 * not ours (nothing of ours can have that name).
 */
export function instanceName(machineId: string): string | undefined {
  return MACHINE_ID.test(machineId) ? `svc-${machineId}` : undefined;
}

export interface InstanceLimits {
  readonly cpu: number;
  readonly memoryMiB: number;
  readonly diskGiB: number;
  /** `limits.processes`: tasks (processes and threads) the machine may have at once. */
  readonly processes: number;
}

/**
 * Tasks per size (`limits.processes`, the pids cgroup, which counts threads too): the host's PID
 * space is shared, and one machine forking without end must run out of its own, not the host's.
 * Plenty for a desktop's worth of Node, editors and builds.
 */
export const PROCESSES_PER_SIZE: Readonly<Record<Size, number>> = {
  small: 2048,
  medium: 4096,
  large: 8192,
};

/**
 * The size table's vCPU, RAM and disk and the processes above, scaled by `factor` (development
 * hosts are smaller than the machines sold), never below one CPU, 256 MiB, 1 GiB and 512 tasks.
 */
export function instanceLimits(size: Size, region: Region, factor: number): InstanceLimits {
  const spec = SIZE_SPECS[size][region];
  return {
    cpu: Math.max(1, Math.round(spec.vcpu * factor)),
    memoryMiB: Math.max(256, Math.round(spec.ramGb * 1024 * factor)),
    diskGiB: Math.max(1, Math.round(spec.diskGb * factor)),
    processes: Math.max(512, Math.round(PROCESSES_PER_SIZE[size] * factor)),
  };
}

/**
 * The fixed MAC of a machine's NIC: locally administered and unicast (first octet `x2`), the
 * rest from a hash of its id and `attempt`, so it is the same at every retry and a clone (another
 * id) gets its own. The caller tries the next attempt while the MAC is taken on the bridge.
 */
export function machineMac(machineId: string, attempt = 0): string {
  const hash = createHash('sha256').update(`${machineId}/${attempt}`).digest();
  const octets = [((hash[0] as number) & 0xfc) | 0x02, ...hash.subarray(1, 6)];
  return octets.map((octet) => octet.toString(16).padStart(2, '0')).join(':');
}

/** What identifies a machine's instance and ACL: its id, kind and labels, and the project. */
export const ownerConfig = (
  machine: { readonly id: string; readonly kind: string; readonly labels: Record<string, string> },
  project: string,
): Record<string, string> => ({
  [MACHINE_ID_KEY]: machine.id,
  [KIND_KEY]: machine.kind,
  [PROJECT_KEY]: project,
  ...labelConfig(machine.labels),
});

/** The labels as instance config, one `user.svc.label.<key>` each. */
export const labelConfig = (labels: Readonly<Record<string, string>>): Record<string, string> =>
  Object.fromEntries(
    Object.entries(labels).map(([key, value]) => [`${LABEL_PREFIX}${key}`, value]),
  );

export const labelsOf = (config: Readonly<Record<string, string>>): Record<string, string> =>
  Object.fromEntries(
    Object.entries(config)
      .filter(([key]) => key.startsWith(LABEL_PREFIX))
      .map(([key, value]) => [key.slice(LABEL_PREFIX.length), value]),
  );

/**
 * The lowest address of the bridge's IPv4 subnet (`10.77.0.1/24`, the bridge's own address
 * with its prefix) that is neither the network, its broadcast, the bridge nor `used`.
 */
export function freeAddress(bridgeCidr: string, used: ReadonlySet<string>): string | undefined {
  const [bridge, bits] = ipaddr.IPv4.parseCIDR(bridgeCidr);
  const first = toNumber(ipaddr.IPv4.networkAddressFromCIDR(bridgeCidr));
  const last = toNumber(ipaddr.IPv4.broadcastAddressFromCIDR(bridgeCidr));
  if (bits > 30) return undefined;
  for (let n = first + 1; n < last; n++) {
    const address = fromNumber(n);
    if (address !== bridge.toString() && !used.has(address)) return address;
  }
  return undefined;
}

/** An IPv4 address as a number, and back (for arithmetic on subnets). */
export const toNumber = (address: ipaddr.IPv4) =>
  address.octets.reduce((sum, octet) => sum * 256 + octet, 0);
export const fromNumber = (n: number) =>
  [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');

/**
 * cloud-init's network configuration (version 1) giving eth0 its pinned address statically, the
 * bridge as gateway and resolver. Not DHCP: dnsmasq keeps the lease of a deleted instance until
 * it expires and would not hand its address to the next machine pinned to it (which then got
 * another, where its firewall rules do not point).
 */
export function staticNetworkConfig(address: string, bridgeCidr: string): string {
  const [bridge, bits] = ipaddr.IPv4.parseCIDR(bridgeCidr);
  return stringify({
    version: 1,
    config: [
      {
        type: 'physical',
        name: 'eth0',
        subnets: [
          {
            type: 'static',
            address: `${address}/${bits}`,
            gateway: bridge.toString(),
            dns_nameservers: [bridge.toString()],
          },
        ],
      },
    ],
  });
}
