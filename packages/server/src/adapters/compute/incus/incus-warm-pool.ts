import { randomUUID } from 'node:crypto';
import { defaultUserOf } from '@svc/contract';
import { cellName, type WarmPoolCell } from '../../../config/incus-warm-pool.js';
import type { Logger } from '../../../logger.js';
import { buildUserData } from '../cloud-init.js';
import type { CreateServerSpec, PoolCellStatus } from '../compute-driver.js';
import { type IncusClient, IncusError } from './incus-client.js';
import { complete, type Instance } from './incus-instance.js';
import { KIND_KEY, MACHINE_ID_KEY, POOL_CELL_KEY, PROJECT_KEY } from './incus-instance-spec.js';
import { IncusLock } from './incus-lock.js';

// The warm pool (`INCUS_WARM_POOL`): per cell, booted instances nobody has used, which a create
// of that cell claims instead of launching (`incus-claim.ts` makes one the tenant's). Members are
// instances of the project named `svc-pool-<uuid>` without a machine id, so listings of machines
// never see them and nothing bills them.

/** Set once the member was seen booted and well: only those are handed out. */
export const POOL_READY_KEY = 'user.svc.pool-ready';
/** The machine whose claim made the member its own finished (a retry redoes an unfinished one). */
export const CLAIMED_KEY = 'user.svc.claimed';
/** Taken out of the pool to be deleted (a surplus, an unwell one): no claim takes it any more. */
const RETIRING_KEY = 'user.svc.pool-retiring';
/** Every pool key: a copy of a claimed machine (a clone) must carry none of them. */
export const POOL_KEYS = [POOL_CELL_KEY, POOL_READY_KEY, CLAIMED_KEY, RETIRING_KEY] as const;

const POOL_PREFIX = 'svc-pool-';
/** How often the pool is looked over when nothing claimed from it. */
const FILL_EVERY_MS = 15_000;
/** A member not well this long after its creation is replaced. */
const BOOT_DEADLINE_MS = 180_000;

/** What the pool needs of the driver: making a member as a create would, and its checks. */
export interface PoolHost {
  /** Makes and starts the instance `name` for `spec`, as a create does, with `owner` config. */
  make(name: string, spec: CreateServerSpec, owner: Record<string, string>): Promise<void>;
  /** Whether a running member is well: booted, and its SSH server or gateway in place. */
  isWell(instance: Instance): Promise<boolean>;
  /** Removes an instance and its firewall. */
  remove(name: string): Promise<void>;
  /** The names of the project's pool members' firewalls (a crash may leave one without its instance). */
  firewalls(): Promise<string[]>;
}

export const isPoolMember = (instance: Instance): boolean =>
  instance.config[POOL_CELL_KEY] !== undefined &&
  instance.config[MACHINE_ID_KEY] === undefined &&
  instance.config[RETIRING_KEY] === undefined;

/** The fill lock was held by another process: it fills the pool meanwhile. */
const isHeldElsewhere = (error: unknown) =>
  error instanceof Error && /^Incus lock svc-lock-.*-pool still held/.test(error.message);

/** The cell a create falls in, when its machine could come from the pool at all. */
export function cellOf(spec: CreateServerSpec): string | undefined {
  // A clone copies its source; an adopted home goes in before the first boot.
  if (spec.sourceServerId || spec.homeSeed) return undefined;
  return spec.login
    ? spec.image && `plain_vm:${spec.image}:${spec.size}:${spec.region}`
    : `agent:${spec.size}:${spec.region}`;
}

export class IncusWarmPool {
  readonly #fillLock: IncusLock;
  #timer: NodeJS.Timeout | undefined;
  /** Set by `stop`: a pass under way adds no more members. */
  #stopped = false;
  #filling: Promise<void> | undefined;

