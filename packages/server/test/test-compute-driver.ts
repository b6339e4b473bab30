import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { FirewallRule, MachineLimits, Region, Size } from '@svc/contract';
import type {
  ComputeDriver,
  CreateServerSpec,
  ServerInfo,
  SnapshotDriver,
} from '../src/adapters/compute/compute-driver.js';

type Call = Exclude<keyof ComputeDriver, 'name' | 'close'>;

/**
 * A stand-in's machines answer at once: nothing real runs at the addresses it makes up (TEST-NET),
 * and no packet may go there. Given to a context on a stand-in as its `machineProbes`.
 */
export const STAND_IN_PROBES = {
  agent: async () => 'answered' as const,
  plainVm: async () => 'answered' as const,
};

export interface CallBehaviour {
  /** Added before the call takes effect. */
  latencyMs?: number;
  /** Fail this many calls (then succeed); `Infinity` fails every one. */
  failTimes?: number;
  /**
   * Of the failing calls, the first this many take effect before they fail: a provider that did
   * the work but whose answer was lost.
   */
  appliedFailures?: number;
  /** Never answer (until `release()`). */
  hang?: boolean;
  /** What a failing call throws (default: a plain Error). */
  failWith?: () => Error;
}

/**
 * An in-memory provider whose latency and failures each test controls, call by call. Servers
 * live in a map; every method is idempotent like a real driver's.
 */
