import { DEFAULT_FIREWALL_RULES, type FirewallRule } from '@svc/contract';
import type { Logger } from '../../../logger.js';
import { KeyedQueue } from '../../../util/keyed-queue.js';
import {
  type ComputeDriver,
  ComputeFailure,
  type CreateServerSpec,
  type ServerInfo,
} from '../compute-driver.js';
import { IncusBridgeFirewall } from './incus-bridge-firewall.js';
import { IncusClient, IncusError, isNotFound } from './incus-client.js';
import {
  complete,
  type Instance,
  info,
  NIC,
  pinnedAddress,
  requireName,
  type WritableInstance,
} from './incus-instance.js';
import {
  freeAddress,
  instanceLimits,
  instanceName,
  KIND_KEY,
  LABEL_PREFIX,
  labelConfig,
  labelsOf,
  MACHINE_ID_KEY,
  staticNetworkConfig,
} from './incus-instance-spec.js';
import { IncusLock } from './incus-lock.js';

export interface IncusDriverOptions {
  readonly socketPath: string;
  readonly project: string;
  /** The managed bridge machines are attached to, and whose ACLs are their firewalls. */
  readonly network: string;
  readonly storagePool: string;
  /** Scales the size table's CPU, memory and disk (development hosts are small). */
  readonly sizeFactor: number;
}

const STOP_TIMEOUT_S = 30;
/**
 * The clone's own id, set once its copied identity is replaced, so a retry knows whether it was
 * (a copied value names the source, not the clone).
 */
const FRESH_IDENTITY_KEY = 'user.svc.fresh-identity';
/** A writer that does not take the lock (an operator) may pin the address picked meanwhile. */
const ADDRESS_ATTEMPTS = 5;

/**
 * Machines as Incus system containers on one host (its Unix socket). Each is the instance
 * `svc-<machine id>`, tagged with `user.svc.machine-id` so a retry after a crash finds it, with
 * its IPv4 address pinned on the bridge (so its firewall, which names that address, is right
 * before it first boots, and a copy cannot take its source's DHCP lease). Plain VMs only so far:
 * Agents need an Agent image, which does not exist yet.
 */
export class IncusComputeDriver implements ComputeDriver {
  readonly name = 'incus';
  readonly #client: IncusClient;
  readonly #firewall: IncusBridgeFirewall;
  /** One change per machine at a time in this process (a retried job may meet a late one). */
  readonly #serial = new KeyedQueue();
  /**
   * Picking a free address and pinning it is one step, in this process and across processes:
   * Incus refuses an address pinned twice, but checks outside any lock, so two creates at once
   * could both get it.
   */
  readonly #addresses = new KeyedQueue();
  readonly #addressLock: IncusLock;

