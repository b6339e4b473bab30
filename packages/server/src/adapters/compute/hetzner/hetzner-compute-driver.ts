import type { KeyObject } from 'node:crypto';
import { DEFAULT_FIREWALL_RULES, type FirewallRule, type Region, type Size } from '@svc/contract';
import {
  ENV_PUSH_PATH,
  ENV_PUSH_SIGNATURE_HEADER,
  signEnvPush,
} from '@svc/contract/agent-env-push';
import type { Logger } from '../../../logger.js';
import { KeyedQueue } from '../../../util/keyed-queue.js';
import {
  type ComputeDriver,
  ComputeFailure,
  type CreateServerSpec,
  type ServerInfo,
} from '../compute-driver.js';
import { type Action, ActionWaiter } from './hcloud-actions.js';
import { HcloudClient, HcloudError } from './hcloud-client.js';
import { agentFirewall, agentUserData } from './hetzner-agent.js';
import { type ServerType, type SizeTable, sizeTable } from './hetzner-catalog.js';
import { fromHcloudRules, toHcloudRules } from './hetzner-firewall.js';
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
  /** Where Agents' gateways listen (tests put one elsewhere). */
  readonly gatewayPort?: number;
}

/** Provider answers that no retry changes: provisioning fails with the code as its reason. */
const FINAL_CODES = new Set(['resource_limit_exceeded', 'resource_unavailable', 'placement_error']);
/** A clean shutdown gets this long before the power is cut. */
const SHUTDOWN_GRACE_MS = 30_000;
/** A server still booting or stopping (no action of ours to wait on) is looked at this often. */
const SETTLE_POLL_MS = 2_000;
const SETTLE_LIMIT_MS = 5 * 60_000;
/** A firewall stays applied a moment after its server's deletion ends. */
const FIREWALL_DETACH_TRIES = 10;

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
  /** Hetzner's id of each machine's firewall, once seen. */
  readonly #firewallIds = new Map<string, number>();
  /** Images known to exist, by name. */
  readonly #images = new Set<string>();
  #sizes: SizeTable | undefined;

  constructor(
    readonly options: HetznerDriverOptions,
    readonly log: Logger,
  ) {
    this.#client = new HcloudClient({ endpoint: options.endpoint, token: options.token, log });
    this.#actions = new ActionWaiter(this.#client);
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
      throw new Error(
        `Hetzner Cloud at ${this.#client.location} ${refused ? 'refused HCLOUD_TOKEN' : `did not answer: ${(error as Error).message}`}`,
      );
    }
    const { table, problems } = sizeTable(types, this.options.locations, this.options.serverTypes);
    if (problems.length > 0) {
      throw new Error(`Hetzner Cloud: ${problems.join('; ')}; name one in HCLOUD_SERVER_TYPES`);
    }
    this.#sizes = table;
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
    let server = this.#serverIds.has(spec.id) ? await this.#find(spec.id) : undefined;
    if (!server) {
      // The firewall first: the server boots behind it. Finding it made already (its name is
      // taken) says this is a retry, and only then is the server looked for: a first attempt
      // costs no lookups (the project's rate limit is 3,600 requests an hour).
      const { firewall, existed } = await this.#ensureFirewall(spec.id, spec.labels, rules);
      if (existed) server = await this.#find(spec.id);
    }
    if (!server) {
      const firewall = this.#firewallIds.get(spec.id) as number;
      const image = spec.sourceServerId
        ? String(await this.#snapshotFor(spec.sourceServerId, spec.id))
        : await this.#requireImage(isAgent ? this.options.agentImage : spec.image);
      server = await this.#create(spec, image, firewall, isAgent);
    }
    server = await this.#settle(server);
    if (server.status === 'off') server = await this.#power(server, 'poweron');
    // A clone's snapshot served its purpose once the server runs from it; it costs by the GB.
    if (spec.sourceServerId) await this.#deleteImages(spec.id);
    return this.#info(server);
  }

  async #create(
    spec: CreateServerSpec,
    image: string | number,
    firewall: number,
    isAgent: boolean,
  ): Promise<HcloudServer> {
    const userData = isAgent ? agentUserData(spec.bootstrapEnv) : spec.userData;
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
      const server = await this.#settle(await this.#require(id));
      if (server.status === 'off') await this.#power(server, 'poweron');
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
      await this.#power(server, server.status === 'off' ? 'poweron' : 'reboot');
    });
  }

  /** The server, then its firewall and any snapshot made for it: everything labelled with it. */
  deleteServer(id: string): Promise<void> {
    return this.#serial.run(id, async () => {
      const server = await this.#find(id);
      if (server) {
        const answer = await this.#ignoreMissing(
          this.#client.request<{ action: Action }>('DELETE', `/servers/${server.id}`),
        );
        if (answer) await this.#actions.wait([answer.action]);
      }
      this.#serverIds.delete(id);
      const known = this.#firewallIds.get(id);
      const firewalls = known === undefined ? await this.#firewallsOf(id) : [{ id: known }];
      for (const firewall of firewalls) await this.#deleteFirewall(firewall);
      this.#firewallIds.delete(id);
      await this.#deleteImages(id);
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

  /**
   * An Agent's new credentials, pushed to its gateway signed with the service's push key (no
   * way into a cloud server but through it). A stopped Agent cannot take it: the push fails and
   * its job tries again later. Plain VMs carry no credentials.
   */
  setBootstrapEnv(id: string, env: Readonly<Record<string, string>>): Promise<void> {
    return this.#serial.run(id, async () => {
      const server = await this.#require(id);
      const gateway = this.#info(server).gateway;
      if (!gateway) return;
      if (!this.options.pushKey) throw new Error('the hetzner driver has no push key');
      if (server.status !== 'running') throw new Error(`Agent ${id} is not running`);
      const { body, signature } = signEnvPush(this.options.pushKey, {
        agentId: id,
        issuedAt: Date.now(),
        env,
      });
      const host = gateway.host.includes(':') ? `[${gateway.host}]` : gateway.host;
      const response = await fetch(`http://${host}:${gateway.port}${ENV_PUSH_PATH}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', [ENV_PUSH_SIGNATURE_HEADER]: signature },
        body,
        signal: AbortSignal.timeout(10_000),
      });
      if (response.status !== 204) {
        throw new Error(`Agent ${id}'s gateway refused the push: ${response.status}`);
      }
    });
  }

  setFirewall(id: string, rules: readonly FirewallRule[]): Promise<FirewallRule[]> {
    return this.#serial.run(id, async () => {
      const server = await this.#require(id);
      const { firewall } = await this.#ensureFirewall(
        id,
        labelsOf(server.labels),
        rules,
        server.id,
      );
      const { actions } = await this.#client.request<{ actions: Action[] }>(
        'POST',
        `/firewalls/${firewall.id}/actions/set_rules`,
        { body: { rules: toHcloudRules(rules) } },
      );
      await this.#actions.wait(actions);
      // Re-read once the actions ended: Hetzner's own form (canonical IPv6) is the answer.
      const reread = await this.#client.request<{ firewall: HcloudFirewall }>(
        'GET',
        `/firewalls/${firewall.id}`,
      );
      return fromHcloudRules(reread.firewall.rules);
    });
  }

  async getFirewall(id: string): Promise<FirewallRule[] | undefined> {
    if (!(await this.#find(id))) return undefined;
    const [firewall] = await this.#firewallsOf(id);
    // A machine whose firewall is gone has no rules: the reconciler puts the stored ones back.
    return firewall ? fromHcloudRules(firewall.rules) : [];
  }

  /**
   * The machine's firewall, made (with `rules`) and applied to its server where missing; `existed`
   * when it was there before. Made first and looked for only when its name is taken.
   */
  async #ensureFirewall(
    id: string,
    labels: Readonly<Record<string, string>>,
    rules: readonly FirewallRule[],
    serverId?: number,
  ): Promise<{ firewall: HcloudFirewall; existed: boolean }> {
    let firewall: HcloudFirewall | undefined;
    if (this.#firewallIds.has(id) || serverId) [firewall] = await this.#firewallsOf(id);
    if (!firewall) {
      try {
        const made = await this.#client.request<{ firewall: HcloudFirewall; actions: Action[] }>(
          'POST',
          '/firewalls',
          {
            body: {
              name: resourceName(id),
              labels: hcloudLabels(id, labels),
              rules: toHcloudRules(rules),
              ...(serverId && { apply_to: [{ type: 'server', server: { id: serverId } }] }),
            },
          },
        );
        this.#firewallIds.set(id, made.firewall.id);
        await this.#actions.wait(made.actions);
        return { firewall: made.firewall, existed: false };
      } catch (error) {
        if (!(error instanceof HcloudError && error.code === 'uniqueness_error')) throw error;
        [firewall] = await this.#firewallsOf(id);
        if (!firewall) throw error;
      }
    }
    const applied = firewall.applied_to.some((r) => r.server?.id === serverId);
    if (serverId && !applied) {
      const { actions } = await this.#client.request<{ actions: Action[] }>(
        'POST',
        `/firewalls/${firewall.id}/actions/apply_to_resources`,
        { body: { apply_to: [{ type: 'server', server: { id: serverId } }] } },
      );
      await this.#actions.wait(actions);
    }
    return { firewall, existed: true };
  }

  async #firewallsOf(id: string): Promise<HcloudFirewall[]> {
    const firewalls = await this.#client.list<HcloudFirewall>('/firewalls', 'firewalls', {
      label_selector: `${MACHINE_LABEL}==${id}`,
    });
    if (firewalls[0]) this.#firewallIds.set(id, firewalls[0].id);
    return firewalls;
  }

  /** A firewall is detached from a deleted server a moment after the deletion's action ends. */
  async #deleteFirewall(firewall: { readonly id: number }) {
    for (let attempt = 1; ; attempt += 1) {
      try {
        await this.#ignoreMissing(this.#client.request('DELETE', `/firewalls/${firewall.id}`));
        return;
      } catch (error) {
        const inUse = error instanceof HcloudError && error.code === 'resource_in_use';
        if (!inUse || attempt >= FIREWALL_DETACH_TRIES) throw error;
        await sleep(1_000 * attempt);
      }
    }
  }

  /**
   * The snapshot a clone starts from: made from the source's disk once (labelled with the
   * clone's id, so a retry finds it instead of making another).
   */
  async #snapshotFor(sourceId: string, cloneId: string): Promise<number> {
    const [existing] = await this.#imagesOf(cloneId);
    if (existing?.status === 'available') return existing.id;
    if (existing) {
      await this.#settleImage(existing.id);
      return existing.id;
    }
    const source = await this.#require(sourceId);
    const made = await this.#client.request<{ image: HcloudImage; action: Action }>(
      'POST',
      `/servers/${source.id}/actions/create_image`,
      {
        body: {
          type: 'snapshot',
          description: `clone of ${resourceName(sourceId)} for ${resourceName(cloneId)}`,
          labels: { [MACHINE_LABEL]: cloneId },
        },
      },
    );
    await this.#actions.wait([made.action]);
    return made.image.id;
  }

  async #settleImage(imageId: number) {
    const deadline = Date.now() + SETTLE_LIMIT_MS;
    for (;;) {
      const { image } = await this.#client.request<{ image: HcloudImage }>(
        'GET',
        `/images/${imageId}`,
      );
      if (image.status === 'available') return;
      if (Date.now() > deadline) throw new Error(`snapshot ${imageId} still ${image.status}`);
      await sleep(SETTLE_POLL_MS);
    }
  }

  #imagesOf(id: string): Promise<HcloudImage[]> {
    return this.#client.list<HcloudImage>('/images', 'images', {
      type: 'snapshot',
      label_selector: `${MACHINE_LABEL}==${id}`,
    });
  }

  async #deleteImages(id: string) {
    for (const image of await this.#imagesOf(id)) {
      await this.#ignoreMissing(this.#client.request('DELETE', `/images/${image.id}`));
    }
  }

  /** A system image by name; one that does not exist fails provisioning at once. */
  async #requireImage(name: string | undefined): Promise<string> {
    if (name && this.#images.has(name)) return name;
    const images = name
      ? await this.#client.list<HcloudImage>('/images', 'images', { name, architecture: 'x86' })
      : [];
    if (!name || images.length === 0) {
      throw new ComputeFailure(
        'image_unavailable',
        `image_unavailable: Hetzner Cloud has no image "${name ?? ''}"`,
      );
    }
    this.#images.add(name);
    return name;
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
      const answer = await this.#ignoreMissing(
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

  /** `undefined` for a resource that is not there (deleting it again is done). */
  async #ignoreMissing<T>(call: Promise<T>): Promise<T | undefined> {
    try {
      return await call;
    } catch (error) {
      if (error instanceof HcloudError && error.status === 404) return undefined;
      throw error;
    }
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
