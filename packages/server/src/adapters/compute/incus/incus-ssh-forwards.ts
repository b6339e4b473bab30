import { ANY_MEMBER, type IncusPublicSsh } from '../../../config/incus-public-ssh.js';
import type { Logger } from '../../../logger.js';
import type { IncusBridgeFirewall } from './incus-bridge-firewall.js';
import { type IncusClient, isNotFound } from './incus-client.js';
import { complete, type Instance, NIC, pinnedAddress } from './incus-instance.js';
import { KIND_KEY, MACHINE_ID_KEY } from './incus-instance-spec.js';
import {
  changeForward,
  type Forward,
  type ForwardPort,
  hasExpiredHold,
  listForwards,
} from './incus-network-forward.js';
import { freePort, type PortChoice, SSH_PORT_KEY, usedPorts } from './incus-ssh-ports.js';

/** `INCUS_SSH_PORT_HOLD_HOURS`'s default. */
const DEFAULT_HOLD_MS = 24 * 3_600_000;

/** Where an instance is: its cluster member (`none` on a single server) and its project. */
type Placed = Instance & { readonly location?: string; readonly project?: string };

/**
 * Each port entry names its machine and the service's project, so the entries are the record of
 * which port is whose after a crash (the forward is shared by every project on the bridge).
 */
const entryDescription = (machineId: string, project: string) =>
  `svc ssh: machine ${machineId} project ${project}`;
const ENTRY = /^svc ssh: machine (\S+) project (\S+)$/;

const ownerOf = (entry: ForwardPort) => {
  const match = ENTRY.exec(entry.description ?? '');
  return match ? { machineId: match[1] as string, project: match[2] as string } : undefined;
};

/**
 * Outside SSH to Plain VMs: one Incus network forward per public address (per cluster member),
 * holding one port entry per VM (listen port → the VM's pinned address, port 22). Forwarded
 * traffic is DNAT only, so the VM's firewall sees the outside client's own address. Every change
 * runs under the lock the bridge's firewall takes (Incus rewrites the bridge's nftables for
 * forwards as for ACLs, and does not serialize the two), is written with the forward's ETag and
 * read back (`changeForward`).
 *
 * Without a public address (`INCUS_PUBLIC_ADDRESS` unset, or none for a VM's cluster member) a
 * VM gets no entry and any it had is removed: a public port left behind would keep forwarding to
 * its pinned address, which a later machine, maybe another tenant's, may be given.
 */
export class IncusSshForwards {
  constructor(
    readonly client: IncusClient,
    readonly firewall: IncusBridgeFirewall,
    readonly options: {
      readonly network: string;
      readonly project: string;
      /** Unset: no outside SSH; this project's entries are removed. */
      readonly publicSsh?: IncusPublicSsh | undefined;
      readonly log: Logger;
    },
    readonly isClustered: () => boolean,
  ) {}

  /** The public address of the member an instance is on; `undefined` if it has none. */
  addressOf(instance: Placed): string | undefined {
    const addresses = this.options.publicSsh?.addresses ?? {};
    return addresses[instance.location ?? ''] ?? addresses[ANY_MEMBER];
  }

  /** Where the API reports the VM's SSH server: its port on the public address, once it has one. */
  endpoint(instance: Instance): { host: string; port: number } | undefined {
    const host = this.addressOf(instance);
    const port = Number(instance.config[SSH_PORT_KEY]);
    return host && Number.isInteger(port) && port > 0 ? { host, port } : undefined;
  }

  /**
   * Gives the Plain VM a port entry (keeping the one it has, or taking back the port it recorded
   * when that is still free) and records its port on the instance. Idempotent.
   */
  ensure(instance: Instance): Promise<void> {
    const machineId = instance.config[MACHINE_ID_KEY] as string;
    const { publicSsh } = this.options;
    if (!publicSsh) return Promise.resolve();
    return this.firewall.exclusive(async () => {
      // Deleted meanwhile (a destroy takes the same lock): nothing to forward to.
      const current = await this.#instance(instance.name);
      if (!current) return;
      const listen = this.addressOf(current);
      if (!listen) return;
      const member = this.#member(current);
      const target = pinnedAddress(current);
      const recorded = Number(current.config[SSH_PORT_KEY]);
      let choice: PortChoice = { port: 0 };
      await this.#change({ listen, member }, async (ports, held) => {
        const own = ports.find((entry) => this.#isOwn(entry, machineId));
        if (own && own.target_address === target) {
          // Kept, or written by this change's previous attempt (whose choice is the one to log).
          if (choice.port !== Number(own.listen_port)) choice = { port: Number(own.listen_port) };
          return ports;
        }
        const others = ports.filter((entry) => !this.#isOwn(entry, machineId));
        const used = await usedPorts(this.client, others, {
          name: instance.name,
          project: this.options.project,
        });
        choice = freePort(publicSsh.ports, used, recorded, held, Date.now());
        const { port } = choice;
        return [
          ...others,
          {
            description: entryDescription(machineId, this.options.project),
            protocol: 'tcp',
            listen_port: String(port),
            target_address: target,
            target_port: '22',
          },
        ];
      });
      const { port, heldMs } = choice;
      if (heldMs !== undefined) {
        this.options.log.info(
          { port, heldHours: Math.round(heldMs / 360_000) / 10, listen },
          'every other public SSH port is in use: the one held longest since its VM was destroyed is handed on',
        );
      }
      if (String(port) !== current.config[SSH_PORT_KEY]) {
        await this.client.call('PATCH', `/1.0/instances/${instance.name}`, {
          body: { config: { [SSH_PORT_KEY]: String(port) } },
        });
      }
    });
  }

