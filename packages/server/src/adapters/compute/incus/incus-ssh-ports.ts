import type { IncusPublicSsh } from '../../../config/incus-public-ssh.js';
import type { IncusClient } from './incus-client.js';
import type { Instance } from './incus-instance.js';
import { type ForwardPort, portList } from './incus-network-forward.js';

/** The VM's port on the public address, kept on the instance so a lost entry gets it back. */
export const SSH_PORT_KEY = 'user.svc.ssh-port';

/**
 * Ports taken on one forward, and those recorded by other instances (of any project: one whose
 * entry was lost gets its port back, so nobody else may take it meanwhile).
 */
export async function usedPorts(
  client: IncusClient,
  entries: readonly ForwardPort[],
  except: { readonly name: string; readonly project: string },
): Promise<Set<number>> {
  const instances = await client.call<(Instance & { project?: string })[]>(
    'GET',
    '/1.0/instances',
    { query: { recursion: '1', 'all-projects': 'true' } },
  );
  return new Set([
    ...entries.flatMap((entry) => portList(entry.listen_port)),
    ...instances
      .filter((instance) => instance.name !== except.name || instance.project !== except.project)
      .map((instance) => Number(instance.config?.[SSH_PORT_KEY]))
      .filter((port) => Number.isInteger(port) && port > 0),
  ]);
}

/** The port a VM gets; `heldMs` when it was still held back for a destroyed VM's users. */
export interface PortChoice {
  readonly port: number;
  readonly heldMs?: number;
}

/**
 * The recorded port when it is still free (a port held back since this machine's entry was
 * removed is still its own), else the lowest port of the range that is neither used nor held
 * back, else the held port freed longest ago. The hold is best effort: it keeps an old host:port
 * from reaching a stranger's machine whenever the range has room, but never refuses a VM while a
 * port is not in use, or one account that makes and destroys VMs in a loop would hold the whole
 * range and refuse everyone's Plain VMs for the length of the hold. Only a range with every port
 * in use by a VM refuses. `held` maps each held port to the time it was freed.
 */
export function freePort(
  range: IncusPublicSsh['ports'],
  used: ReadonlySet<number>,
  recorded: number,
  held: ReadonlyMap<number, number>,
  now: number,
): PortChoice {
  const { first, last } = range;
  if (recorded >= first && recorded <= last && !used.has(recorded)) return { port: recorded };
  for (let port = first; port <= last; port++) {
    if (!used.has(port) && !held.has(port)) return { port };
  }
  const oldest = [...held]
    .filter(([port]) => port >= first && port <= last && !used.has(port))
    .sort(([portA, freedA], [portB, freedB]) => freedA - freedB || portA - portB)[0];
  if (oldest) return { port: oldest[0], heldMs: now - oldest[1] };
  throw new Error(
    `no free SSH port left in INCUS_SSH_PORTS (${first}-${last}): every port is in use by a Plain VM; widen the range`,
  );
}
