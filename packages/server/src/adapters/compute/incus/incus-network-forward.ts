import { type IncusClient, IncusError, isNotFound } from './incus-client.js';

/** One port entry of an Incus network forward. */
export interface ForwardPort {
  readonly description: string;
  readonly protocol: string;
  readonly listen_port: string;
  readonly target_address: string;
  readonly target_port?: string;
}

/** An Incus network forward: one listen address of the host, its port entries. */
export interface Forward {
  readonly listen_address: string;
  readonly description: string;
  readonly config: Record<string, string>;
  readonly ports: ForwardPort[];
  /** The cluster member it lives on (`none` on a single server). */
  readonly location?: string;
}

/** How often a change of a forward is tried against writers that do not take the lock. */
const WRITE_ATTEMPTS = 10;
/** Forwards the service made (and deletes once empty); one made by hand is only edited. */
const FORWARD_DESCRIPTION = 'SSH to Plain VMs (svc)';

const forwardsPath = (network: string) => `/1.0/networks/${encodeURIComponent(network)}/forwards`;

/** Every forward of the bridge (on a cluster, every member's). */
export async function listForwards(client: IncusClient, network: string): Promise<Forward[]> {
  const forwards = await client.call<Forward[]>('GET', forwardsPath(network), {
    query: { recursion: '1' },
  });
  return forwards.map((forward) => ({ ...forward, ports: forward.ports ?? [] }));
}

/**
 * Rewrites the port list of the forward on `listen` (on `member` of a cluster) with `change`,
 * written with the forward's ETag, until a fresh read shows the result: made when missing,
 * deleted when the service made it and it is left empty. The caller holds the bridge's lock;
 * the ETag covers writers that do not take it.
 */
export async function changeForward(
  client: IncusClient,
  network: string,
  at: { readonly listen: string; readonly member: string | undefined },
  change: (ports: ForwardPort[]) => Promise<ForwardPort[]>,
): Promise<void> {
  const path = `${forwardsPath(network)}/${at.listen}`;
  const query = at.member ? { target: at.member } : undefined;
  for (let attempt = 1; ; attempt++) {
    const read = await readForward(client, path, query);
    const before = read?.metadata.ports ?? [];
    const after = await change(before);
    if (sameEntries(before, after)) return;
    if (attempt > WRITE_ATTEMPTS) {
      throw new Error(`could not update the network forward ${at.listen} of ${network}`);
    }
    try {
      if (!read) {
        await client.call('POST', forwardsPath(network), {
          ...(query && { query }),
          body: {
            listen_address: at.listen,
            description: FORWARD_DESCRIPTION,
            config: {},
            ports: after,
          },
        });
      } else if (after.length === 0 && read.metadata.description === FORWARD_DESCRIPTION) {
        await client.call('DELETE', path, { ...(query && { query }) });
      } else {
        const { description, config } = read.metadata;
        await client.call('PUT', path, {
          ...(query && { query }),
          body: { description, config, ports: after },
          ...(read.etag && { headers: { 'If-Match': read.etag } }),
        });
      }
    } catch (error) {
      // Another writer changed (or made, or deleted) it since our read: read again.
      const isRace =
        error instanceof IncusError &&
        ([404, 409, 412].includes(error.status) || /already exists/i.test(error.incusMessage));
      if (!isRace) throw error;
    }
  }
}

async function readForward(
  client: IncusClient,
  path: string,
  query: Record<string, string> | undefined,
) {
  try {
    return await client.request<Forward>('GET', path, { ...(query && { query }) });
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

const key = (entry: ForwardPort) =>
  [
    entry.description,
    entry.protocol,
    entry.listen_port,
    entry.target_address,
    entry.target_port ?? '',
  ].join(' ');

function sameEntries(a: readonly ForwardPort[], b: readonly ForwardPort[]): boolean {
  const left = a.map(key).sort();
  const right = b.map(key).sort();
  return left.length === right.length && left.every((entry, i) => entry === right[i]);
}