  constructor(
    readonly client: IncusClient,
    readonly options: {
      readonly cells: readonly WarmPoolCell[];
      readonly project: string;
      readonly network: string;
    },
    readonly host: PoolHost,
    readonly log: Logger,
  ) {
    // One process fills at a time; the others find it held and leave the pool to it.
    this.#fillLock = new IncusLock(client, `svc-lock-${options.network}-pool`, {
      leaseMs: 120_000,
      waitMs: 0,
    });
  }

  /** Keeps the pool full from now on: at once, on a timer, and after each claim. */
  keepFull(): void {
    if (this.#timer) return;
    // Once even without cells: members of a pool configured before are removed.
    this.refill();
    if (this.options.cells.length === 0) return;
    this.#timer = setInterval(() => this.refill(), FILL_EVERY_MS);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#filling;
  }

  /** Starts a pass over the pool unless one runs; its failures are logged, not thrown. */
  refill(): void {
    if (this.#stopped) return;
    this.#filling ??= this.fill()
      .catch((error) => this.log.warn({ err: error }, 'warm pool: a fill pass failed'))
      .finally(() => {
        this.#filling = undefined;
      });
  }

  /**
   * One pass: members found well are marked ready, those that stay unwell are replaced, and each
   * cell short of its count gets new members, one at a time (each takes an address and memory).
   */
  async fill(): Promise<void> {
    try {
      await this.#fillLock.run(() => this.#fill());
    } catch (error) {
      if (!isHeldElsewhere(error)) throw error;
    }
  }

  /**
   * Members of a cell no longer configured, and each cell's surplus, retired; the rest checked;
   * then each cell topped up. A cell that fails (its image missing, say) is logged and the others
   * are still filled.
   */
  async #fill(): Promise<void> {
    // Under the fill lock no member is being made: a pool firewall without its instance is left.
    const instances = new Set((await this.#instances()).map((instance) => instance.name));
    for (const name of await this.host.firewalls()) {
      if (!instances.has(name)) await this.host.remove(name);
    }
    const members = await this.#members();
    for (const member of members) {
      const cell = this.options.cells.find((c) => cellName(c) === member.config[POOL_CELL_KEY]);
      const mine = members.filter((m) => m.config[POOL_CELL_KEY] === member.config[POOL_CELL_KEY]);
      const isSurplus = !cell || mine.indexOf(member) >= cell.count;
      if (isSurplus) await this.#retire(member, 'no longer wanted');
      else await this.#check(member);
    }
    for (const cell of this.options.cells) {
      const name = cellName(cell);
      try {
        const have = (await this.#members()).filter((m) => m.config[POOL_CELL_KEY] === name);
        for (let i = have.length; i < cell.count && !this.#stopped; i++) await this.#add(cell);
      } catch (error) {
        this.log.warn({ err: error, cell: name }, 'warm pool: a cell could not be filled');
      }
    }
  }

  /** A member seen well becomes ready; one not well within its deadline, or stopped, is retired. */
  async #check(member: Instance): Promise<void> {
    const isRunning = member.status === 'Running';
    if (member.config[POOL_READY_KEY] && isRunning) return;
    if (isRunning && (await this.host.isWell(member))) {
      await this.#markReady(member.name);
      return;
    }
    const made = Date.parse(member.created_at ?? '') || Date.now();
    if (!isRunning || Date.now() - made > BOOT_DEADLINE_MS) await this.#retire(member, 'not well');
  }

  /**
   * Takes a member out of the pool and deletes it: marked retiring first, with `If-Match`, so a
   * member another process claimed meanwhile is never deleted.
   */
  async #retire(member: Instance, why: string): Promise<void> {
    if (!(await this.#take(member.name, { [RETIRING_KEY]: why }))) return;
    this.log.warn({ instance: member.name, why }, 'warm pool: member removed');
    await this.host.remove(member.name);
  }

  /**
   * Writes `config` into a member that is still unclaimed, with `If-Match`: `undefined` when
   * another process took it first (or it is gone), else the member as now written.
   */
  async #take(name: string, config: Record<string, string>): Promise<Instance | undefined> {
    const path = `/1.0/instances/${name}`;
    let read: { metadata: Instance & Record<string, unknown>; etag?: string };
    try {
      read = await this.client.request<Instance & Record<string, unknown>>('GET', path);
    } catch (error) {
      if (error instanceof IncusError && error.status === 404) return undefined;
      throw error;
    }
    const { metadata, etag } = read;
    if (!etag || !isPoolMember(complete(metadata))) return undefined;
    try {
      await this.client.call('PUT', path, {
        body: writable(metadata, { ...metadata.config, ...config }),
        headers: { 'If-Match': etag },
      });
    } catch (error) {
      if (error instanceof IncusError && error.status === 412) return undefined;
      throw error;
    }
    return complete({ ...metadata, config: { ...metadata.config, ...config } });
  }

  async #add(cell: WarmPoolCell): Promise<void> {
    const id = randomUUID();
    const name = `${POOL_PREFIX}${id}`;
    const base = { id, size: cell.size, region: cell.region, bootstrapEnv: {}, labels: {} };
    const spec: CreateServerSpec =
      cell.kind === 'agent'
        ? base
        : {
            ...base,
            image: cell.image,
            // Its default user only: the claim gives it the tenant's keys and password.
            login: { user: defaultUserOf(cell.image), authorizedKeys: [] },
            userData: buildUserData({
              hostname: name,
              defaultUser: defaultUserOf(cell.image),
              authorizedKeys: [],
            }),
          };
    const owner = {
      [POOL_CELL_KEY]: cellName(cell),
      [KIND_KEY]: cell.kind,
      [PROJECT_KEY]: this.options.project,
    };
    this.log.info({ instance: name, cell: cellName(cell) }, 'warm pool: adding a member');
    try {
      await this.host.make(name, spec, owner);
    } catch (error) {
      await this.host.remove(name).catch(() => {});
      throw error;
    }
    // Ready as soon as it is well, so a create shortly after a refill finds it.
    const deadline = Date.now() + BOOT_DEADLINE_MS;
    for (let wait = 50; Date.now() < deadline && !this.#stopped; wait = Math.min(wait * 2, 1000)) {
      const [member] = (await this.#members()).filter((m) => m.name === name);
      if (!member) return;
      if (member.status === 'Running' && (await this.host.isWell(member))) {
        await this.#markReady(name);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }

  async #markReady(name: string): Promise<void> {
    await this.client.call('PATCH', `/1.0/instances/${name}`, {
      body: { config: { [POOL_READY_KEY]: new Date().toISOString() } },
    });
  }

  /**
   * Takes a ready member of the spec's cell for machine `id`: the member's config names the
   * machine (with `If-Match`, so two processes never take the same one) and from then on it is
   * that machine's instance. Answers `undefined` when the cell has none ready.
   */
  async claim(
    spec: CreateServerSpec,
    owner: Record<string, string>,
  ): Promise<Instance | undefined> {
    const cell = cellOf(spec);
    if (!cell || !this.options.cells.some((c) => cellName(c) === cell)) return undefined;
    const ready = (await this.#members()).filter(
      (m) => m.config[POOL_CELL_KEY] === cell && m.config[POOL_READY_KEY] && m.status === 'Running',
    );
    for (const member of ready) {
      // Another process may take it between the listing and the write: then try the next.
      const claimed = await this.#take(member.name, owner);
      if (!claimed) continue;
      // Checked again once it is ours (so no one else's is ever deleted): one that went wrong
      // is removed, never handed out.
      if (!(await this.host.isWell(claimed))) {
        this.log.warn({ instance: member.name }, 'warm pool: member failed its check; removed');
        await this.host.remove(member.name);
        continue;
      }
      this.log.info({ instance: member.name, machine: spec.id, cell }, 'warm pool: member claimed');
      this.refill();
      return claimed;
    }
    this.refill();
    return undefined;
  }

  /** Each cell's wanted, ready and starting members. */
  async status(): Promise<PoolCellStatus[]> {
    const members = await this.#members();
    return this.options.cells.map((cell) => {
      const mine = members.filter((m) => m.config[POOL_CELL_KEY] === cellName(cell));
      const ready = mine.filter((m) => m.config[POOL_READY_KEY]).length;
      return { cell: cellName(cell), want: cell.count, ready, starting: mine.length - ready };
    });
  }

  /** The project's unclaimed members, any cell (one no longer configured is removed by `fill`). */
  async #members(): Promise<Instance[]> {
    return (await this.#instances()).filter(isPoolMember);
  }

  /** The service's instances in the project. */
  async #instances(): Promise<Instance[]> {
    const instances = await this.client.call<Instance[]>('GET', '/1.0/instances', {
      query: { recursion: '1', filter: `config.${PROJECT_KEY} eq ${this.options.project}` },
    });
    return instances.map(complete);
  }
}

/** What `PUT /1.0/instances/<name>` takes of an instance read with `GET`, with `config`. */
function writable(instance: Record<string, unknown>, config: Record<string, string>) {
  const { architecture, devices, ephemeral, profiles, stateful, description } = instance;
  return { architecture, config, devices, ephemeral, profiles, stateful, description };
}