  constructor(
    readonly options: IncusDriverOptions,
    readonly log: Logger,
  ) {
    this.#client = new IncusClient({ socketPath: options.socketPath, project: options.project });
    this.#firewall = new IncusBridgeFirewall(this.#client, options.network);
    // Held across an instance's create, which for a copy takes as long as its disk.
    this.#addressLock = new IncusLock(this.#client, `svc-lock-${options.network}-addresses`, {
      leaseMs: 120_000,
      waitMs: 180_000,
    });
  }

  /** Fails with a message naming the socket when the daemon does not answer. */
  async connect(): Promise<void> {
    await this.#client.ping();
  }

  async close(): Promise<void> {
    this.#client.close();
  }

  createServer(spec: CreateServerSpec): Promise<ServerInfo> {
    return this.#serial.run(spec.id, () => this.#createServer(spec));
  }

  async #createServer(spec: CreateServerSpec): Promise<ServerInfo> {
    const name = requireName(spec.id);
    if (!spec.login) {
      throw new Error('the incus compute driver runs Plain VMs only; Agents are not supported yet');
    }
    const existing = await this.#find(name);
    if (existing) {
      // A retry after a crash: finish what the first attempt left (identity, firewall, power).
      if (spec.sourceServerId && existing.config[FRESH_IDENTITY_KEY] !== spec.id) {
        await this.#freshIdentity(name, spec);
      }
      await this.#firewall.ensure(name, spec.id, pinnedAddress(existing), spec.firewall);
      await this.#start(name);
      return info(await this.#require(spec.id));
    }
    const source = spec.sourceServerId
      ? await this.#require(spec.sourceServerId)
      : await this.#requireImage(spec.image);
    await this.#addresses.run('pin', () =>
      this.#addressLock.run(() => this.#createPinned(name, spec, source)),
    );
    if (spec.sourceServerId) await this.#freshIdentity(name, spec);
    await this.#start(name);
    return info(await this.#require(spec.id));
  }

  /** Creates the firewall, then the instance with a free address pinned; nothing left on failure. */
  async #createPinned(name: string, spec: CreateServerSpec, source: Instance | string) {
    const used = await this.#usedAddresses();
    for (let attempt = 1; ; attempt++) {
      const address = freeAddress(await this.#firewall.bridgeCidr(), used);
      if (!address) throw new Error(`no free IPv4 address left on ${this.options.network}`);
      try {
        // The ACL first: once the bridge has ACLs, an address without one is unreachable.
        await this.#firewall.replace(
          name,
          spec.id,
          address,
          spec.firewall ?? DEFAULT_FIREWALL_RULES,
        );
        await this.#client.call('POST', '/1.0/instances', {
          body: this.#instanceBody(name, spec, source, address, await this.#firewall.bridgeCidr()),
        });
        return;
      } catch (error) {
        await this.#firewall.remove(name).catch(() => {});
        const isTaken = error instanceof IncusError && /already defined/.test(error.incusMessage);
        if (!isTaken || attempt >= ADDRESS_ATTEMPTS) throw error;
        used.add(address);
      }
    }
  }

  #instanceBody(
    name: string,
    spec: CreateServerSpec,
    source: Instance | string,
    address: string,
    bridgeCidr: string,
  ) {
    const limits = instanceLimits(spec.size, spec.region, this.options.sizeFactor);
    return {
      name,
      type: 'container',
      // A copy of a running container needs no snapshot; Incus gives the copy a new MAC
      // (`volatile.*` is not copied) and a new instance name, which the image's templates make
      // cloud-init's instance-id, so cloud-init runs again in it.
      source:
        typeof source === 'string'
          ? { type: 'image', alias: source }
          : { type: 'copy', source: source.name, instance_only: true },
      config: {
        [MACHINE_ID_KEY]: spec.id,
        [KIND_KEY]: spec.labels.kind ?? 'plain_vm',
        ...labelConfig(spec.labels),
        ...(spec.userData !== undefined && { 'cloud-init.user-data': spec.userData }),
        'cloud-init.network-config': staticNetworkConfig(address, bridgeCidr),
        'limits.cpu': String(limits.cpu),
        'limits.memory': `${limits.memoryMiB}MiB`,
      },
      devices: {
        // `size` is enforced by btrfs, zfs and lvm pools; a `dir` pool ignores it.
        root: {
          type: 'disk',
          path: '/',
          pool: this.options.storagePool,
          size: `${limits.diskGiB}GiB`,
        },
        [NIC]: { type: 'nic', network: this.options.network, name: NIC, 'ipv4.address': address },
      },
    };
  }

  /**
   * A copy keeps its source's config and files: empty `/etc/machine-id` so systemd makes a new
   * one at the first boot, and drop the source's labels the clone was not given.
   */
  async #freshIdentity(name: string, spec: CreateServerSpec) {
    await this.#client.pushFile(name, '/etc/machine-id', '', { uid: 0, gid: 0, mode: 0o444 });
    const path = `/1.0/instances/${name}`;
    const { metadata, etag } = await this.#client.request<Instance & WritableInstance>('GET', path);
    const stale = Object.keys(metadata.config).filter(
      (key) => key.startsWith(LABEL_PREFIX) && !(key.slice(LABEL_PREFIX.length) in spec.labels),
    );
    const config: Record<string, string> = { ...metadata.config, [FRESH_IDENTITY_KEY]: spec.id };
    for (const key of stale) delete config[key];
    const { architecture, devices, ephemeral, profiles, stateful, description } = metadata;
    await this.#client.call('PUT', path, {
      body: { architecture, config, devices, ephemeral, profiles, stateful, description },
      ...(etag && { headers: { 'If-Match': etag } }),
    });
  }

  powerOn(id: string): Promise<void> {
    return this.#serial.run(id, async () => {
      await this.#require(id);
      await this.#start(requireName(id));
    });
  }

  powerOff(id: string): Promise<void> {
    return this.#serial.run(id, async () => {
      const instance = await this.#require(id);
      if (instance.status === 'Running') await this.#stop(instance.name);
    });
  }

  reboot(id: string): Promise<void> {
    return this.#serial.run(id, async () => {
      const instance = await this.#require(id);
      if (instance.status !== 'Running') return this.#start(instance.name);
      await this.#changeState(instance.name, 'restart', 'is not running');
    });
  }

  deleteServer(id: string): Promise<void> {
    return this.#serial.run(id, async () => {
      const name = instanceName(id);
      if (!name) return;
      const instance = await this.#find(name);
      if (instance?.status === 'Running') {
        await this.#client.call('PUT', `/1.0/instances/${name}/state`, {
          body: { action: 'stop', force: true },
        });
      }
      if (instance)
        await this.#ignoreMissing(this.#client.call('DELETE', `/1.0/instances/${name}`));
      await this.#firewall.remove(name);
    });
  }

  async getServer(id: string): Promise<ServerInfo | undefined> {
    const name = instanceName(id);
    const instance = name && (await this.#find(name));
    return instance ? info(instance) : undefined;
  }

  async listServers(labels: Readonly<Record<string, string>>): Promise<ServerInfo[]> {
    return (await this.#instances('2'))
      .filter((instance) => instance.config[MACHINE_ID_KEY] !== undefined)
      .filter((instance) => {
        const own = labelsOf(instance.config);
        return Object.entries(labels).every(([key, value]) => own[key] === value);
      })
      .map(info);
  }

  /**
   * Plain VMs carry no environment: their `bootstrapEnv` is empty and nothing on them reads
   * `~/.crabglamp/agent.env`, so there is nothing to write (Agents, which read it, are not yet
   * supported by this driver).
   */
  setBootstrapEnv(id: string): Promise<void> {
    return this.#serial.run(id, async () => {
      await this.#require(id);
    });
  }

  setFirewall(id: string, rules: readonly FirewallRule[]): Promise<FirewallRule[]> {
    return this.#serial.run(id, async () => {
      const instance = await this.#require(id);
      await this.#firewall.replace(instance.name, id, pinnedAddress(instance), rules);
      return (await this.#firewall.read(instance.name)) ?? [];
    });
  }

  async getFirewall(id: string): Promise<FirewallRule[] | undefined> {
    const name = instanceName(id);
    if (!name || !(await this.#find(name))) return undefined;
    // A machine whose ACL is gone has no rules: the reconciler puts the stored ones back.
    return (await this.#firewall.read(name)) ?? [];
  }

  async #start(name: string) {
    await this.#changeState(name, 'start', 'already running');
  }

  /** A clean shutdown first; a machine that ignores it is stopped by force. */
  async #stop(name: string) {
    try {
      await this.#changeState(name, 'stop', 'already stopped', { timeout: STOP_TIMEOUT_S });
    } catch (error) {
      this.log.warn({ err: error, instance: name }, 'clean stop failed; forcing it');
      await this.#changeState(name, 'stop', 'already stopped', { force: true });
    }
  }

  /** A state change; Incus's answer that it is already done counts as done (idempotent calls). */
  async #changeState(name: string, action: string, done: string, extra: object = {}) {
    try {
      await this.#client.call('PUT', `/1.0/instances/${name}/state`, {
        body: { action, ...extra },
      });
    } catch (error) {
      if (error instanceof IncusError && error.incusMessage.includes(done)) return;
      throw error;
    }
  }

  async #find(name: string): Promise<Instance | undefined> {
    try {
      return complete(
        await this.#client.call<Instance>('GET', `/1.0/instances/${name}`, {
          query: { recursion: '1' },
        }),
      );
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  /** Every instance of the project (`recursion` 2 adds their state). */
  async #instances(recursion: '1' | '2'): Promise<Instance[]> {
    const instances = await this.#client.call<Instance[]>('GET', '/1.0/instances', {
      query: { recursion },
    });
    return instances.map(complete);
  }

  async #require(id: string): Promise<Instance> {
    const instance = await this.#find(requireName(id));
    if (!instance) throw new Error(`no machine ${id} in Incus`);
    return instance;
  }

  /** The image alias must exist before anything is made, so a missing one leaves nothing. */
  async #requireImage(alias: string | undefined): Promise<string> {
    if (!alias) throw new ComputeFailure('image_unavailable', 'image_unavailable: no image given');
    try {
      await this.#client.call('GET', `/1.0/images/aliases/${encodeURIComponent(alias)}`);
      return alias;
    } catch (error) {
      if (!isNotFound(error)) throw error;
      throw new ComputeFailure(
        'image_unavailable',
        `image_unavailable: Incus at ${this.options.socketPath} has no image alias "${alias}" in project ${this.options.project}`,
      );
    }
  }

  /** Addresses on the bridge already given out: pinned on any instance's NIC or leased. */
  async #usedAddresses(): Promise<Set<string>> {
    const [instances, leases] = await Promise.all([
      this.#instances('1'),
      this.#client.call<{ address: string }[]>(
        'GET',
        `/1.0/networks/${this.options.network}/leases`,
      ),
    ]);
    return new Set([
      ...leases.map((lease) => lease.address),
      ...instances.flatMap((instance) =>
        Object.values(instance.devices)
          .map((device) => device['ipv4.address'])
          .filter((address): address is string => Boolean(address)),
      ),
    ]);
  }

  async #ignoreMissing(call: Promise<unknown>) {
    try {
      await call;
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }
}
