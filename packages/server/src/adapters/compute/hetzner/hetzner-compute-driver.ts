// Over 400 lines (just): the one class behind the ComputeDriver port for Hetzner, each move's
// calls in order; catalog, firewalls, images, the Agent's user data and the gateway enrollment
// live in the files beside it.
import type { KeyObject } from 'node:crypto';
import {
  DEFAULT_FIREWALL_RULES,
  type FirewallRule,
  type Region,
  SIZE_SPECS,
  type Size,
} from '@svc/contract';
import type { GatewayCa } from '../../../crypto/gateway-ca.js';
import type { Logger } from '../../../logger.js';
import { KeyedQueue } from '../../../util/keyed-queue.js';
import {
  type ComputeDriver,
  ComputeFailure,
  ComputeUnavailable,
  type CreateServerSpec,
  type ResizeChange,
  type ServerInfo,
} from '../compute-driver.js';
import { type Action, ActionWaiter } from './hcloud-actions.js';
import { HcloudClient, HcloudError, ignoreMissing, sleep } from './hcloud-client.js';
import { agentFirewall, agentUserData } from './hetzner-agent.js';
import { type ServerType, type SizeTable, sizeTable } from './hetzner-catalog.js';
import { fromHcloudRules } from './hetzner-firewall-rules.js';
import { serverLabelPins } from './hetzner-gateway-pins.js';
import { HetznerGateways } from './hetzner-gateways.js';
import { HetznerImages } from './hetzner-images.js';
import { HetznerFirewalls } from './hetzner-machine-firewalls.js';
import {
  type HcloudFirewall,
  type HcloudImage,
  type HcloudServer,
  hcloudLabels,
  info,
  labelsOf,
  MACHINE_LABEL,
  resourceName,
  type ServerAnswer,
  selectorFor,
} from './hetzner-server.js';
import { HetznerSnapshots } from './hetzner-snapshots.js';

export interface HetznerDriverOptions {
  readonly endpoint: string;
  readonly token: string;
  /** Hetzner's location of each region (`us` → `hil`, `eu` → `hel1`). */
  readonly locations: Readonly<Record<Region, string>>;
  /** Server types the operator names for some cells of the size table (`small-eu` → `cpx22`). */
  readonly serverTypes: Readonly<Partial<Record<`${Size}-${Region}`, string>>>;
  /** The image Agents boot (a system image's name; cloud-init installs `svc` on it). */
  readonly agentImage: string;
  /** Where the edge proxy reaches Agents' gateways from (their firewall's only opening). */
  readonly gatewaySources: readonly string[];
  /** Signs pushes of new credentials to Agents (`agent-env-push`). */
  readonly pushKey?: KeyObject;
  /**
   * The authority of the TLS path to gateways, and the secret Agents' one-time enrollment keys
   * are derived from (`enrollSecretOf(HMAC_KEY)`). Without them (tests of the API alone) Agents
   * are made, but never enrolled: no token reaches them.
   */
  readonly gatewayCa?: GatewayCa;
  readonly enrollSecret?: Buffer;
  /** Where Agents' gateways listen (tests put one elsewhere). */
  readonly gatewayPort?: number;
  /** How long an Agent's server may take to boot until its gateway answers (4 min). */
  readonly homeSeedWaitMs?: number;
}

/** Provider answers that no retry changes: provisioning fails with the code as its reason. */
const FINAL_CODES = new Set(['resource_limit_exceeded', 'resource_unavailable', 'placement_error']);
/** A clean shutdown gets this long before the power is cut. */
const SHUTDOWN_GRACE_MS = 30_000;
/** A server still booting or stopping (no action of ours to wait on) is looked at this often. */
const SETTLE_POLL_MS = 2_000;
const SETTLE_LIMIT_MS = 5 * 60_000;

/**
 * Machines as Hetzner Cloud servers. Each server and its firewall is named `svc-<machine id>`
 * (names are unique per project, so a second create is refused) and labelled `svc/machine=<id>`
 * (so a retry after a crash finds what the first attempt made, and the reconciler what nothing
 * owns). Every change waits for its actions to end. Plain VMs boot their OS image with the
 * cloud-init they are given, behind their own firewall from the first boot; Agents boot the
 * Agent image with cloud-init that installs `svc` and runs its gateway (`hetzner-agent.ts`).
 */
export class HetznerComputeDriver implements ComputeDriver {
  readonly name = 'hetzner';
  readonly #client: HcloudClient;
  readonly #actions: ActionWaiter;
  /** One change per machine at a time in this process (a retried job may meet a late one). */
  readonly #serial = new KeyedQueue();
  /** Hetzner's id of each machine's server, once seen: ids never change, lookups cost requests. */
  readonly #serverIds = new Map<string, number>();
  readonly #firewalls: HetznerFirewalls;
  readonly #images: HetznerImages;
  #sizes: SizeTable | undefined;
  readonly #gateways: HetznerGateways;
  /** Snapshots of machines' disks as snapshot images (`hetzner-snapshots.ts`). */
  readonly snapshots: HetznerSnapshots;

