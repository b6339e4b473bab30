import type { FirewallRule } from '@svc/contract';
import { KeyedQueue } from '../../../util/keyed-queue.js';
import type { IncusBridgeFirewall } from './incus-bridge-firewall.js';
import { type IncusClient, IncusError } from './incus-client.js';
import { type Instance, instanceBody, type NewInstance } from './incus-instance.js';
import { freeAddress, MACHINE_ID_KEY, machineMac, POOL_CELL_KEY } from './incus-instance-spec.js';
import { IncusLock } from './incus-lock.js';

/** What the placement reads of an ACL: a machine's carries its id and its address as source. */
interface MachineAcl {
  readonly config?: Record<string, string>;
  readonly egress?: { readonly source?: string }[];
}

/** A writer that does not take the lock (an operator) may pin the address picked meanwhile. */
const ADDRESS_ATTEMPTS = 5;

/**
 * Where a new machine goes: a free address on the bridge, its firewall, then the instance with
 * that address pinned (on a cluster, in the cluster group named like its region).
 */
export class IncusPlacement {
  /**
   * Picking a free address and pinning it is one step, in this process and across processes:
   * Incus refuses an address pinned twice, but checks outside any lock, so two creates at once
   * could both get it.
   */
  readonly #addresses = new KeyedQueue();
  readonly #addressLock: IncusLock;
  /** On a cluster, each machine is placed in the cluster group named like its region. */
  isClustered = false;

  constructor(
    readonly client: IncusClient,
    readonly firewall: IncusBridgeFirewall,
    readonly options: Parameters<typeof instanceBody>[0],
  ) {
    // Held across an instance's create, which for a copy takes as long as its disk.
    this.#addressLock = new IncusLock(client, `svc-lock-${options.network}-addresses`, {
      leaseMs: 120_000,
      waitMs: 180_000,
    });
  }

  create(
    created: Omit<NewInstance, 'address' | 'hwaddr' | 'bridgeCidr'>,
    rules: readonly FirewallRule[],
  ): Promise<void> {
    return this.#addresses.run('pin', () =>
      this.#addressLock.run(() => this.#createPinned(created, rules)),
    );
  }

  /** Creates the firewall, then the instance with a free address pinned; nothing left on failure. */
  async #createPinned(
    created: Omit<NewInstance, 'address' | 'hwaddr' | 'bridgeCidr'>,
    rules: readonly FirewallRule[],
  ) {
    const { name, owner } = created;
    const { addresses: used, macs } = await this.#used();
    // The machine's id, or a warm-pool member's own (`incus-warm-pool.ts`).
    const id = created.spec.id;
    let hwaddr = machineMac(id);
    for (let attempt = 1; macs.has(hwaddr); attempt++) hwaddr = machineMac(id, attempt);
    for (let attempt = 1; ; attempt++) {
      const address = freeAddress(await this.firewall.bridgeCidr(), used);
      if (!address) throw new Error(`no free IPv4 address left on ${this.options.network}`);
      try {
        // The ACL first: once the bridge has ACLs, an address without one is unreachable.
        await this.firewall.replace(name, owner, address, rules);
        const bridgeCidr = await this.firewall.bridgeCidr();
        await this.firewall.exclusive(() =>
          this.client.call('POST', '/1.0/instances', {
            ...(this.isClustered && { query: { target: `@${created.spec.region}` } }),
            body: instanceBody(this.options, { ...created, address, hwaddr, bridgeCidr }),
          }),
        );
        return;
      } catch (error) {
        await this.firewall.remove(name).catch(() => {});
        const isTaken = error instanceof IncusError && /already defined/.test(error.incusMessage);
        if (!isTaken || attempt >= ADDRESS_ATTEMPTS) throw error;
        used.add(address);
      }
    }
  }

  /**
   * Addresses on the bridge already given out: pinned on any instance's NIC, in any project (the
   * bridge is shared by all), leased to an instance (`instanceLeases`), or named by any machine's ACL (one whose instance is gone,
   * until a reconciler removes it, still lets its address out and in: a new machine there would
   * get its rules); and the MACs of every instance's NICs, fixed or given by Incus
   * (`volatile.<nic>.hwaddr`).
   */
  async #used(): Promise<{ addresses: Set<string>; macs: ReadonlySet<string | undefined> }> {
    const [instances, leases, acls] = await Promise.all([
      this.client.call<Instance[]>('GET', '/1.0/instances', {
        query: { recursion: '1', 'all-projects': 'true' },
      }),
      this.client.call<Lease[]>('GET', `/1.0/networks/${this.options.network}/leases`),
      this.client.call<MachineAcl[]>('GET', '/1.0/network-acls', {
        query: { recursion: '1', 'all-projects': 'true' },
      }),
    ]);
    const macs = instanceMacs(instances);
    const addresses = new Set([
      ...instanceLeases(leases, macs),
      ...acls
        .filter((acl) => acl.config?.[MACHINE_ID_KEY] ?? acl.config?.[POOL_CELL_KEY])
        .flatMap((acl) => (acl.egress ?? []).map((rule) => rule.source?.replace(/\/32$/, '')))
        .filter((address): address is string => Boolean(address)),
      ...instances.flatMap((instance) =>
        Object.values(instance.devices ?? {})
          .map((device) => device['ipv4.address'])
          .filter((address): address is string => Boolean(address)),
      ),
    ]);
    return { addresses, macs };
  }
}

/** A DHCP lease on the bridge as Incus lists it: `static` ones are reservations it made. */
export interface Lease {
  readonly address: string;
  readonly hwaddr?: string;
  readonly type?: string;
}

/** The MACs of every instance's NICs, fixed or given by Incus (`volatile.<nic>.hwaddr`). */
export const instanceMacs = (
  instances: readonly Pick<Instance, 'config' | 'devices'>[],
): ReadonlySet<string | undefined> =>
  new Set(
    instances.flatMap((instance) => [
      ...Object.values(instance.devices ?? {}).map((device) => device.hwaddr?.toLowerCase()),
      ...Object.entries(instance.config ?? {})
        .filter(([key]) => /^volatile\..+\.hwaddr$/.test(key))
        .map(([, value]) => value?.toLowerCase()),
    ]),
  );

/**
 * The leased addresses that are taken: static ones and those held by an instance's NIC. Root in a
 * machine can ask dnsmasq for a lease under any number of made-up MACs (DHCP from 0.0.0.0 passes
 * its firewall); counting those would let one tenant use up the bridge for every new machine,
 * while the service's own machines never lease (their addresses are pinned).
 */
export const instanceLeases = (
  leases: readonly Lease[],
  macs: ReadonlySet<string | undefined>,
): string[] =>
  leases
    .filter((lease) => lease.type === 'static' || macs.has(lease.hwaddr?.toLowerCase()))
    .map((lease) => lease.address);
