import { ANY_MEMBER, type IncusPublicSsh } from '../../../config/incus-public-ssh.js';
import type { IncusBridgeFirewall } from './incus-bridge-firewall.js';
import { type IncusClient, IncusError, isNotFound } from './incus-client.js';
import { complete, type Instance, NIC, pinnedAddress } from './incus-instance.js';
import { KIND_KEY, MACHINE_ID_KEY } from './incus-instance-spec.js';

/** The VM's port on the public address, kept on the instance so a lost entry gets it back. */
export const SSH_PORT_KEY = 'user.svc.ssh-port';

/** Where an instance is: its cluster member (`none` on a single server) and its project. */
type Placed = Instance & { readonly location?: string; readonly project?: string };

interface ForwardPort {
  readonly description: string;
  readonly protocol: string;
  readonly listen_port: string;
  readonly target_address: string;
  readonly target_port?: string;
}

interface Forward {
  readonly listen_address: string;
  readonly description: string;
  readonly config: Record<string, string>;
  readonly ports: ForwardPort[];
  /** The cluster member it lives on (`none` on a single server). */
  readonly location?: string;
}

/** How often a change of a forward is tried against writers that do not take the lock. */
const WRITE_ATTEMPTS = 10;
const FORWARD_DESCRIPTION = 'SSH to Plain VMs (svc)';

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
 * read back.
 */
export class IncusSshForwards {
  constructor(
    readonly client: IncusClient,
    readonly firewall: IncusBridgeFirewall,
    readonly options: {
      readonly network: string;
      readonly project: string;
      readonly publicSsh: IncusPublicSsh;
    },
    readonly isClustered: () => boolean,
  ) {}

