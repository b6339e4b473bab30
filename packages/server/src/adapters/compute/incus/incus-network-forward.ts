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
 * A port freed on a forward is held back (`holdMs`) before another machine gets it when the
 * range has room: users of a destroyed VM still have its host:port in their shell history and
 * known_hosts, and at once it would reach a stranger's machine. The hold is best effort (when
 * every unheld port is in use, the port held longest is handed on, `freePort`), so no account
 * can use it to refuse everyone's VMs. It is recorded on the forward itself (a config key per
 * port: the time it was freed), where the allocation is recorded, so it survives restarts and is
 * seen by every process sharing the daemon.
 */
const FREED_PREFIX = 'user.svc.ssh-freed.';

/** The ports of a forward's config still held back at `now`, each with when it was freed. */
export function heldPorts(
  config: Readonly<Record<string, string>>,
  holdMs: number,
  now: number,
): Map<number, number> {
  const held = new Map<number, number>();
  for (const [key, value] of Object.entries(config)) {
    if (!key.startsWith(FREED_PREFIX)) continue;
    const freedAt = Date.parse(value);
    if (freedAt + holdMs > now) held.set(Number(key.slice(FREED_PREFIX.length)), freedAt);
  }
  return held;
}

/**
 * The forward's config after a change from `before` to `after`: ports no entry holds any more
 * are recorded as freed now, holds that are over or whose port is taken again (its own VM's
 * back, or handed on as the oldest hold of a range with no other port left) are dropped.
 */
function configAfter(
  config: Readonly<Record<string, string>>,
  before: readonly ForwardPort[],
  after: readonly ForwardPort[],
  holdMs: number,
  now: number,
): Record<string, string> {
  const held = heldPorts(config, holdMs, now);
  const taken = new Set(after.flatMap((entry) => portList(entry.listen_port)));
  const next = Object.fromEntries(
    Object.entries(config).filter(([key]) => {
      if (!key.startsWith(FREED_PREFIX)) return true;
      const port = Number(key.slice(FREED_PREFIX.length));
      return held.has(port) && !taken.has(port);
    }),
  );
  if (holdMs > 0) {
    for (const port of before.flatMap((entry) => portList(entry.listen_port))) {
      if (!taken.has(port)) next[`${FREED_PREFIX}${port}`] = new Date(now).toISOString();
    }
  }
  return next;
}

/**
 * Rewrites the port list of the forward on `listen` (on `member` of a cluster) with `change`,
 * which is told the ports held back there (and when each was freed), written with the forward's
 * ETag, until a fresh read shows the result: made when missing, deleted when the service made it
 * and it is left empty with no port held. Ports the change frees are held for `holdMs`. The
 * caller holds the bridge's lock; the ETag covers writers that do not take it.
 */
export async function changeForward(
  client: IncusClient,
  network: string,
  at: { readonly listen: string; readonly member: string | undefined; readonly holdMs: number },
  change: (ports: ForwardPort[], held: ReadonlyMap<number, number>) => Promise<ForwardPort[]>,
): Promise<void> {
  const path = `${forwardsPath(network)}/${at.listen}`;
  const query = at.member ? { target: at.member } : undefined;
  for (let attempt = 1; ; attempt++) {
    const read = await readForward(client, path, query);
    const before = read?.metadata.ports ?? [];
    const now = Date.now();
    const config = read?.metadata.config ?? {};
    const after = await change(before, heldPorts(config, at.holdMs, now));
    const nextConfig = configAfter(config, before, after, at.holdMs, now);
    if (sameEntries(before, after) && sameConfig(config, nextConfig)) return;
    if (attempt > WRITE_ATTEMPTS) {
      throw new Error(`could not update the network forward ${at.listen} of ${network}`);
    }
    try {
      const isEmpty = after.length === 0 && !Object.keys(nextConfig).some(isHold);
      if (!read) {
        await client.call('POST', forwardsPath(network), {
          ...(query && { query }),
          body: {
            listen_address: at.listen,
            description: FORWARD_DESCRIPTION,
            config: nextConfig,
            ports: after,
          },
        });
      } else if (isEmpty && read.metadata.description === FORWARD_DESCRIPTION) {
        await client.call('DELETE', path, { ...(query && { query }) });
      } else {
        await client.call('PUT', path, {
          ...(query && { query }),
          body: { description: read.metadata.description, config: nextConfig, ports: after },
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

const isHold = (key: string) => key.startsWith(FREED_PREFIX);

/** Whether a forward's config holds a port whose hold is over (to be dropped). */
export const hasExpiredHold = (forward: Forward, holdMs: number, now: number) =>
  Object.keys(forward.config ?? {}).filter(isHold).length >
  heldPorts(forward.config ?? {}, holdMs, now).size;

function sameConfig(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>) {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].every((key) => a[key] === b[key]);
}

/** `22000,22005-22007` → its ports. */
export function portList(spec: string): number[] {
  return spec.split(',').flatMap((part) => {
    const [from, to] = part.split('-').map(Number);
    if (!from) return [];
    const ports: number[] = [];
    for (let port = from; port <= (to ?? from); port++) ports.push(port);
    return ports;
  });
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
