// Over 400 lines: the one class behind the ComputeDriver port for Incus, whose methods each
// delegate (placement, firewall, SSH forwards, hardening, the Agent's files, the warm pool and its
// claims) to files beside it; what is left is the order of those calls per move (a claim's among
// them), which reads best in one place. The reconcile pass (alignment, forwards, certificate
// renewal) is the next piece to move out.
import path from 'node:path';
import { CLI_BUILD_DIR, ensureCliBuild } from '@svc/cli/ensure-build';
import {
  DEFAULT_FIREWALL_RULES,
  type FirewallRule,
  type MachineLimits,
  type Region,
  type Size,
} from '@svc/contract';
import ipaddr from 'ipaddr.js';
import type { IncusPublicSsh } from '../../../config/incus-public-ssh.js';
import type { WarmPoolCell } from '../../../config/incus-warm-pool.js';
import type { GatewayCa } from '../../../crypto/gateway-ca.js';
import type { Logger } from '../../../logger.js';
import { readCliBuild } from '../../../util/cli-build.js';
import { KeyedQueue } from '../../../util/keyed-queue.js';
import { runEach } from '../../../util/run-each.js';
import {
  type ComputeDriver,
  ComputeFailure,
  type CreateServerSpec,
  type PoolCellStatus,
  type ResizeChange,
  type ServerInfo,
} from '../compute-driver.js';
import {
  agentFirewall,
  CLI_BUILD_KEY,
  GATEWAY_CERT_EXPIRES_KEY,
  gatewayCertDue,
  pushAgentEnv,
  pushCliBuild,
  pushGatewayTls,
  pushHome,
} from './incus-agent.js';
import { IncusBridgeFirewall } from './incus-bridge-firewall.js';
import { claimAgent, claimPlainVm, isWellMember, restartGateway } from './incus-claim.js';
import { IncusClient, IncusError, type IncusRemote, isNotFound } from './incus-client.js';
import { connectIncus } from './incus-connect.js';
import { serviceEndpoint } from './incus-egress.js';
import { alignmentPatch } from './incus-hardening.js';
import {
  type HostGuardSpec,
  keepHostGuard,
  requireHostGuard,
  SERVICE_ENTRY_S,
} from './incus-host-guard.js';
import { bootableImages } from './incus-images.js';
import {
  complete,
  type Instance,
  info,
  isAgentInstance,
  NIC,
  pinnedAddress,
  requireName,
  type WritableInstance,
} from './incus-instance.js';
import {
  instanceLimits,
  instanceName,
  KIND_KEY,
  LABEL_PREFIX,
  labelConfig,
  labelsOf,
  MACHINE_ID_KEY,
  ownerConfig,
  POOL_CELL_KEY,
  PROJECT_KEY,
} from './incus-instance-spec.js';
import { IncusLock } from './incus-lock.js';
import { IncusPlacement } from './incus-placement.js';
import { IncusQuota } from './incus-quota.js';
import { IncusSnapshots } from './incus-snapshots.js';
import { IncusSshForwards } from './incus-ssh-forwards.js';
import { CLAIMED_KEY, IncusWarmPool, isPoolMember, POOL_KEYS } from './incus-warm-pool.js';