  /** The public address of the member an instance is on; `undefined` if it has none. */
  addressOf(instance: Placed): string | undefined {
    const { addresses } = this.options.publicSsh;
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
    return this.firewall.exclusive(async () => {
      // Deleted meanwhile (a destroy takes the same lock): nothing to forward to.
      const current = await this.#instance(instance.name);
      if (!current) return;
      const listen = this.addressOf(current);
      if (!listen) return;
      const member = this.#member(current);
      const target = pinnedAddress(current);
      const recorded = Number(current.config[SSH_PORT_KEY]);
      let port = 0;
      await this.#change(listen, member, async (ports) => {
        const own = ports.find((entry) => this.#isOwn(entry, machineId));
        if (own && own.target_address === target) {
          port = Number(own.listen_port);
          return ports;
        }
        const others = ports.filter((entry) => !this.#isOwn(entry, machineId));
        port = this.#freePort(await this.#usedPorts(others, instance.name), recorded);
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
   * The reconciler's pass: every Plain VM of the project gets its entry back when it lost it, and
   * entries of this project whose machine has no instance are removed.
   */
  async repair(instances: readonly Instance[]): Promise<void> {
    const plainVms = (instances as Placed[]).filter(
      (instance) => instance.config[KIND_KEY] === 'plain_vm' && instance.config[MACHINE_ID_KEY],
    );
    const forwards = await this.#forwards();
    for (const instance of plainVms) {
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
    for (const forward of await this.#forwards()) {
      const gone = (entry: ForwardPort) =>
        this.#isOurs(entry) && isGone(ownerOf(entry)?.machineId ?? '', forward);
      if (!forward.ports.some(gone)) continue;
      const member = this.isClustered() ? forward.location : undefined;
      await this.#change(forward.listen_address, member, async (ports) =>
        ports.filter((entry) => !gone(entry)),
      );
    }
  }

  /**
   * Rewrites one forward's port list with `change` until a fresh read shows the result: made
   * when missing, deleted when it is ours and left empty.
   */
  async #change(
    listen: string,
    member: string | undefined,
    change: (ports: ForwardPort[]) => Promise<ForwardPort[]>,
  ): Promise<void> {
    const path = `/1.0/networks/${encodeURIComponent(this.options.network)}/forwards/${listen}`;
    const query = member ? { target: member } : undefined;
    for (let attempt = 1; ; attempt++) {
      const read = await this.#read(path, query);
      const before = read?.metadata.ports ?? [];
      const after = await change(before);
      if (sameEntries(before, after)) return;
      if (attempt > WRITE_ATTEMPTS) {
        throw new Error(
          `could not update the network forward ${listen} of ${this.options.network}`,
        );
      }
      try {
        if (!read) {
          await this.client.call(
            'POST',
            `/1.0/networks/${encodeURIComponent(this.options.network)}/forwards`,
            {
              ...(query && { query }),
              body: {
                listen_address: listen,
                description: FORWARD_DESCRIPTION,
                config: {},
                ports: after,
              },
            },
          );
        } else if (after.length === 0 && read.metadata.description === FORWARD_DESCRIPTION) {
          await this.client.call('DELETE', path, { ...(query && { query }) });
        } else {
          const { description, config } = read.metadata;
          await this.client.call('PUT', path, {
            ...(query && { query }),
            body: { description, config, ports: after },
            ...(read.etag && { headers: { 'If-Match': read.etag } }),
          });
        }
      } catch (error) {
        // Another writer changed (or made, or deleted) it since our read: read again.
        const isRace = error instanceof IncusError && [404, 409, 412].includes(error.status);
        if (
          !isRace &&
          !(error instanceof IncusError && /already exists/i.test(error.incusMessage))
        ) {
          throw error;
        }
      }
    }
  }

  async #read(path: string, query: Record<string, string> | undefined) {
    try {
      return await this.client.request<Forward>('GET', path, { ...(query && { query }) });
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  /** Every forward of the bridge (on a cluster, every member's). */
  async #forwards(): Promise<Forward[]> {
    const forwards = await this.client.call<Forward[]>(
      'GET',
      `/1.0/networks/${encodeURIComponent(this.options.network)}/forwards`,
      { query: { recursion: '1' } },
    );
    return forwards.map((forward) => ({ ...forward, ports: forward.ports ?? [] }));
  }

  /**
   * Ports taken on one forward, and those recorded by other instances (of any project: one whose
   * entry was lost gets its port back, so nobody else may take it meanwhile).
   */
  async #usedPorts(entries: readonly ForwardPort[], except: string): Promise<Set<number>> {
    const instances = await this.client.call<Placed[]>('GET', '/1.0/instances', {
      query: { recursion: '1', 'all-projects': 'true' },
    });
    return new Set([
      ...entries.flatMap((entry) => portList(entry.listen_port)),
      ...instances
        .filter((instance) => instance.name !== except || instance.project !== this.options.project)
        .map((instance) => Number(instance.config?.[SSH_PORT_KEY]))
        .filter((port) => Number.isInteger(port) && port > 0),
    ]);
  }

  /** The recorded port when it is still free, else the lowest free port of the range. */
  #freePort(used: ReadonlySet<number>, recorded: number): number {
    const { first, last } = this.options.publicSsh.ports;
    if (recorded >= first && recorded <= last && !used.has(recorded)) return recorded;
    for (let port = first; port <= last; port++) if (!used.has(port)) return port;
    throw new Error(`no free SSH port left in INCUS_SSH_PORTS (${first}-${last})`);
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

/** `22000,22005-22007` → its ports. */
function portList(spec: string): number[] {
  return spec.split(',').flatMap((part) => {
    const [from, to] = part.split('-').map(Number);
    if (!from) return [];
    const ports: number[] = [];
    for (let port = from; port <= (to ?? from); port++) ports.push(port);
    return ports;
  });
}

const key = (entry: ForwardPort) =>
  [
    entry.description,
    entry.protocol,
    entry.listen_port,
    entry.target_address,
    entry.target_port ?? '',
  ].join(' ');

function sameEntries(a: readonly ForwardPort[], b: readonly ForwardPort[]): boolean {
  const left = a.map(key).sort();
  const right = b.map(key).sort();
  return left.length === right.length && left.every((entry, i) => entry === right[i]);
}
