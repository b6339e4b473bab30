import { ComputeFailure } from '../compute-driver.js';
import type { Action, ActionWaiter } from './hcloud-actions.js';
import { type HcloudClient, ignoreMissing, sleep } from './hcloud-client.js';
import { type HcloudImage, hcloudLabels, MACHINE_LABEL, resourceName } from './hetzner-server.js';

const SETTLE_POLL_MS = 2_000;
const SETTLE_LIMIT_MS = 5 * 60_000;
/** How long the list of system images is reused: it changes rarely, and every call is rated. */
const SYSTEM_LIST_TTL_MS = 10 * 60_000;

/** The images servers boot: system images by name, and the snapshots clones start from. */
export class HetznerImages {
  /** System images known to exist, by name. */
  readonly #known = new Set<string>();
  #systemList: { readonly names: ReadonlySet<string>; readonly at: number } | undefined;

  constructor(
    private readonly client: HcloudClient,
    private readonly actions: ActionWaiter,
  ) {}

  /** A system image by name; one that does not exist fails provisioning at once. */
  async requireSystem(name: string | undefined): Promise<string> {
    if (name && this.#known.has(name)) return name;
    const images = name
      ? await this.client.list<HcloudImage>('/images', 'images', { name, architecture: 'x86' })
      : [];
    if (!name || images.length === 0) {
      throw new ComputeFailure(
        'image_unavailable',
        `image_unavailable: Hetzner Cloud has no image "${name ?? ''}"`,
      );
    }
    this.#known.add(name);
    return name;
  }

  /** Which of these names are system images of the project (x86), from a list kept a while. */
  async systemImages(names: readonly string[]): Promise<ReadonlySet<string>> {
    if (!this.#systemList || Date.now() - this.#systemList.at > SYSTEM_LIST_TTL_MS) {
      const images = await this.client.list<HcloudImage>('/images', 'images', {
        type: 'system',
        architecture: 'x86',
      });
      this.#systemList = {
        names: new Set(
          images.map((image) => image.name).filter((name): name is string => name !== null),
        ),
        at: Date.now(),
      };
    }
    const listed = this.#systemList.names;
    return new Set(names.filter((name) => listed.has(name)));
  }

  /**
   * The snapshot a clone starts from: made from the source server's disk once (labelled with
   * the clone's id, so a retry finds it instead of making another).
   */
  async snapshotFor(
    source: { readonly id: string; readonly serverId: number },
    clone: { readonly id: string; readonly labels: Readonly<Record<string, string>> },
  ): Promise<number> {
    const cloneId = clone.id;
    const [existing] = await this.snapshotsOf(cloneId);
    if (existing) {
      if (existing.status !== 'available') await this.#settle(existing.id);
      return existing.id;
    }
    const made = await this.client.request<{ image: HcloudImage; action: Action }>(
      'POST',
      `/servers/${source.serverId}/actions/create_image`,
      {
        body: {
          type: 'snapshot',
          description: `clone of ${resourceName(source.id)} for ${resourceName(cloneId)}`,
          // The clone's labels: the reconciler finds a snapshot its clone never used.
          labels: hcloudLabels(cloneId, clone.labels),
        },
      },
    );
    await this.actions.wait([made.action]);
    return made.image.id;
  }

  snapshotsOf(id: string): Promise<HcloudImage[]> {
    return this.client.list<HcloudImage>('/images', 'images', {
      type: 'snapshot',
      label_selector: `${MACHINE_LABEL}==${id}`,
    });
  }

  /** Snapshots cost by the GB: gone once the clone runs, or with the machine. */
  async removeSnapshotsOf(id: string): Promise<void> {
    for (const image of await this.snapshotsOf(id)) {
      await ignoreMissing(this.client.request('DELETE', `/images/${image.id}`));
    }
  }

  async #settle(imageId: number) {
    const deadline = Date.now() + SETTLE_LIMIT_MS;
    for (;;) {
      const { image } = await this.client.request<{ image: HcloudImage }>(
        'GET',
        `/images/${imageId}`,
      );
      if (image.status === 'available') return;
      if (Date.now() > deadline) throw new Error(`snapshot ${imageId} still ${image.status}`);
      await sleep(SETTLE_POLL_MS);
    }
  }
}