export class TestComputeDriver implements ComputeDriver {
  readonly name: string;
  /** The files each adopted home was seeded with (path → bytes), read while the seed existed. */
  readonly seededHomes = new Map<string, Map<string, Buffer>>();
  readonly servers = new Map<
    string,
    {
      status: 'running' | 'off';
      labels: Record<string, string>;
      env: Record<string, string>;
      sourceServerId?: string;
      spec: CreateServerSpec;
      firewall: FirewallRule[];
    }
  >();
  readonly calls: { call: Call; id: string }[] = [];
  /** The OS image keys it boots (`bootableImages`); every key while unset. */
  images: ReadonlySet<string> | undefined;
  /** What `machineLimits` answers, as a driver that scales the size table would; none while unset. */
  limits: ((size: Size, region: Region) => MachineLimits) | undefined;
  readonly #behaviour = new Map<Call, CallBehaviour>();
  readonly #hanging = new Set<() => void>();
  /** The snapshots it holds, by ref (`test-<snapshot id>`), with the server each is of. */
  readonly snapshotsHeld = new Map<string, { serverId: string }>();
  /** Snapshots of any server, running or not (`behave('snapshots', …)` for all three calls). */
  readonly snapshots: SnapshotDriver = {
    whileRunning: true,
    create: (serverId, snapshotId) =>
      this.#run('snapshots', serverId, () => {
        this.#require(serverId);
        const ref = `test-${snapshotId}`;
        this.snapshotsHeld.set(ref, { serverId });
        return { ref, sizeBytes: 4096 };
      }),
    restore: (serverId, ref) =>
      this.#run('snapshots', serverId, () => {
        if (this.snapshotsHeld.get(ref)?.serverId !== serverId) {
          throw new Error(`test driver: no snapshot ${ref} of ${serverId}`);
        }
      }),
    remove: (serverId, ref) =>
      this.#run('snapshots', serverId, () => {
        this.snapshotsHeld.delete(ref);
      }),
  };

  constructor(name = 'test') {
    this.name = name;
  }

  behave(call: Call, behaviour: CallBehaviour): void {
    this.#behaviour.set(call, { ...behaviour });
  }

  machineLimits(size: Size, region: Region): MachineLimits | undefined {
    return this.limits?.(size, region);
  }

  async bootableImages(keys: readonly string[]): Promise<ReadonlySet<string>> {
    return new Set(keys.filter((key) => !this.images || this.images.has(key)));
  }

  /** Lets every hanging call go on. */
  release(): void {
    for (const resume of this.#hanging) resume();
    this.#hanging.clear();
  }

  /** Runs `effect` as the provider would, with the latency and failures set for `call`. */
  async #run<T>(call: Call, id: string, effect: () => T): Promise<T> {
    this.calls.push({ call, id });
    const behaviour = this.#behaviour.get(call);
    if (!behaviour) return effect();
    if (behaviour.latencyMs)
      await new Promise((resolve) => setTimeout(resolve, behaviour.latencyMs));
    if (behaviour.hang) await new Promise<void>((resolve) => this.#hanging.add(resolve));
    if (behaviour.failTimes && behaviour.failTimes > 0) {
      behaviour.failTimes -= 1;
      if (behaviour.appliedFailures && behaviour.appliedFailures > 0) {
        behaviour.appliedFailures -= 1;
        effect();
        throw new Error(`test driver: ${call} failed after taking effect`);
      }
      throw behaviour.failWith?.() ?? new Error(`test driver: ${call} failed`);
    }
    return effect();
  }

  #info(id: string): ServerInfo | undefined {
    const server = this.servers.get(id);
    if (!server) return undefined;
    const isPlainVm = server.spec.login !== undefined;
    return {
      id,
      status: server.status,
      labels: server.labels,
      ...(isPlainVm && { ipv4: '192.0.2.10', ssh: { host: '192.0.2.10', port: 22 } }),
    };
  }

  createServer(spec: CreateServerSpec): Promise<ServerInfo> {
    return this.#run('createServer', spec.id, () => {
      if (!this.servers.has(spec.id)) {
        if (spec.homeSeed) this.seededHomes.set(spec.id, readTree(spec.homeSeed));
        this.servers.set(spec.id, {
          status: 'running',
          labels: { ...spec.labels },
          env: { ...spec.bootstrapEnv },
          ...(spec.sourceServerId && { sourceServerId: spec.sourceServerId }),
          spec,
          firewall: structuredClone([...(spec.firewall ?? [])]),
        });
      }
      return this.#info(spec.id)!;
    });
  }

  powerOn(id: string) {
    return this.#run('powerOn', id, () => {
      this.#require(id).status = 'running';
    });
  }

  powerOff(id: string) {
    return this.#run('powerOff', id, () => {
      this.#require(id).status = 'off';
    });
  }

  reboot(id: string) {
    return this.#run('reboot', id, () => {
      this.#require(id).status = 'running';
    });
  }

  deleteServer(id: string) {
    return this.#run('deleteServer', id, () => {
      this.servers.delete(id);
    });
  }

  setBootstrapEnv(id: string, env: Readonly<Record<string, string>>) {
    return this.#run('setBootstrapEnv', id, () => {
      this.#require(id).env = { ...env };
    });
  }

  getServer(id: string) {
    return this.#run('getServer', id, () => this.#info(id));
  }

  listServers(labels: Readonly<Record<string, string>>) {
    return this.#run('listServers', '', () =>
      [...this.servers.keys()]
        .map((id) => this.#info(id)!)
        .filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v)),
    );
  }

  setFirewall(id: string, rules: readonly FirewallRule[]) {
    return this.#run('setFirewall', id, () => {
      const server = this.#require(id);
      server.firewall = structuredClone([...rules]);
      return structuredClone(server.firewall);
    });
  }

  getFirewall(id: string) {
    return this.#run('getFirewall', id, () => {
      const server = this.servers.get(id);
      return server && structuredClone(server.firewall);
    });
  }

  async close() {
    this.release();
  }

  #require(id: string) {
    const server = this.servers.get(id);
    if (!server) throw new Error(`test driver: no server ${id}`);
    return server;
  }
}

/** Every file under `dir`, by its `/`-separated relative path. */
function readTree(dir: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath, entry.name);
    files.set(path.relative(dir, full).split(path.sep).join('/'), readFileSync(full));
  }
  return files;
}