export interface IncusDriverOptions {
  readonly socketPath: string;
  /** A remote server or cluster instead of the socket. */
  readonly remote?: IncusRemote;
  readonly project: string;
  /** The managed bridge machines are attached to, and whose ACLs are their firewalls. */
  readonly network: string;
  readonly storagePool: string;
  /** Scales the size table's CPU, memory and disk (development hosts are small). */
  readonly sizeFactor: number;
  /**
   * What Plain VMs are. Agents are always containers: their token is written into the stopped
   * machine through the file API, which a virtual machine offers only while its agent runs.
   */
  readonly instanceType: 'container' | 'virtual-machine';
  /** The alias of the Agent image (`npm run admin -- images build`). */
  readonly agentImage: string;
  /** The one-file `svc` build Agents run, brought into each at its start when it changed. */
  readonly cliBuildDir: string;
  /** Outside SSH to Plain VMs: a port each on the host's public address. */
  readonly publicSsh?: IncusPublicSsh;
  /**
   * The service's public URL: machines may reach the host (or a private address) only at the
   * address and port their `SVC_API_URL` (`machineServiceUrl` of it) names. Unset: no such port.
   */
  readonly serviceUrl?: string;
  /** IPv4 CIDRs machines may reach though private or link-local (`INCUS_EGRESS_ALLOW`). */
  readonly egressAllow?: readonly string[];
  /**
   * Write and renew the host's baseline on the local socket (default). `false` for the
   * operator's commands run in process (`admin-local.ts`): they need no root, and the service's
   * own processes keep the table.
   */
  readonly hostGuard?: boolean;
  /** How often the baseline is renewed (default `RENEW_EVERY_MS`, 5 minutes). */
  readonly hostGuardRenewMs?: number;
  /** Signs Agents' gateway certificates (`GATEWAY_CA_*`); Agents cannot be made without it. */
  readonly gatewayCa?: GatewayCa;
  /**
   * `INCUS_WARM_POOL`: machines kept booted for creates to claim (`incus-warm-pool.ts`), by the
   * processes that run jobs (`start`); the operator's in-process commands only read it.
   */
  readonly warmPool?: readonly WarmPoolCell[];
}

const STOP_TIMEOUT_S = 30;
/**
 * The clone's own id, set once its copied identity is replaced, so a retry knows whether it was
 * (a copied value names the source, not the clone).
 */
const FRESH_IDENTITY_KEY = 'user.svc.fresh-identity';

/**
 * Machines as Incus system containers on one host (its Unix socket). Each is the instance
 * `svc-<machine id>`, tagged with `user.svc.machine-id` so a retry after a crash finds it, with
 * its IPv4 address pinned on the bridge (so its firewall, which names that address, is right
 * before it first boots, and a copy cannot take its source's DHCP lease). Plain VMs boot their
 * OS image with the cloud-init user data they are given; Agents boot the Agent image, whose
 * `svc gateway` service the edge proxy reaches on the machine's address (see `incus-agent.ts`).
 */
export class IncusComputeDriver implements ComputeDriver {
  readonly name = 'incus';
  readonly #client: IncusClient;
  readonly #firewall: IncusBridgeFirewall;
  /** One change per machine at a time in this process (a retried job may meet a late one). */
  readonly #serial = new KeyedQueue();
  readonly #placement: IncusPlacement;
  /** Made without `publicSsh` too: it then removes the entries left from when it was set. */
  readonly #forwards: IncusSshForwards;
  /** The host's address on the bridge: where machines reach the service on one host. */
  #bridgeHost: string | undefined;
  /** The host's baseline for the bridge (`incus-host-guard.ts`), kept on the local socket only. */
  #guard: HostGuardSpec | undefined;
  /** Stops the renewal of the baseline (`keepHostGuard`), started once it was written. */
  #stopGuard: (() => void) | undefined;
  /** Rescans the pool's btrfs quota accounting when inconsistent: on the local socket only. */
  readonly #quota: IncusQuota | undefined;
  /** Booted machines creates claim (`INCUS_WARM_POOL`); none when no cell is configured. */
  readonly #pool: IncusWarmPool | undefined;
  /** Snapshots of machines' disks, as Incus snapshots of their instances (`incus-snapshots.ts`). */
  readonly snapshots: IncusSnapshots;

