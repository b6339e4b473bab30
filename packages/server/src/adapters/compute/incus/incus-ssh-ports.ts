import type { IncusPublicSsh } from '../../../config/incus-public-ssh.js';
import type { IncusClient } from './incus-client.js';
import type { Instance } from './incus-instance.js';
import type { ForwardPort } from './incus-network-forward.js';

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

/** The recorded port when it is still free, else the lowest free port of the range. */
export function freePort(
  range: IncusPublicSsh['ports'],
  used: ReadonlySet<number>,
  recorded: number,
): number {
  const { first, last } = range;
  if (recorded >= first && recorded <= last && !used.has(recorded)) return recorded;
  for (let port = first; port <= last; port++) if (!used.has(port)) return port;
  throw new Error(`no free SSH port left in INCUS_SSH_PORTS (${first}-${last})`);
}

/** `22000,22005-22007` → its ports. */
function portList(spec: string): number[] {
  return spec.split(',').flatMap((part) => {
    const [from, to] = part.split('-').map(Number);
    if (!from) return [];
    const ports: number[] = [];
    for (let port = from; port <= (to ?? from); port++) ports.push(port);
    return ports;
  });
}
