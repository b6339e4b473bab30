import ipaddr from 'ipaddr.js';
import type { Env } from './env.js';

/**
 * Outside SSH to Plain VMs on Incus: each VM gets one port of `ports` on the host's public
 * address, forwarded to its port 22 (an Incus network forward).
 */
export interface IncusPublicSsh {
  /**
   * The listen address by cluster member name; `*` is every member (one host, or a cluster whose
   * members all take the one address given).
   */
  readonly addresses: Readonly<Record<string, string>>;
  readonly ports: { readonly first: number; readonly last: number };
  /**
   * How long a freed port is held back (`INCUS_SSH_PORT_HOLD_HOURS`); 0: not at all; unset: that
   * variable's default, 24 hours.
   */
  readonly holdMs?: number;
}

/** Every member, when `INCUS_PUBLIC_ADDRESS` is one address. */
export const ANY_MEMBER = '*';

const ADDRESS_EXAMPLE =
  'give an IPv4 address of this host (203.0.113.5) or one per cluster member (member1=203.0.113.5,member2=203.0.113.6)';

/** Ranges no outside client reaches the host at. */
const UNREACHABLE_RANGES = new Set(['unspecified', 'loopback', 'multicast', 'broadcast']);

function publicAddress(raw: string): string | undefined {
  if (!ipaddr.IPv4.isValidFourPartDecimal(raw)) return undefined;
  return UNREACHABLE_RANGES.has(ipaddr.IPv4.parse(raw).range()) ? undefined : raw;
}

function addresses(raw: string): Record<string, string> | string {
  const entries = raw
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  if (entries.length === 1 && !entries[0]?.includes('=')) {
    const address = publicAddress(entries[0] as string);
    return address
      ? { [ANY_MEMBER]: address }
      : `"${entries[0]}" is not usable; ${ADDRESS_EXAMPLE}`;
  }
  const table: Record<string, string> = {};
  for (const entry of entries) {
    const [member, value, ...rest] = entry.split('=').map((part) => part.trim());
    if (!member || !value || rest.length > 0)
      return `"${entry}" is not member=address; ${ADDRESS_EXAMPLE}`;
    if (member in table) return `cluster member ${member} is named twice`;
    const address = publicAddress(value);
    if (!address) return `"${value}" (for ${member}) is not usable; ${ADDRESS_EXAMPLE}`;
    table[member] = address;
  }
  return table;
}

function ports(raw: string): IncusPublicSsh['ports'] | string {
  const match = /^\s*(\d{1,5})\s*(?:-\s*(\d{1,5}))?\s*$/.exec(raw);
  const first = Number(match?.[1]);
  const last = Number(match?.[2] ?? match?.[1]);
  if (!match || first < 1 || last > 65535 || first > last) {
    return `"${raw}" is not a port range such as 22000-22999 (ports 1-65535, first not above last)`;
  }
  return { first, last };
}

type Check = <T>(name: string, result: T | string) => T | undefined;

/** `INCUS_PUBLIC_ADDRESS` and `INCUS_SSH_PORTS`; unset address: no outside SSH (the bridge only). */
export function incusPublicSsh(env: Env, check: Check): IncusPublicSsh | undefined {
  if (!env.INCUS_PUBLIC_ADDRESS) return undefined;
  const table = check('INCUS_PUBLIC_ADDRESS', addresses(env.INCUS_PUBLIC_ADDRESS));
  const range = check('INCUS_SSH_PORTS', ports(env.INCUS_SSH_PORTS));
  return table && range
    ? { addresses: table, ports: range, holdMs: env.INCUS_SSH_PORT_HOLD_HOURS * 3_600_000 }
    : undefined;
}