  constructor(
    readonly options: IncusDriverOptions,
    readonly log: Logger,
  ) {
    this.#client = new IncusClient({
      socketPath: options.socketPath,
      project: options.project,
      ...(options.remote && { remote: options.remote }),
    });
    this.#firewall = new IncusBridgeFirewall(this.#client, options.network);
    this.#placement = new IncusPlacement(this.#client, this.#firewall, options);
    this.snapshots = new IncusSnapshots(this.#client, {
      find: (id) => this.#findMachine(id),
      serial: (id, task) => this.#serial.run(id, task),
      exclusive: (task) => this.#firewall.exclusive(task),
    });
    if (!options.remote) this.#quota = new IncusQuota(this.#client, options, this.log);
    this.#forwards = new IncusSshForwards(
      this.#client,
      this.#firewall,
      {
        network: options.network,
        project: options.project,
        publicSsh: options.publicSsh,
        log: this.log,
      },
      () => this.#placement.isClustered,
    );
    if (options.warmPool) {
      this.#pool = new IncusWarmPool(
        this.#client,
        { cells: options.warmPool, project: options.project, network: options.network },
        {
          make: (name, spec, owner) => this.#makePoolMember(name, spec, owner),
          isWell: (instance) => isWellMember(this.#client, instance),
          remove: (name) => this.#removeInstance(name),
          firewalls: async () =>
            (await this.#firewall.matching({ [PROJECT_KEY]: options.project }))
              .filter((acl) => acl.config[POOL_CELL_KEY] !== undefined)
              .map((acl) => acl.name),
        },
        this.log,
      );
    }
  }

  /**
   * Fails with one line naming what to do when the daemon does not answer or trust us, or a
   * project, bridge or pool is wrong (`connectIncus`); creates a missing project.
   */
  async connect(): Promise<void> {
    const { isClustered, bridgeCidr, bridgeIpv6Cidr } = await connectIncus(
      this.#client,
      this.options,
      this.log,
    );
    this.#placement.isClustered = isClustered;
    this.#firewall.isClustered = isClustered;
    this.#bridgeHost = ipaddr.IPv4.parseCIDR(bridgeCidr)[0].toString();
    this.#firewall.egress = {
      allow: this.options.egressAllow ?? [],
      ...(this.options.serviceUrl && {
        service: await serviceEndpoint(this.machineServiceUrl(this.options.serviceUrl), this.log),
      }),
    };
    await this.#firewall.hostAddresses();
    // On this host's own daemon the service sets the host's baseline (a remote daemon's host is
    // the operator's: see the README's isolation model), and renews it on a timer of its own,
    // so an entry never depends on a job worker running in this process.
    if (!this.options.remote && this.options.hostGuard !== false) {
      this.#guard = {
        bridge: this.options.network,
        bridgeCidr,
        ...(bridgeIpv6Cidr && { bridgeIpv6Cidr }),
        ...(this.#firewall.egress.service && { service: this.#firewall.egress.service }),
        allow: this.#firewall.egress.allow ?? [],
        serviceEntryS: SERVICE_ENTRY_S,
      };
      this.#firewall.hostGuard = true;
      await this.#writeGuard();
      // The same timer keeps the pool's quota accounting exact between reconciler passes.
      this.#stopGuard ??= keepHostGuard(
        async () => {
          try {
            await this.#writeGuard();
          } finally {
            await this.#keepQuotaExact();
          }
        },
        this.log,
        this.options.hostGuardRenewMs,
      );
    }
    for (const address of Object.values(this.options.publicSsh?.addresses ?? {})) {
      if (ipaddr.IPv4.parse(address).match(ipaddr.IPv4.parseCIDR(bridgeCidr))) {
        throw new Error(
          `INCUS_PUBLIC_ADDRESS: ${address} is on the bridge ${this.options.network} (${bridgeCidr}); give the host's address outside clients reach`,
        );
      }
    }
  }

  /** Keeps the warm pool full from this process on. */
  start(): void {
    this.#pool?.keepFull();
  }

  /** The warm pool's cells, each with its wanted, ready and starting members. */
  async poolStatus(): Promise<PoolCellStatus[]> {
    return (await this.#pool?.status()) ?? [];
  }

  /** The size table scaled by `sizeFactor`, as `instanceBody` sets it on the instance. */
  machineLimits(size: Size, region: Region): MachineLimits {
    const limits = instanceLimits(size, region, this.options.sizeFactor);
    return { vcpu: limits.cpu, ramMb: limits.memoryMiB, diskGb: limits.diskGiB };
  }

  /** The OS images with an alias in the project (the default project's, shared). */
  bootableImages(keys: readonly string[]): Promise<ReadonlySet<string>> {
    return bootableImages(this.#client, keys);
  }

  /** A loopback public URL becomes the host's address on the bridge, the same port. */
  machineServiceUrl(publicUrl: string): string {
    const url = new URL(publicUrl);
    const isLoopback =
      url.hostname === 'localhost' ||
      url.hostname.endsWith('.localhost') ||
      url.hostname === '[::1]' ||
      url.hostname.startsWith('127.');
    if (!isLoopback || !this.#bridgeHost) return publicUrl;
    url.hostname = this.#bridgeHost;
    return url.toString().replace(/\/$/, '');
  }

  /** The baseline written again: this service's entry renewed, a removed table put back. */
  async #writeGuard(): Promise<void> {
    if (!this.#guard) return;
    await requireHostGuard(this.#guard);
    await this.#firewall.syncHostGuard();
  }

  async close(): Promise<void> {
    await this.#pool?.stop();
    this.#stopGuard?.();
    this.#stopGuard = undefined;
    this.#client.close();
  }

  createServer(spec: CreateServerSpec): Promise<ServerInfo> {
    return this.#serial.run(spec.id, () =>
      // With a pool, two attempts of one create in two processes could each claim a member (the
      // name `svc-<id>` no longer makes a second one fail): one at a time, across processes.
      this.#pool
        ? new IncusLock(this.#client, `svc-lock-machine-${spec.id}`, {
            leaseMs: 120_000,
            waitMs: 300_000,
          }).run(() => this.#createServer(spec))
        : this.#createServer(spec),
    );
  }

  async #createServer(spec: CreateServerSpec): Promise<ServerInfo> {
    const name = requireName(spec.id);
    const isAgent = !spec.login;
    const owner = ownerConfig(
      { id: spec.id, kind: isAgent ? 'agent' : 'plain_vm', labels: spec.labels },
      this.options.project,
    );
    const rules = isAgent
      ? agentFirewall(await this.#firewall.bridgeCidr())
      : (spec.firewall ?? DEFAULT_FIREWALL_RULES);
    const existing = await this.#findMachine(spec.id);
    if (existing && existing.name !== name) {
      // Claimed from the warm pool by this create, or by an attempt that died before its end
      // (started again if something stopped it meanwhile).
      if (existing.config[CLAIMED_KEY] !== spec.id) {
        if (existing.status !== 'Running') await this.#start(existing.name);
        await this.#claim(existing, spec, owner, rules);
      }
      return this.#info(await this.#require(spec.id));
    }
    if (existing) {
      // A retry after a crash: finish what the first attempt left (identity, firewall, power).
      if (spec.sourceServerId && existing.config[FRESH_IDENTITY_KEY] !== spec.id) {
        await this.#freshIdentity(name, spec);
      }
      await this.#firewall.ensure(name, owner, pinnedAddress(existing), rules);
    } else {
      // Not its `cloud-init.user-data`: a change there gives cloud-init a new instance id, and
      // it would run again at the next boot (the claim writes the seed instead).
      const claimed = await this.#pool?.claim(spec, owner);
      if (claimed) {
        await this.#claim(claimed, spec, owner, rules);
        return this.#info(await this.#require(spec.id));
      }
      const source = spec.sourceServerId
        ? await this.#require(spec.sourceServerId)
        : await this.#requireImage(isAgent ? this.options.agentImage : spec.image);
      await this.#placement.create({ name, spec, source, owner }, rules);
      if (spec.sourceServerId) await this.#freshIdentity(name, spec);
    }
    if (spec.homeSeed) await pushHome(this.#client, name, spec.homeSeed);
    // Before the first boot: a clone's copied home holds its source's token until this.
    if (isAgent) {
      await pushAgentEnv(this.#client, name, spec.bootstrapEnv);
      await this.#pushTls(name, spec.id);
    } else await this.#forwards.ensure(await this.#require(spec.id));
    await this.#start(name);
    return this.#info(await this.#require(spec.id));
  }

  /**
   * A warm-pool member just taken for `spec` made what a fresh machine of it is: its firewall,
   * then its identity and login (Plain VMs) or its credentials and gateway (Agents). Marked done
   * last, so a retry after a crash does it all again (each step may run twice).
   */
  async #claim(
    member: Instance,
    spec: CreateServerSpec,
    owner: Record<string, string>,
    rules: readonly FirewallRule[],
  ) {
    const name = member.name;
    await this.#firewall.replace(name, owner, pinnedAddress(member), rules);
    if (spec.login) {
      await claimPlainVm(this.#client, name, requireName(spec.id), { ...spec, login: spec.login });
      await this.#forwards.ensure(await this.#require(spec.id));
    } else {
      await claimAgent(this.#client, name, requireName(spec.id));
      await pushAgentEnv(this.#client, name, spec.bootstrapEnv);
      await this.#pushTls(name, spec.id);
      await this.#updateCli(await this.#require(spec.id));
      await restartGateway(this.#client, name);
    }
    await this.#firewall.exclusive(() =>
      this.#client.call('PATCH', `/1.0/instances/${name}`, {
        body: { config: { [CLAIMED_KEY]: spec.id } },
      }),
    );
  }

  /** A warm-pool member made and started as a create would, with the pool's `owner` config. */
  async #makePoolMember(name: string, spec: CreateServerSpec, owner: Record<string, string>) {
    const rules = spec.login ? [] : agentFirewall(await this.#firewall.bridgeCidr());
    const source = await this.#requireImage(spec.login ? spec.image : this.options.agentImage);
    await this.#placement.create({ name, spec, source, owner }, rules);
    await this.#start(name);
  }

  /** An instance stopped and deleted, and its firewall removed; a missing one is fine. */
  async #removeInstance(name: string) {
    const instance = await this.#find(name);
    if (instance?.status === 'Running') {
      await this.#firewall.exclusive(() =>
        this.#client.call('PUT', `/1.0/instances/${name}/state`, {
          body: { action: 'stop', force: true },
        }),
      );
    }
    if (instance)
      await this.#firewall.exclusive(() =>
        this.#ignoreMissing(this.#client.call('DELETE', `/1.0/instances/${name}`)),
      );
    await this.#firewall.remove(name);
  }

  /**
   * A copy keeps its source's config and files: empty `/etc/machine-id` so systemd makes a new
   * one at the first boot, and drop the source's labels the clone was not given (and the warm
   * pool's keys of a source claimed from it).
   */
  async #freshIdentity(name: string, spec: CreateServerSpec) {
    await this.#client.pushFile(name, '/etc/machine-id', '', { uid: 0, gid: 0, mode: 0o444 });
    const path = `/1.0/instances/${name}`;
    const { metadata, etag } = await this.#client.request<Instance & WritableInstance>('GET', path);
    // A copy of a machine claimed from the warm pool carries the pool's keys too.
    const stale = Object.keys(metadata.config).filter(
      (key) =>
        (key.startsWith(LABEL_PREFIX) && !(key.slice(LABEL_PREFIX.length) in spec.labels)) ||
        (POOL_KEYS as readonly string[]).includes(key),
    );
    const config: Record<string, string> = { ...metadata.config, [FRESH_IDENTITY_KEY]: spec.id };
    for (const key of stale) delete config[key];
    const { architecture, devices, ephemeral, profiles, stateful, description } = metadata;
    await this.#firewall.exclusive(() =>
      this.#client.call('PUT', path, {
        body: { architecture, config, devices, ephemeral, profiles, stateful, description },
        ...(etag && { headers: { 'If-Match': etag } }),
      }),
    );
  }

  powerOn(id: string): Promise<void> {
    return this.#serial.run(id, async () => {
      await this.#start((await this.#require(id)).name);
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
      // One made before the isolation settings takes the rest (its MAC) only while stopped.
      if (alignmentPatch({ ...instance, status: 'Stopped' }, this.options.sizeFactor)) {
        await this.#stop(instance.name);
        return this.#start(instance.name);
      }
      await this.#updateCli(instance);
      if (isAgentInstance(instance)) await this.#pushTls(instance.name, id);
      await this.#changeState(instance.name, 'restart', 'is not running');
    });
  }

  /**
   * A stopped instance's new `limits.cpu`, `limits.memory` (and a container's
   * `limits.processes`) and root disk `size`, scaled as at creation; they hold from its next start.
   * The service refused a smaller disk before; a disk already larger (made under another factor)
   * is kept, as a volume cannot shrink.
   */
  resize(id: string, change: ResizeChange): Promise<void> {
    return this.#serial.run(id, async () => {
      const instance = await this.#require(id);
      if (instance.status === 'Running') throw new Error(`instance ${instance.name} is running`);
      const limits = instanceLimits(change.to, change.region, this.options.sizeFactor);
      const root = instance.devices.root;
      const current = root?.size?.endsWith('GiB') ? Number(root.size.slice(0, -3)) : 0;
      const body = {
        config: {
          'limits.cpu': String(limits.cpu),
          'limits.memory': `${limits.memoryMiB}MiB`,
          ...((instance.type ?? 'container') === 'container' && {
            'limits.processes': String(limits.processes),
          }),
        },
        ...(root &&
          limits.diskGiB > current && {
            devices: { root: { ...root, size: `${limits.diskGiB}GiB` } },
          }),
      };
      await this.#firewall.exclusive(() =>
        this.#client.call('PATCH', `/1.0/instances/${instance.name}`, { body }),
      );
    });
  }

  deleteServer(id: string): Promise<void> {
    return this.#serial.run(id, async () => {
      const name = instanceName(id);
      if (!name) return;
      // A machine claimed from the warm pool keeps the member's name.
      const instance = await this.#findMachine(id);
      if (instance) await this.#removeInstance(instance.name);
      await this.#forwards.remove(id);
      await this.#firewall.remove(name);
      // A claimed machine's firewall has the member's name: one a crash left is found by its id.
      const left = await this.#firewall.matching({
        [MACHINE_ID_KEY]: id,
        [PROJECT_KEY]: this.options.project,
      });
      for (const acl of left) await this.#firewall.remove(acl.name);
    });
  }

  async getServer(id: string): Promise<ServerInfo | undefined> {
    const instance = instanceName(id) && (await this.#findMachine(id));
    return instance ? this.#info(instance) : undefined;
  }

  /**
   * The project's machines with these labels; also, as `off` servers, machines of which only the
   * ACL is left (a crash between the two), so the reconciler removes those too.
   */
  async listServers(labels: Readonly<Record<string, string>>): Promise<ServerInfo[]> {
    const instances = (await this.#instances('1')).filter(
      (instance) => instance.config[MACHINE_ID_KEY] !== undefined,
    );
    const ids = new Set(instances.map((instance) => instance.config[MACHINE_ID_KEY]));
    const aclOnly = (
      await this.#firewall.owners({
        [PROJECT_KEY]: this.options.project,
        ...labelConfig(labels),
      })
    )
      .filter((owner) => !ids.has(owner[MACHINE_ID_KEY]))
      .map((owner) => ({
        id: owner[MACHINE_ID_KEY] as string,
        status: 'off' as const,
        labels: labelsOf(owner),
      }));
    const matching = instances.filter((instance) => {
      const own = labelsOf(instance.config);
      return Object.entries(labels).every(([key, value]) => own[key] === value);
    });
    return [...matching.map((instance) => this.#info(instance)), ...aclOnly];
  }

  /**
   * Plain VMs' SSH forwards: a lost entry made again, one whose VM is gone (or without a public
   * address now) removed; and every machine's isolation settings and egress rules brought in
   * line, with running Agents' gateway certificates renewed in their last days (`#alignAll`).
   * On the local socket, the host's baseline written again (`incus-host-guard.ts`), and the
   * pool's btrfs quota accounting rescanned when inconsistent (`incus-quota.ts`). Each step runs
   * even when another fails; the pass then fails.
   */
  async reconcile(): Promise<void> {
    await runEach(this.log, {
      'SSH forwards': async () => this.#forwards.repair(await this.#instances('1')),
      'isolation and egress': () => this.#alignAll(),
      // Puts back a table someone removed (the driver's timer renews the entry in between).
      "the host's baseline": () => this.#writeGuard(),
      // Inconsistent, it holds no machine's disk size (`incus-quota.ts`).
      'quota accounting': async () => this.#quota?.keepExact(),
    });
  }

  /** On the baseline's timer: a failure is logged here, and tried again at the next tick. */
  async #keepQuotaExact(): Promise<void> {
    try {
      await this.#quota?.keepExact();
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      this.log.warn(
        { pool: this.options.storagePool, reason },
        'checking the quota accounting failed; retrying',
      );
    }
  }

  /** A Plain VM with a port on the public address is reported there. */
  #info(instance: Instance): ServerInfo {
    const server = info(instance);
    const endpoint = server.ssh && this.#forwards.endpoint(instance);
    return endpoint ? { ...server, ssh: endpoint } : server;
  }

  /**
   * An Agent's new credentials, running or not (its gateway reads them afresh). Plain VMs carry
   * no environment: nothing on them reads `agent.env`.
   */
  setBootstrapEnv(id: string, env: Readonly<Record<string, string>>): Promise<void> {
    return this.#serial.run(id, async () => {
      const instance = await this.#require(id);
      if (isAgentInstance(instance)) {
        await pushAgentEnv(this.#client, instance.name, env);
        await this.#pushTls(instance.name, id);
      }
    });
  }

  setFirewall(id: string, rules: readonly FirewallRule[]): Promise<FirewallRule[]> {
    return this.#serial.run(id, async () => {
      const instance = await this.#require(id);
      const owner = ownerConfig(
        { id, kind: instance.config[KIND_KEY] ?? 'plain_vm', labels: labelsOf(instance.config) },
        this.options.project,
      );
      await this.#firewall.replace(instance.name, owner, pinnedAddress(instance), rules);
      return (await this.#firewall.read(instance.name)) ?? [];
    });
  }

  async getFirewall(id: string): Promise<FirewallRule[] | undefined> {
    const instance = instanceName(id) && (await this.#findMachine(id));
    if (!instance) return undefined;
    // A machine whose ACL is gone has no rules: the reconciler puts the stored ones back.
    return (await this.#firewall.read(instance.name)) ?? [];
  }

  /**
   * Starts a stopped instance; an Agent first gets the current `svc` build if it changed, and an
   * instance made before the isolation settings gets them all (its MAC too, which a running one
   * cannot change).
   */
  async #start(name: string) {
    const instance = await this.#find(name);
    if (instance?.status === 'Running') return;
    if (instance) {
      await this.#updateCli(instance);
      const id = instance.config[MACHINE_ID_KEY];
      if (isAgentInstance(instance) && id) await this.#pushTls(name, id);
      await this.#align(instance);
    }
    await this.#changeState(name, 'start', 'already running');
  }

  /**
   * Brings every machine of the project in line with what `createServer` makes today: the
   * isolation settings of instances made before them (a running one gets what applies while it
   * runs, the rest at its next start), the egress rules of every machine's ACL (an older
   * version's, or the host's addresses changed), and a new gateway certificate for each running
   * Agent whose own is in its last days.
   */
  async #alignAll(): Promise<void> {
    await this.#firewall.hostAddresses(true);
    const instances = (await this.#instances('1')).filter(
      (instance) => instance.config[MACHINE_ID_KEY] !== undefined,
    );
    for (const { config } of instances) {
      const id = config[MACHINE_ID_KEY] as string;
      await this.#serial.run(id, async () => {
        const instance = await this.#findMachine(id);
        if (!instance) return;
        await this.#align(instance);
        const address = instance.devices[NIC]?.['ipv4.address'];
        if (address && (await this.#firewall.alignEgress(instance.name, address))) {
          this.log.info({ instance: instance.name }, 'egress rules brought in line');
        }
        // An Agent left running for weeks (no start, no new token) would outlive its certificate.
        const running = isAgentInstance(instance) && instance.status === 'Running';
        if (running && gatewayCertDue(instance.config)) {
          await this.#pushTls(instance.name, id);
          this.log.info({ instance: instance.name }, 'gateway certificate renewed');
        }
      });
    }
  }

  async #align(instance: Instance) {
    const patch = alignmentPatch(instance, this.options.sizeFactor);
    if (!patch) return;
    this.log.info(
      {
        instance: instance.name,
        config: Object.keys(patch.config),
        devices: Object.keys(patch.devices),
      },
      'isolation settings brought in line',
    );
    await this.#firewall.exclusive(() =>
      this.#client.call('PATCH', `/1.0/instances/${instance.name}`, { body: patch }),
    );
  }

  /**
   * A new key and certificate for an Agent's gateway (at its creation, starts, new tokens and in
   * the certificate's last days), and its end kept in the instance's config for the reconciler.
   */
  async #pushTls(name: string, id: string) {
    if (!this.options.gatewayCa) throw new Error('the incus driver has no gateway CA for Agents');
    const expires = await pushGatewayTls(this.#client, name, this.options.gatewayCa, id);
    await this.#firewall.exclusive(() =>
      this.#client.call('PATCH', `/1.0/instances/${name}`, {
        body: { config: { [GATEWAY_CERT_EXPIRES_KEY]: expires.toISOString() } },
      }),
    );
  }

  /**
   * A changed `svc` reaches an Agent at its next start: the build is read afresh (an operator may
   * rebuild it while the service runs) and pushed when its hash differs from the instance's.
   */
  async #updateCli(instance: Instance) {
    if (!isAgentInstance(instance)) return;
    // The repository's own build is made current first (built when older than the sources), as
    // the local driver's machines get it; a build elsewhere is taken as it is.
    if (path.resolve(this.options.cliBuildDir) === CLI_BUILD_DIR) await ensureCliBuild();
    const build = await readCliBuild(this.options.cliBuildDir);
    if (!build || instance.config[CLI_BUILD_KEY] === build.hash) return;
    await pushCliBuild(this.#client, instance.name, this.options.cliBuildDir, build);
    await this.#firewall.exclusive(() =>
      this.#client.call('PATCH', `/1.0/instances/${instance.name}`, {
        body: { config: { [CLI_BUILD_KEY]: build.hash } },
      }),
    );
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
      await this.#firewall.exclusive(() =>
        this.#client.call('PUT', `/1.0/instances/${name}/state`, { body: { action, ...extra } }),
      );
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

  /** Every instance of the project. */
  async #instances(recursion: '1'): Promise<Instance[]> {
    const instances = await this.#client.call<Instance[]>('GET', '/1.0/instances', {
      query: { recursion },
    });
    return instances.map(complete);
  }

  async #require(id: string): Promise<Instance> {
    const instance = await this.#findMachine(id);
    if (!instance) throw new Error(`no machine ${id} in Incus`);
    return instance;
  }

  /**
   * The machine's instance: `svc-<id>`, or the warm-pool member claimed for it, found by the id
   * in its config (Incus renames only stopped instances, and a claimed one runs).
   */
  async #findMachine(id: string): Promise<Instance | undefined> {
    const own = await this.#find(requireName(id));
    if (own) return own;
    const [claimed] = await this.#client.call<Instance[]>('GET', '/1.0/instances', {
      query: { recursion: '1', filter: `config.${MACHINE_ID_KEY} eq ${id}` },
    });
    return claimed && !isPoolMember(complete(claimed)) ? complete(claimed) : undefined;
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
        `image_unavailable: Incus at ${this.#client.location} has no image alias "${alias}" in project ${this.options.project}: \`sudo npm run admin -- images build\` makes the Debian ones and the Agent image, \`images sync\` imports the others`,
      );
    }
  }

  async #ignoreMissing(call: Promise<unknown>) {
    try {
      await call;
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }
}
