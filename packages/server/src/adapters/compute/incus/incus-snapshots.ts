import type { SnapshotDriver, SnapshotTaken } from '../compute-driver.js';
import { CLI_BUILD_KEY, GATEWAY_CERT_EXPIRES_KEY } from './incus-agent.js';
import { type IncusClient, isNotFound } from './incus-client.js';
import type { Instance, WritableInstance } from './incus-instance.js';

// Snapshots of a machine's disk as Incus snapshots of its instance (`svc-<snapshot id>`), on the
// instance's own storage pool: copy-on-write on btrfs, so a running container is snapshotted in
// place, without stopping it.

/** What the snapshots need of the driver: its machines and its ordering of their changes. */
export interface IncusSnapshotHost {
  /** The machine's instance (`svc-<id>` or the warm-pool member claimed for it). */
  find(serverId: string): Promise<Instance | undefined>;
  /** One change per machine at a time (the driver's own queue). */
  serial<T>(serverId: string, task: () => Promise<T>): Promise<T>;
  /** Instance changes that touch its devices run under the bridge firewall's lock. */
  exclusive<T>(task: () => Promise<T>): Promise<T>;
}

interface IncusSnapshot {
  readonly name: string;
  /** Bytes the snapshot holds alone; -1 when the pool does not account for it. */
  readonly size?: number;
}

/**
 * Config keys that record what is on the disk (an Agent's `svc` build, its gateway certificate's
 * end): after a restore they are the snapshot's, so the next start brings the current build in.
 */
const DISK_KEYS = [CLI_BUILD_KEY, GATEWAY_CERT_EXPIRES_KEY];

/** A service snapshot id is a UUID; anything else would not make a safe Incus name. */
const SNAPSHOT_ID = /^[A-Za-z0-9-]{1,60}$/;

export const snapshotName = (snapshotId: string): string => {
  if (!SNAPSHOT_ID.test(snapshotId)) {
    throw new Error(`not a snapshot id: ${JSON.stringify(snapshotId)}`);
  }
  return `svc-${snapshotId}`;
};

export class IncusSnapshots implements SnapshotDriver {
  readonly whileRunning = true;

  constructor(
    readonly client: IncusClient,
    readonly host: IncusSnapshotHost,
  ) {}

  /** Takes `svc-<snapshotId>`; one an earlier try made is answered as it is. */
  create(serverId: string, snapshotId: string): Promise<SnapshotTaken> {
    const name = snapshotName(snapshotId);
    return this.host.serial(serverId, async () => {
      const instance = await this.#require(serverId);
      const existing = await this.#get(instance.name, name);
      if (existing) return taken(existing);
      try {
        await this.client.call('POST', `/1.0/instances/${instance.name}/snapshots`, {
          body: { name, stateful: false },
        });
      } catch (error) {
        // Another process's try of the same snapshot may have won: its copy is the one.
        const made = await this.#get(instance.name, name);
        if (made) return taken(made);
        throw error;
      }
      const made = await this.#get(instance.name, name);
      if (!made) throw new Error(`Incus made no snapshot ${name} of ${instance.name}`);
      return taken(made);
    });
  }

  /**
   * Puts the stopped instance's disk back as the snapshot holds it. Incus's restore also puts
   * back the instance's config and devices of that time; the service's settings since (size,
   * labels, address) are what the machine is now, so they are written back after it: only the
   * disk goes back, with the keys that describe it (`DISK_KEYS`).
   */
  restore(serverId: string, ref: string): Promise<void> {
    return this.host.serial(serverId, async () => {
      const instance = await this.#require(serverId);
      if (instance.status === 'Running') throw new Error(`instance ${instance.name} is running`);
      if (!(await this.#get(instance.name, ref))) {
        throw new Error(`instance ${instance.name} has no snapshot ${ref}`);
      }
      const path = `/1.0/instances/${instance.name}`;
      const before = await this.client.call<Instance & WritableInstance>('GET', path);
      await this.host.exclusive(() => this.client.call('PUT', path, { body: { restore: ref } }));
      const restored = await this.client.call<Instance>('GET', path);
      const { architecture, devices, ephemeral, profiles, stateful, description } = before;
      const config = { ...before.config };
      for (const key of DISK_KEYS) {
        const value = restored.config?.[key];
        if (value === undefined) delete config[key];
        else config[key] = value;
      }
      await this.host.exclusive(() =>
        this.client.call('PUT', path, {
          body: { architecture, config, devices, ephemeral, profiles, stateful, description },
        }),
      );
    });
  }

  /** Deletes the snapshot; one already gone, or whose machine is gone, is no error. */
  remove(serverId: string, ref: string): Promise<void> {
    return this.host.serial(serverId, async () => {
      const instance = await this.host.find(serverId);
      if (!instance) return;
      try {
        await this.client.call(
          'DELETE',
          `/1.0/instances/${instance.name}/snapshots/${encodeURIComponent(ref)}`,
        );
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
    });
  }

  async #require(serverId: string): Promise<Instance> {
    const instance = await this.host.find(serverId);
    if (!instance) throw new Error(`no machine ${serverId} in Incus`);
    return instance;
  }

  async #get(instance: string, name: string): Promise<IncusSnapshot | undefined> {
    try {
      return await this.client.call<IncusSnapshot>(
        'GET',
        `/1.0/instances/${instance}/snapshots/${encodeURIComponent(name)}`,
      );
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }
}

/**
 * The snapshot's own bytes as Incus reports them (on btrfs, what its quota group holds alone:
 * what changed since, shared blocks not counted twice). A pool that does not account for it
 * (`dir`, or btrfs without quotas) reports -1: then 0, as nothing is known of its size.
 */
const taken = (snapshot: IncusSnapshot): SnapshotTaken => ({
  ref: snapshot.name,
  sizeBytes: snapshot.size !== undefined && snapshot.size > 0 ? snapshot.size : 0,
});
