import { DEFAULT_FIREWALL_RULES, type FirewallRule } from '@svc/contract';
import { KeyedQueue } from '../../../util/keyed-queue.js';
import { type IncusClient, IncusError, isNotFound } from './incus-client.js';
import { type EgressPolicy, egressRules } from './incus-egress.js';
import { type AclRule, fromAclRules, toAclRules } from './incus-firewall.js';
import { installIngressGuard } from './incus-host-guard.js';
import { MACHINE_ID_KEY } from './incus-instance-spec.js';
import { IncusLock } from './incus-lock.js';

interface Network {
  readonly config: Record<string, string>;
}

interface Acl {
  readonly name: string;
  readonly description?: string;
  readonly config: Record<string, string>;
  readonly ingress: AclRule[];
  readonly egress?: AclRule[];
}

interface InterfaceState {
  readonly addresses?: { family: string; address: string }[];
}

/** What machines may reach besides the bridge's DNS: see `EgressPolicy`. */
export type EgressSettings = Partial<Pick<EgressPolicy, 'service' | 'allow'>>;

const ACLS = 'security.acls';
/** How often a firewall change is tried when Incus fails applying it. */
const INCUS_FAULT_ATTEMPTS = 3;
/** How often a change of the bridge's ACL list is tried against other processes' changes. */
const BRIDGE_ATTEMPTS = 10;

/**
 * Machines' firewalls as Incus network ACLs on the bridge, one per machine and named like its
 * instance. ACLs on an instance's NIC need bridge connection tracking, which some kernels lack
 * ("Protocol error"); on the bridge they work, but then apply to every machine there: each rule
 * names its machine's address, unmatched traffic to a machine is dropped, and each ACL's egress
 * rules say where its machine may go (`incus-egress.ts`).
 */
export class IncusBridgeFirewall {
  /** Every change of an ACL or of the bridge's list: one at a time here, and across processes. */
  readonly #queue = new KeyedQueue();
  readonly #lock: IncusLock;
  #bridgeCidr: string | undefined;
  #hostAddresses: string[] | undefined;
  /** Set once connected: on a cluster, the host's addresses are every member's. */
  isClustered = false;

  /**
   * Whether this host's baseline (`incus-host-guard.ts`) follows the bridge's ACLs: set by the
   * driver on Incus's own host, where it can write the host's nftables.
   */
  hostGuard = false;

  constructor(
    readonly client: IncusClient,
    readonly network: string,
    /** The service's address and the operator's opt-ins (none: only the bridge's DNS). */
    public egress: EgressSettings = {},
  ) {
    this.#lock = new IncusLock(client, `svc-lock-${network}`);
  }

