import type { SnapshotDriver, SnapshotTaken } from '../compute-driver.js';
import type { Action, ActionWaiter } from './hcloud-actions.js';
import { type HcloudClient, ignoreMissing, sleep } from './hcloud-client.js';
import {
  type HcloudImage,
  type HcloudServer,
  hcloudLabels,
  labelsOf,
  resourceName,
} from './hetzner-server.js';

// Snapshots of a machine's disk as Hetzner snapshot images (`create_image`), independent of the
// server (they outlive it: the service removes each before it deletes the machine, and the
// driver's deletion removes what carries the machine's label), billed by the GB they hold.

/**
 * The service's snapshot id on the image. Outside the `svc/` prefix: those labels are the
 * machine's own, which `labelsOf` reads back as its labels.
 */
export const SNAPSHOT_LABEL = 'svc_snapshot';

/** Hetzner's label values: 63 characters at most, letters, digits, `-`, `_` and `.`. */
const SNAPSHOT_ID = /^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$/;
const SETTLE_POLL_MS = 2_000;
const SETTLE_LIMIT_MS = 15 * 60_000;

interface SnapshotImage extends HcloudImage {
  /** GB the image takes in Hetzner's storage (what it is billed by); null until stored. */
  readonly image_size: number | null;
  /** GB of the disk it holds. */
  readonly disk_size: number;
}

/** What the snapshots need of the driver: its machines' servers and its ordering of changes. */
export interface HetznerSnapshotHost {
  find(serverId: string): Promise<HcloudServer | undefined>;
  serial<T>(serverId: string, task: () => Promise<T>): Promise<T>;
}

export class HetznerSnapshots implements SnapshotDriver {
  /**
   * Hetzner copies a running server's disk as it is at that moment (as a sudden power loss would
   * leave it, which journaling file systems recover from); it advises stopping for consistency.
   */
  readonly whileRunning = true;

  constructor(
    readonly client: HcloudClient,
    readonly actions: ActionWaiter,
    readonly host: HetznerSnapshotHost,
  ) {}

  /** A snapshot image labelled with `snapshotId`; one an earlier try made is answered instead. */
  create(serverId: string, snapshotId: string): Promise<SnapshotTaken> {
    if (!SNAPSHOT_ID.test(snapshotId)) {
      throw new Error(`not a snapshot id: ${JSON.stringify(snapshotId)}`);
    }
    return this.host.serial(serverId, async () => {
      const [existing] = await this.client.list<SnapshotImage>('/images', 'images', {
        type: 'snapshot',
        label_selector: `${SNAPSHOT_LABEL}==${snapshotId}`,
      });
      if (existing) return taken(await this.#settle(existing));
      const server = await this.#require(serverId);
      const made = await this.client.request<{ image: SnapshotImage; action: Action }>(
        'POST',
        `/servers/${server.id}/actions/create_image`,
        {
          body: {
            type: 'snapshot',
            description: `svc-${snapshotId} of ${resourceName(serverId)}`,
            // The machine's labels too: a snapshot left after its machine is found and removed
            // with the machine's other leftovers.
            labels: {
              ...hcloudLabels(serverId, labelsOf(server.labels)),
              [SNAPSHOT_LABEL]: snapshotId,
            },
          },
        },
      );
      await this.actions.wait([made.action]);
      return taken(await this.#settle(made.image));
    });
  }

  /**
   * `rebuild` from the snapshot image. Hetzner powers the server off before it writes the disk
   * and boots it after; the port leaves a restored machine stopped, so its power is cut again
   * (not a clean shutdown: a system still booting may ignore the ACPI request, and nothing on
   * the disk is newer than the snapshot it was just written from).
   */
  restore(serverId: string, ref: string): Promise<void> {
    return this.host.serial(serverId, async () => {
      const server = await this.#require(serverId);
      if (server.status === 'running') throw new Error(`server ${server.name} is running`);
      const rebuilt = await this.client.request<{ action: Action }>(
        'POST',
        `/servers/${server.id}/actions/rebuild`,
        // The description types `image` as a string: an id or a system image's name.
        { body: { image: imageId(ref) } },
      );
      await this.actions.wait([rebuilt.action]);
      const after = await this.#require(serverId);
      if (after.status === 'off') return;
      const off = await this.client.request<{ action: Action }>(
        'POST',
        `/servers/${server.id}/actions/poweroff`,
      );
      await this.actions.wait([off.action]);
    });
  }

  /** Deletes the snapshot image; one already gone is no error. */
  remove(serverId: string, ref: string): Promise<void> {
    return this.host.serial(serverId, async () => {
      await ignoreMissing(this.client.request('DELETE', `/images/${imageId(ref)}`));
    });
  }

  async #require(serverId: string): Promise<HcloudServer> {
    const server = await this.host.find(serverId);
    if (!server) throw new Error(`no server for machine ${serverId} in Hetzner Cloud`);
    return server;
  }

  /** The image once Hetzner has stored it (`available`), read afresh for its size. */
  async #settle(image: SnapshotImage): Promise<SnapshotImage> {
    const deadline = Date.now() + SETTLE_LIMIT_MS;
    for (;;) {
      const { image: current } = await this.client.request<{ image: SnapshotImage }>(
        'GET',
        `/images/${image.id}`,
      );
      if (current.status === 'available') return current;
      if (current.status !== 'creating') {
        throw new Error(`snapshot image ${current.id} is ${current.status}`);
      }
      if (Date.now() > deadline) throw new Error(`snapshot image ${current.id} still creating`);
      await sleep(SETTLE_POLL_MS);
    }
  }
}

const imageId = (ref: string): string => {
  if (!/^\d+$/.test(ref)) throw new Error(`not a Hetzner image id: ${JSON.stringify(ref)}`);
  return ref;
};

/**
 * Hetzner bills a snapshot by its `image_size` (GB, decimal); before it is known, the disk it
 * holds is the most it can take.
 */
const taken = (image: SnapshotImage): SnapshotTaken => ({
  ref: String(image.id),
  sizeBytes: Math.round((image.image_size ?? image.disk_size) * 1e9),
});
