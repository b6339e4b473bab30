import { readFile } from 'node:fs/promises';
import { ComputeUnavailable } from '../compute-driver.js';

/** Where the kernel says whether bridged traffic passes iptables/ip6tables (br_netfilter). */
export const BRIDGE_NF_DIR = '/proc/sys/net/bridge';

/** A proc file's text, or `undefined` when it does not exist (the module is not loaded). */
export type ProcReader = (file: string) => Promise<string | undefined>;

const readProc: ProcReader = async (file) => {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
};

/**
 * The bridge's ACLs (each machine's firewall) see traffic between two machines on the bridge only
 * when br_netfilter hands bridged frames to iptables and ip6tables; without it, root in one
 * machine reaches every port of its neighbours whatever their firewalls say. Checked on the local
 * host only: a remote daemon's kernel is not readable from here.
 */
export async function requireBridgeNetfilter(read: ProcReader = readProc): Promise<void> {
  const keys = ['bridge-nf-call-iptables', 'bridge-nf-call-ip6tables'];
  const values = await Promise.all(keys.map((key) => read(`${BRIDGE_NF_DIR}/${key}`)));
  const off = keys.filter((_, index) => values[index]?.trim() !== '1');
  if (off.length === 0) return;
  const why =
    values[0] === undefined
      ? 'the br_netfilter module is not loaded'
      : off.map((key) => `net.bridge.${key} is not 1`).join(' and ');
  throw new ComputeUnavailable(
    `machines' firewalls do not filter traffic between machines on the bridge (${why}): run \`sudo npm run incus:setup\`, or \`sudo modprobe br_netfilter && sudo sysctl -w net.bridge.bridge-nf-call-iptables=1 net.bridge.bridge-nf-call-ip6tables=1\` and persist both`,
  );
}