  /** Removes the machine's port entries wherever they are; none is fine. */
  remove(machineId: string): Promise<void> {
    return this.firewall.exclusive(() => this.#removeWhere((owner) => owner === machineId));
  }

  /**
   * The reconciler's pass: every Plain VM of the project with a public address gets its entry
   * back when it lost it (or moved when the address changed); entries of this project whose
   * machine has no instance, or is not to be on that address (any more), are removed.
   */
  async repair(instances: readonly Instance[]): Promise<void> {
    const plainVms = (instances as Placed[]).filter(
      (instance) => instance.config[KIND_KEY] === 'plain_vm' && instance.config[MACHINE_ID_KEY],
    );
    const forwards = await listForwards(this.client, this.options.network);
    for (const instance of plainVms) {
      if (!this.addressOf(instance)) continue;
      const id = instance.config[MACHINE_ID_KEY] as string;
      const isInPlace = forwards.some(
        (forward) =>
          this.#isItsForward(forward, instance) &&
          forward.ports.some(
            (entry) =>
              this.#isOwn(entry, id) &&
              entry.target_address === instance.devices[NIC]?.['ipv4.address'] &&
              entry.listen_port === instance.config[SSH_PORT_KEY],
          ),
      );
      if (!isInPlace) await this.ensure(instance);
    }
    // Entries whose machine is gone, or on another address than its member's (one changed).
    const isStale = (byId: ReadonlyMap<string, Placed>) => (owner: string, forward: Forward) => {
      const instance = byId.get(owner);
      return !instance || !this.#isItsForward(forward, instance);
    };
    const live = new Map(plainVms.map((vm) => [vm.config[MACHINE_ID_KEY] as string, vm]));
    if (this.#hasEntries(forwards, isStale(live))) {
      await this.firewall.exclusive(async () => {
        // Looked at again under the lock: a VM made meanwhile has its instance by now.
        const now = await this.#projectInstances();
        const byId = new Map(now.map((vm) => [vm.config[MACHINE_ID_KEY] as string, vm]));
        await this.#removeWhere(isStale(byId));
      });
    }
    // Holds that are over are dropped (and a forward left with nothing is deleted).
    for (const forward of forwards.filter((f) => hasExpiredHold(f, this.#holdMs, Date.now()))) {
      const member = this.isClustered() ? forward.location : undefined;
      await this.firewall.exclusive(() =>
        this.#change({ listen: forward.listen_address, member }, async (ports) => ports),
      );
    }
  }

  #isItsForward(forward: Forward, instance: Placed): boolean {
    const member = this.#member(instance);
    return (
      forward.listen_address === this.addressOf(instance) &&
      (!member || forward.location === member)
    );
  }

  #hasEntries(forwards: readonly Forward[], match: (owner: string, f: Forward) => boolean) {
    return forwards.some((forward) =>
      forward.ports.some(
        (entry) => this.#isOurs(entry) && match(ownerOf(entry)?.machineId ?? '', forward),
      ),
    );
  }

  async #removeWhere(isGone: (machineId: string, forward: Forward) => boolean): Promise<void> {
    for (const forward of await listForwards(this.client, this.options.network)) {
      const gone = (entry: ForwardPort) =>
        this.#isOurs(entry) && isGone(ownerOf(entry)?.machineId ?? '', forward);
      if (!forward.ports.some(gone)) continue;
      const member = this.isClustered() ? forward.location : undefined;
      await this.#change({ listen: forward.listen_address, member }, async (ports) =>
        ports.filter((entry) => !gone(entry)),
      );
    }
  }

  #change(
    at: { listen: string; member: string | undefined },
    change: (ports: ForwardPort[], held: ReadonlyMap<number, number>) => Promise<ForwardPort[]>,
  ) {
    return changeForward(
      this.client,
      this.options.network,
      { ...at, holdMs: this.#holdMs },
      change,
    );
  }

  /** Ports this project frees are held back the same while outside SSH is off (unset). */
  get #holdMs(): number {
    return this.options.publicSsh?.holdMs ?? DEFAULT_HOLD_MS;
  }

  #isOurs(entry: ForwardPort): boolean {
    return ownerOf(entry)?.project === this.options.project;
  }

  #isOwn(entry: ForwardPort, machineId: string): boolean {
    return this.#isOurs(entry) && ownerOf(entry)?.machineId === machineId;
  }

  #member(instance: Placed): string | undefined {
    return this.isClustered() ? instance.location : undefined;
  }

  async #instance(name: string): Promise<Placed | undefined> {
    try {
      return complete(await this.client.call<Placed>('GET', `/1.0/instances/${name}`));
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  async #projectInstances(): Promise<Placed[]> {
    const instances = await this.client.call<Placed[]>('GET', '/1.0/instances', {
      query: { recursion: '1' },
    });
    return instances.map(complete);
  }
}