  /**
   * Under the lock, tried again after a failure of Incus itself: applying a network's firewall
   * also fails when an instance's interface comes or goes meanwhile ("Failed to delete bridge
   * children interfaces"), and every task here can simply run again. Then, still under the lock
   * (the last writer writes from the newest ACLs), the host's copy of the machines' ingress
   * rules, unless the task changes none (`ingress: false`).
   */
  #locked<T>(task: () => Promise<T>, { ingress = true } = {}): Promise<T> {
    return this.#queue.run('firewall', () =>
      this.#lock.run(async () => {
        for (let attempt = 1; ; attempt++) {
          try {
            const result = await task();
            if (ingress) await this.#syncHostGuard();
            return result;
          } catch (error) {
            const isIncusFault = error instanceof IncusError && error.status >= 500;
            if (!isIncusFault || attempt >= INCUS_FAULT_ATTEMPTS) throw error;
            await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
          }
        }
      }),
    );
  }

  /**
   * Runs an instance operation under the firewall lock. Incus applies the bridge's whole
   * ruleset, from what its database holds at that moment, also when an instance's interface
   * comes or goes or its devices change; one of those beside an ACL change (another process's)
   * can write the ruleset from a read older than the ACL's commit, and the change is lost from
   * nftables though Incus still lists it (seen: a machine's new rules not enforced, then the
   * previous ones enforced after the next change).
   */
  exclusive<T>(task: () => Promise<T>): Promise<T> {
    return this.#queue.run('firewall', () => this.#lock.run(task));
  }

  /**
   * Writes the host's `to` chain for the bridge from every ACL on it, any service's (see
   * `ingressRuleset`); each change here does so too, under the lock.
   */
  syncHostGuard(): Promise<void> {
    return this.#locked(async () => {});
  }

  async #syncHostGuard(): Promise<void> {
    if (!this.hostGuard) return;
    const attached = new Set(await this.#attached());
    const acls = await this.client.call<Acl[]>('GET', '/1.0/network-acls', {
      query: { recursion: '1' },
    });
    const rules = acls.filter((acl) => attached.has(acl.name)).flatMap((acl) => acl.ingress);
    await installIngressGuard(this.network, rules);
  }

  /** The bridge's own IPv4 address with its prefix (`10.77.0.1/24`). */
  async bridgeCidr(): Promise<string> {
    if (this.#bridgeCidr) return this.#bridgeCidr;
    const network = await this.client.call<Network>('GET', this.#networkPath());
    const cidr = network.config['ipv4.address'];
    if (!cidr?.includes('/')) {
      throw new Error(`Incus network ${this.network} has no IPv4 subnet (ipv4.address)`);
    }
    this.#bridgeCidr = cidr;
    return cidr;
  }

  /**
   * Every IPv4 address of the Incus host, on any interface, as Incus sees them (the host's public
   * address too: a machine reaching it would reach every port the host listens on); on a cluster,
   * every member's (a member's interfaces are listed only with `target`, and a machine on one
   * member reaches the others' addresses through the network as well). Read once, and again with
   * `refresh` (the reconciler's pass).
   */
  async hostAddresses(refresh = false): Promise<string[]> {
    if (this.#hostAddresses && !refresh) return this.#hostAddresses;
    const members = this.isClustered
      ? (await this.client.call<string[]>('GET', '/1.0/cluster/members')).map(nameOf)
      : [undefined];
    const addresses = await Promise.all(members.map((member) => this.#addressesOn(member)));
    this.#hostAddresses = [...new Set(addresses.flat())].sort();
    return this.#hostAddresses;
  }

  /** The IPv4 addresses of one cluster member's interfaces (of the server, without a member). */
  async #addressesOn(member: string | undefined): Promise<string[]> {
    const query = member === undefined ? {} : { query: { target: member } };
    const urls = await this.client.call<string[]>('GET', '/1.0/networks', query);
    const states = await Promise.all(
      urls.map((url) =>
        this.client
          .call<InterfaceState>(
            'GET',
            `/1.0/networks/${encodeURIComponent(nameOf(url))}/state`,
            query,
          )
          // An interface that went away meanwhile has no addresses.
          .catch((error): InterfaceState | Promise<never> =>
            isNotFound(error) ? {} : Promise.reject(error),
          ),
      ),
    );
    return states.flatMap((state) =>
      (state.addresses ?? [])
        .filter((address) => address.family === 'inet')
        .map((address) => address.address),
    );
  }

  /** Where the machines of this bridge may go (`egressRules`). */
  async egressPolicy(): Promise<EgressPolicy> {
    return {
      bridgeCidr: await this.bridgeCidr(),
      hostAddresses: await this.hostAddresses(),
      ...(this.egress.service && { service: this.egress.service }),
      allow: this.egress.allow ?? [],
    };
  }

  /**
   * Rewrites the egress rules of the machine's ACL when they are not what the policy says now
   * (an ACL written by an older version, or before the host's addresses changed); its ingress
   * rules stay. A machine without an ACL is left to `ensure`.
   */
  async alignEgress(name: string, address: string): Promise<boolean> {
    const egress = egressRules(address, await this.egressPolicy());
    return this.#locked(
      async () => {
        const acl = await this.#acl(name);
        if (!acl || sameRules(acl.egress ?? [], egress)) return false;
        const { description, config, ingress } = acl;
        await this.client.call('PUT', this.#aclPath(name), {
          body: { description, config, ingress, egress },
        });
        return true;
      },
      { ingress: false },
    );
  }

  /**
   * Sets the machine's rules (making its ACL and attaching it to the bridge when missing).
   * `owner` is the machine's identity config (id, kind, labels, project), which the ACL carries
   * too, so an ACL whose instance is gone is still found and removed as its machine's.
   */
  async replace(
    name: string,
    owner: Readonly<Record<string, string>>,
    address: string,
    rules: readonly FirewallRule[],
  ): Promise<void> {
    const acl = {
      description: owner[MACHINE_ID_KEY]
        ? `firewall of machine ${owner[MACHINE_ID_KEY]}`
        : 'firewall of an unclaimed warm-pool machine',
      config: owner,
      ingress: toAclRules(rules, address),
      egress: egressRules(address, await this.egressPolicy()),
    };
    await this.#locked(async () => {
      try {
        await this.client.call('PUT', this.#aclPath(name), { body: acl });
      } catch (error) {
        if (!isNotFound(error)) throw error;
        await this.client.call('POST', '/1.0/network-acls', { body: { name, ...acl } });
      }
      await this.#changeBridge((names) => (names.includes(name) ? names : [...names, name]));
    });
  }

  /** Makes sure the machine has an ACL on the bridge, keeping the rules it has. */
  async ensure(
    name: string,
    owner: Readonly<Record<string, string>>,
    address: string,
    rules: readonly FirewallRule[] = DEFAULT_FIREWALL_RULES,
  ): Promise<void> {
    if ((await this.read(name)) === undefined) {
      return this.replace(name, owner, address, rules);
    }
    await this.#locked(() =>
      this.#changeBridge((names) => (names.includes(name) ? names : [...names, name])),
    );
  }

  /**
   * The machine's rules as Incus enforces them: `undefined` when it has no ACL, none when its
   * ACL is not on the bridge (so the reconciler, seeing a difference, puts it back).
   */
  async read(name: string): Promise<FirewallRule[] | undefined> {
    const acl = await this.#acl(name);
    if (!acl) return undefined;
    return (await this.#attached()).includes(name) ? fromAclRules(acl.ingress) : [];
  }

  /** The machine's ACL, `undefined` when it has none. */
  async #acl(name: string): Promise<Acl | undefined> {
    try {
      return await this.client.call<Acl>('GET', this.#aclPath(name));
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  /** The identity config of every machine ACL whose config matches `filter`. */
  async owners(filter: Readonly<Record<string, string>>): Promise<Record<string, string>[]> {
    return (await this.matching(filter))
      .map((acl) => acl.config)
      .filter((config) => config[MACHINE_ID_KEY] !== undefined);
  }

  /** The name and config of every ACL whose config matches `filter` (warm-pool members' too). */
  async matching(
    filter: Readonly<Record<string, string>>,
  ): Promise<{ name: string; config: Record<string, string> }[]> {
    const acls = await this.client.call<Acl[]>('GET', '/1.0/network-acls', {
      query: { recursion: '1' },
    });
    return acls
      .map((acl) => ({ name: acl.name, config: acl.config ?? {} }))
      .filter(({ config }) =>
        Object.entries(filter).every(([key, value]) => config[key] === value),
      );
  }

  /** Detaches the machine's ACL from the bridge and deletes it; a missing one is fine. */
  remove(name: string): Promise<void> {
    return this.#locked(() => this.#remove(name));
  }

  async #remove(name: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      await this.#changeBridge((names) => names.filter((other) => other !== name));
      try {
        await this.client.call('DELETE', this.#aclPath(name));
        return;
      } catch (error) {
        if (isNotFound(error)) return;
        // Put back on the bridge by a writer that read the list before our detach (below).
        const isInUse = error instanceof IncusError && /in use/i.test(error.incusMessage);
        if (!isInUse || attempt >= BRIDGE_ATTEMPTS) throw error;
      }
    }
  }

  async #attached(): Promise<string[]> {
    const network = await this.client.call<Network>('GET', this.#networkPath());
    return (network.config[ACLS] ?? '').split(',').filter(Boolean);
  }

  /**
   * Rewrites the bridge's ACL list (under the lock) until a fresh read shows the change. The
   * ETag and the read-back are for writers that do not take the lock (an operator's `incus
   * network set`): a stale ETag gets 412, and Incus compares it outside any lock of its own, so
   * two writers can both pass and the later undo the earlier.
   */
  async #changeBridge(change: (names: string[]) => string[]): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const { metadata, etag } = await this.client.request<Network>('GET', this.#networkPath());
      const current = (metadata.config[ACLS] ?? '').split(',').filter(Boolean);
      const config: Record<string, string> = {
        [ACLS]: change(current).join(','),
        // Traffic no rule names is dropped silently, not rejected: ingress a machine's
        // firewall does not allow, and egress but what each ACL's `egressRules` let out (so a
        // neighbour reaches a machine only through that machine's own rules).
        'security.acls.default.egress.action': 'drop',
        'security.acls.default.ingress.action': 'drop',
      };
      if (Object.entries(config).every(([key, value]) => (metadata.config[key] ?? '') === value)) {
        return;
      }
      if (attempt >= BRIDGE_ATTEMPTS) {
        throw new Error(`could not update security.acls of Incus network ${this.network}`);
      }
      try {
        await this.client.call('PATCH', this.#networkPath(), {
          body: { config },
          ...(etag && { headers: { 'If-Match': etag } }),
        });
      } catch (error) {
        if (!(error instanceof IncusError && error.status === 412)) throw error;
      }
    }
  }

  #networkPath() {
    return `/1.0/networks/${encodeURIComponent(this.network)}`;
  }

  #aclPath(name: string) {
    return `/1.0/network-acls/${encodeURIComponent(name)}`;
  }
}

/** The name at the end of an Incus URL (`/1.0/networks/eth0`). */
const nameOf = (url: string) => decodeURIComponent(url.split('?')[0]?.split('/').pop() ?? '');

/** Rules as Incus keeps them: absent fields read back as empty strings. */
const canonical = (rules: readonly AclRule[]) =>
  JSON.stringify(
    rules.map((rule) =>
      Object.fromEntries(
        Object.entries(rule)
          .filter(([, value]) => value !== '' && value !== undefined)
          .sort(([a], [b]) => a.localeCompare(b)),
      ),
    ),
  );

const sameRules = (a: readonly AclRule[], b: readonly AclRule[]) => canonical(a) === canonical(b);