  constructor(
    readonly options: HetznerDriverOptions,
    readonly log: Logger,
  ) {
    this.#client = new HcloudClient({ endpoint: options.endpoint, token: options.token, log });
    this.#actions = new ActionWaiter(this.#client);
    this.#firewalls = new HetznerFirewalls(this.#client, this.#actions);
    this.#images = new HetznerImages(this.#client, this.#actions);
    this.snapshots = new HetznerSnapshots(this.#client, this.#actions, {
      find: (id) => this.#find(id),
      serial: (id, task) => this.#serial.run(id, task),
    });
    this.#gateways = new HetznerGateways(
      {
        gatewayCa: options.gatewayCa,
        pushKey: options.pushKey,
        enrollSecret: options.enrollSecret,
        waitMs: options.homeSeedWaitMs ?? 4 * 60_000,
      },
      serverLabelPins(this.#client, (id) => this.#find(id)),
      log,
    );
  }

  /** The clone's snapshot of its source's disk. */
  async #snapshotFor(sourceId: string, clone: CreateServerSpec): Promise<number> {
    const source = await this.#require(sourceId);
    return this.#images.snapshotFor({ id: sourceId, serverId: source.id }, clone);
  }

  /**
   * Reads the catalog and settles the size table; fails with a message naming the endpoint (and
   * `HCLOUD_TOKEN` when it is refused, never its value) or the cells no server type meets.
   */
  async connect(): Promise<void> {
    let types: ServerType[];
    try {
      types = await this.#client.list<ServerType>('/server_types', 'server_types');
    } catch (error) {
      const refused = error instanceof HcloudError && error.status === 401;
      throw new ComputeUnavailable(
        `Hetzner Cloud at ${this.#client.location} ${refused ? 'refused HCLOUD_TOKEN' : `did not answer: ${(error as Error).message}`}`,
      );
    }
    const { table, problems } = sizeTable(types, this.options.locations, this.options.serverTypes);
    if (problems.length > 0) {
      throw new ComputeUnavailable(
        `Hetzner Cloud: ${problems.join('; ')}; name one in HCLOUD_SERVER_TYPES`,
      );
    }
    this.#sizes = table;
  }

  /** The OS images that are system images of this Hetzner project. */
  bootableImages(keys: readonly string[]): Promise<ReadonlySet<string>> {
    return this.#images.systemImages(keys);
  }

  /** The server type of each size and region, as `connect` settled it. */
  get sizes(): SizeTable {
    if (!this.#sizes) throw new Error('the hetzner driver is not connected');
    return this.#sizes;
  }

  async close(): Promise<void> {}

  createServer(spec: CreateServerSpec): Promise<ServerInfo> {
    return this.#serial.run(spec.id, async () => {
      try {
        return await this.#createServer(spec);
      } catch (error) {
        if (error instanceof HcloudError && FINAL_CODES.has(error.code)) {
          throw new ComputeFailure(error.code as ComputeFailure['reason'], error.message);
        }
        throw error;
      }
    });
  }

  async #createServer(spec: CreateServerSpec): Promise<ServerInfo> {
    const isAgent = !spec.login;
    const rules = isAgent
      ? agentFirewall(this.options.gatewaySources)
      : (spec.firewall ?? DEFAULT_FIREWALL_RULES);
    // A missing system image ends provisioning before anything is made.
    const systemImage = spec.sourceServerId
      ? undefined
      : await this.#images.requireSystem(isAgent ? this.options.agentImage : spec.image);
    let server = this.#serverIds.has(spec.id) ? await this.#find(spec.id) : undefined;
    if (!server) {
      // The firewall first: the server boots behind it. Finding it made already (its name is
      // taken) says this is a retry, and only then is the server looked for: a first attempt
      // costs no lookups (the project's rate limit is 3,600 requests an hour).
      const { existed } = await this.#firewalls.ensure(spec.id, spec.labels, rules);
      if (existed) server = await this.#find(spec.id);
    }
    if (!server) {
      const firewall = this.#firewalls.idOf(spec.id) as number;
      const image = systemImage ?? String(await this.#snapshotFor(spec.sourceServerId ?? '', spec));
      server = await this.#create(spec, image, firewall, isAgent);
    }
    server = await this.#settle(server);
    if (server.status === 'off') server = await this.#power(server, 'poweron');
    // A clone's snapshot served its purpose once the server runs from it; it costs by the GB.
    if (spec.sourceServerId) await this.#images.removeSnapshotsOf(spec.id);
    const made = this.#info(server);
    // The first token, with the gateway's certificate, once it answers (never in user data).
    if (isAgent && this.#gateways.enabled) {
      await this.#gateways.push(made, spec.bootstrapEnv, { enroll: true });
    }
    if (spec.homeSeed) await this.#gateways.seedHome(made, spec.homeSeed);
    return made;
  }

  async #create(
    spec: CreateServerSpec,
    image: string | number,
    firewall: number,
    isAgent: boolean,
  ): Promise<HcloudServer> {
    const userData = isAgent
      ? agentUserData({
          env: spec.bootstrapEnv,
          caCert: this.options.gatewayCa?.cert ?? '',
          enrollKey: this.#gateways.enrollKey(spec.id),
        })
      : spec.userData;
    let answer: ServerAnswer;
    try {
      answer = await this.#client.request<ServerAnswer>('POST', '/servers', {
        body: {
          name: resourceName(spec.id),
          server_type: this.sizes[spec.size][spec.region],
          location: this.options.locations[spec.region],
          image,
          labels: hcloudLabels(spec.id, spec.labels),
          firewalls: [{ firewall }],
          ...(userData && { user_data: userData }),
          start_after_create: true,
        },
      });
    } catch (error) {
      // Made by an attempt whose answer was lost: the name is taken by our own server.
      if (error instanceof HcloudError && error.code === 'uniqueness_error') {
        const made = await this.#find(spec.id);
        if (made) return made;
      }
      throw error;
    }
    this.#serverIds.set(spec.id, answer.server.id);
    await this.#actions.wait([answer.action, ...answer.next_actions]);
    return this.#require(spec.id);
  }

  powerOn(id: string): Promise<void> {
    return this.#serial.run(id, async () => {
      let server = await this.#settle(await this.#require(id));
      if (server.status === 'off') server = await this.#power(server, 'poweron');
      await this.#renew(server);
    });
  }

  /** A clean shutdown first; a server that ignores it has its power cut. */
  powerOff(id: string): Promise<void> {
    return this.#serial.run(id, async () => {
      let server = await this.#settle(await this.#require(id));
      if (server.status === 'off') return;
      server = await this.#power(server, 'shutdown');
      const deadline = Date.now() + SHUTDOWN_GRACE_MS;
      while (server.status !== 'off' && Date.now() < deadline) {
        await sleep(SETTLE_POLL_MS);
        server = await this.#require(id);
      }
      if (server.status !== 'off') {
        this.log.warn({ machineId: id }, 'clean shutdown did not finish; cutting the power');
        await this.#power(server, 'poweroff');
      }
    });
  }

  reboot(id: string): Promise<void> {
    return this.#serial.run(id, async () => {
      const server = await this.#settle(await this.#require(id));
      await this.#renew(await this.#power(server, server.status === 'off' ? 'poweron' : 'reboot'));
    });
  }

  /** The server, then its firewall and any snapshot made for it: everything labelled with it. */
  deleteServer(id: string): Promise<void> {
    return this.#serial.run(id, async () => {
      const server = await this.#find(id);
      if (server) {
        const answer = await ignoreMissing(
          this.#client.request<{ action: Action }>('DELETE', `/servers/${server.id}`),
        );
        if (answer) await this.#actions.wait([answer.action]);
      }
      this.#serverIds.delete(id);
      await this.#firewalls.remove(id);
      await this.#images.removeSnapshotsOf(id);
    });
  }

  async getServer(id: string): Promise<ServerInfo | undefined> {
    const server = await this.#find(id);
    return server && this.#info(server);
  }

  /**
   * The project's servers with these labels; also, as `off` servers, machines of which only a
   * firewall or a snapshot is left (a crash between two steps), so the reconciler removes those.
   */
  async listServers(labels: Readonly<Record<string, string>>): Promise<ServerInfo[]> {
    const label_selector = selectorFor(labels);
    const servers = await this.#client.list<HcloudServer>('/servers', 'servers', {
      label_selector,
    });
    const firewalls = await this.#client.list<HcloudFirewall>('/firewalls', 'firewalls', {
      label_selector,
    });
    const images = await this.#client.list<HcloudImage>('/images', 'images', {
      label_selector,
      type: 'snapshot',
    });
    const found = new Map(servers.map((s) => [s.labels[MACHINE_LABEL] as string, this.#info(s)]));
    for (const leftover of [...firewalls, ...images]) {
      const id = leftover.labels[MACHINE_LABEL] as string;
      if (!found.has(id)) found.set(id, { id, status: 'off', labels: labelsOf(leftover.labels) });
    }
    return [...found.values()];
  }

  /** The reconciler's pass: gateway certificates near their end are renewed. */
  async reconcile(): Promise<void> {
    if (!this.#gateways.enabled) return;
    const agents = await this.listServers({ kind: 'agent' });
    await this.#gateways.renewDue(agents, (id, work) => this.#serial.run(id, work));
  }

  /** A running Agent's gateway gets a renewed certificate at each start (nothing else). */
  async #renew(server: HcloudServer): Promise<void> {
    const info = this.#info(server);
    if (info.gateway && info.status === 'running' && this.#gateways.enabled) {
      await this.#gateways.push(info, {}, { enroll: false });
    }
  }

  /**
   * An Agent's new credentials (a regenerated token), with a renewed certificate, pushed to its
   * gateway over TLS, signed with the service's push key (no way into a cloud server but
   * through it). A stopped Agent cannot take it: the push fails and its job tries again later.
   */
  setBootstrapEnv(id: string, env: Readonly<Record<string, string>>): Promise<void> {
    return this.#serial.run(id, async () => {
      const server = await this.#require(id);
      const info = this.#info(server);
      if (!info.gateway) return;
      if (server.status !== 'running') throw new Error(`Agent ${id} is not running`);
      await this.#gateways.pushNow(info, env);
    });
  }

  setFirewall(id: string, rules: readonly FirewallRule[]): Promise<FirewallRule[]> {
    return this.#serial.run(id, async () => {
      const server = await this.#require(id);
      const labels = labelsOf(server.labels);
      const { firewall } = await this.#firewalls.ensure(id, labels, rules, server.id);
      return this.#firewalls.replace(firewall.id, rules);
    });
  }

  async getFirewall(id: string): Promise<FirewallRule[] | undefined> {
    if (!(await this.#find(id))) return undefined;
    const [firewall] = await this.#firewalls.of(id);
    // A machine whose firewall is gone has no rules: the reconciler puts the stored ones back.
    return firewall ? fromHcloudRules(firewall.rules) : [];
  }

  /**
   * `change_type` on the stopped server; its disk grows only when the new size's disk is larger
   * (a grown disk cannot go back down, so a smaller size keeps the one it has).
   */
  resize(id: string, change: ResizeChange): Promise<void> {
    return this.#serial.run(id, async () => {
      const server = await this.#require(id);
      const answer = await this.#client.request<{ action: Action }>(
        'POST',
        `/servers/${server.id}/actions/change_type`,
        {
          body: {
            server_type: this.sizes[change.to][change.region],
            upgrade_disk:
              SIZE_SPECS[change.to][change.region].diskGb >
              SIZE_SPECS[change.from][change.region].diskGb,
          },
        },
      );
      await this.#actions.wait([answer.action]);
    });
  }

  /** Runs a power action and waits for it; answers with the server as it is after. */
  async #power(server: HcloudServer, action: 'poweron' | 'shutdown' | 'poweroff' | 'reboot') {
    const answer = await this.#client.request<{ action: Action }>(
      'POST',
      `/servers/${server.id}/actions/${action}`,
    );
    await this.#actions.wait([answer.action]);
    return this.#require(server.labels[MACHINE_LABEL] as string);
  }

  /** A server booting, stopping or being made is waited for until it is `running` or `off`. */
  async #settle(server: HcloudServer): Promise<HcloudServer> {
    const deadline = Date.now() + SETTLE_LIMIT_MS;
    let current = server;
    while (current.status !== 'running' && current.status !== 'off') {
      if (Date.now() > deadline) {
        throw new Error(`server ${current.name} still ${current.status} after 5 minutes`);
      }
      await sleep(SETTLE_POLL_MS);
      current = await this.#require(current.labels[MACHINE_LABEL] as string);
    }
    return current;
  }

  #info(server: HcloudServer): ServerInfo {
    return info(server, this.options.gatewayPort);
  }

  async #find(id: string): Promise<HcloudServer | undefined> {
    const known = this.#serverIds.get(id);
    if (known !== undefined) {
      const answer = await ignoreMissing(
        this.#client.request<{ server: HcloudServer }>('GET', `/servers/${known}`),
      );
      if (answer) return answer.server;
      this.#serverIds.delete(id);
    }
    const [server] = await this.#client.list<HcloudServer>('/servers', 'servers', {
      label_selector: `${MACHINE_LABEL}==${id}`,
    });
    if (server) this.#serverIds.set(id, server.id);
    return server;
  }

  async #require(id: string): Promise<HcloudServer> {
    const server = await this.#find(id);
    if (!server) throw new Error(`no server for machine ${id} in Hetzner Cloud`);
    return server;
  }
}
