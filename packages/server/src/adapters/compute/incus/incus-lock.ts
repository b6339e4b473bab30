import { randomUUID } from 'node:crypto';
import { type IncusClient, IncusError, isNotFound } from './incus-client.js';

const UNTIL_KEY = 'user.svc.lock-until';
/** Who holds it: a value of the taker's own, so a holder never releases a lock it lost. */
const HOLDER_KEY = 'user.svc.lock-holder';

export interface IncusLockOptions {
  /** A holder that died keeps the lock this long at most. */
  readonly leaseMs?: number;
  /** How long a taker waits for the holder before failing. */
  readonly waitMs?: number;
  readonly pollMs?: number;
}

/**
 * A lock between every process that talks to one Incus: a network ACL that only one of them can
 * create (Incus refuses a second of the same name), never attached, deleted to release. Needed
 * because Incus applies a network's firewall without serializing concurrent changes: two
 * processes changing the bridge's ACLs at once can both pass the ETag check (one change lost)
 * or make nftables fail half-way ("Failed clearing firewall").
 */
export class IncusLock {
  constructor(
    readonly client: IncusClient,
    readonly name: string,
    readonly options: IncusLockOptions = {},
  ) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    const holder = randomUUID();
    await this.#acquire(holder);
    // A long task keeps its lease: without renewal another process would break it mid-way.
    const { leaseMs = 30_000 } = this.options;
    const renewal = setInterval(() => void this.#renew(holder).catch(() => {}), leaseMs / 3);
    renewal.unref();
    try {
      return await task();
    } finally {
      clearInterval(renewal);
      await this.#release(holder);
    }
  }

  async #acquire(holder: string): Promise<void> {
    const { leaseMs = 30_000, waitMs = 60_000, pollMs = 50 } = this.options;
    const deadline = Date.now() + waitMs;
    for (;;) {
      try {
        await this.client.call('POST', '/1.0/network-acls', {
          body: {
            name: this.name,
            description: 'held while a service changes network ACLs; deleted when done',
            config: { [UNTIL_KEY]: String(Date.now() + leaseMs), [HOLDER_KEY]: holder },
          },
        });
        return;
      } catch (error) {
        if (!(error instanceof IncusError)) throw error;
      }
      const held = await this.#holder();
      // Its holder died: the lease is over, so the lock is free to break.
      const expired = held && Number(held.config[UNTIL_KEY] ?? 0) < Date.now();
      if (expired) await this.#release(held.config[HOLDER_KEY] ?? '');
      if (Date.now() > deadline) {
        throw new Error(`Incus lock ${this.name} still held by another process after ${waitMs} ms`);
      }
      await new Promise((resolve) => setTimeout(resolve, pollMs * (0.5 + Math.random())));
    }
  }

  async #holder(): Promise<{ config: Record<string, string> } | undefined> {
    try {
      return await this.client.call('GET', `/1.0/network-acls/${encodeURIComponent(this.name)}`);
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  /** Moves the lease on while this holder still has the lock. */
  async #renew(holder: string): Promise<void> {
    const { leaseMs = 30_000 } = this.options;
    const path = `/1.0/network-acls/${encodeURIComponent(this.name)}`;
    const { metadata, etag } = await this.client.request<{ config: Record<string, string> }>(
      'GET',
      path,
    );
    if (metadata.config[HOLDER_KEY] !== holder) return;
    await this.client.call('PATCH', path, {
      body: { config: { ...metadata.config, [UNTIL_KEY]: String(Date.now() + leaseMs) } },
      ...(etag && { headers: { 'If-Match': etag } }),
    });
  }

  /** Deletes the lock if `holder` still holds it (one who lost it leaves the new holder's). */
  async #release(holder: string): Promise<void> {
    const held = await this.#holder();
    if (!held || (held.config[HOLDER_KEY] ?? '') !== holder) return;
    try {
      await this.client.call('DELETE', `/1.0/network-acls/${encodeURIComponent(this.name)}`);
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }
}
