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

/**
 * The recorded port when it is still free (a port held back since this machine's entry was
 * removed is still its own: nobody else may record it), else the lowest port of the range that
 * is neither used nor held back. A held port is never handed to another machine before its hold
 * is over, even when the range is full otherwise: the hold is there so that an old host:port
 * never reaches a stranger's machine, and a busy range is exactly when ports change hands; the
 * operator widens `INCUS_SSH_PORTS` (or shortens `INCUS_SSH_PORT_HOLD_HOURS`) instead.
 */
export function freePort(
  range: IncusPublicSsh['ports'],
  used: ReadonlySet<number>,
  recorded: number,
  held: ReadonlySet<number> = new Set(),
): number {
  const { first, last } = range;
  if (recorded >= first && recorded <= last && !used.has(recorded)) return recorded;
  for (let port = first; port <= last; port++) {
    if (!used.has(port) && !held.has(port)) return port;
  }
  throw new Error(
    `no free SSH port left in INCUS_SSH_PORTS (${first}-${last}): ${held.size} of them freed recently and held back (INCUS_SSH_PORT_HOLD_HOURS)`,
  );
}
