import { lookup } from 'node:dns/promises';
import { isIPv4 } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { Logger } from '../../../logger.js';
import type { AclRule } from './incus-firewall.js';
import { fromNumber, toNumber } from './incus-instance-spec.js';

/**
 * Where no machine goes unless the operator opts in (`INCUS_EGRESS_ALLOW`): the private ranges
 * (the operator's own networks), shared address space (carrier NAT), link-local (a cloud's
 * metadata service), a cloud's host-side endpoint (Azure's 168.63.129.16: DHCP, DNS, health and
 * agent traffic of the host's own VM), and what is never a destination on the internet (this
 * network, loopback, IETF protocol assignments, benchmarking, multicast, reserved and broadcast).
 */
export const BLOCKED_EGRESS = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '168.63.129.16/32',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '224.0.0.0/4',
  '240.0.0.0/4',
] as const;

/** What a machine may reach beyond the machines on its bridge. */
export interface EgressPolicy {
  /** The bridge's address with its prefix (`10.77.0.1/24`): the host, and the machines' subnet. */
  readonly bridgeCidr: string;
  /** Every IPv4 address of the host (any interface): none reachable but as `service` says. */
  readonly hostAddresses: readonly string[];
  /** Where machines reach the service (`SVC_API_URL`): these addresses, this TCP port. */
  readonly service?: { readonly addresses: readonly string[]; readonly port: number };
  /** IPv4 CIDRs the operator lets machines reach despite `BLOCKED_EGRESS`. */
  readonly allow: readonly string[];
}

/** An inclusive range of IPv4 addresses as numbers. */
type Range = readonly [number, number];

const LAST = 2 ** 32 - 1;

const rangeOf = (cidr: string): Range => {
  const network = toNumber(ipaddr.IPv4.networkAddressFromCIDR(cidr));
  return [network, toNumber(ipaddr.IPv4.broadcastAddressFromCIDR(cidr))];
};

/** Sorted, merged, non-overlapping. */
function normalize(ranges: readonly Range[]): Range[] {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const [start, end] of sorted) {
    const last = merged[merged.length - 1];
    if (last && start <= last[1] + 1) last[1] = Math.max(last[1], end);
    else merged.push([start, end]);
  }
  return merged;
}

/** `ranges` without any address of `removed`. */
function subtract(ranges: readonly Range[], removed: readonly Range[]): Range[] {
  let result = normalize(ranges);
  for (const [cutStart, cutEnd] of normalize(removed)) {
    result = result.flatMap(([start, end]): Range[] => {
      if (cutEnd < start || cutStart > end) return [[start, end]];
      return [
        ...(start < cutStart ? [[start, cutStart - 1] as const] : []),
        ...(cutEnd < end ? [[cutEnd + 1, end] as const] : []),
      ];
    });
  }
  return result;
}

/** The fewest CIDRs covering exactly `ranges`: at each start, the largest aligned block that fits. */
export function toCidrs(ranges: readonly Range[]): string[] {
  const cidrs: string[] = [];
  for (const [first, last] of normalize(ranges)) {
    for (let start = first; start <= last; ) {
      let bits = 32;
      while (bits > 0) {
        const size = 2 ** (33 - bits);
        if (start % size !== 0 || start + size - 1 > last) break;
        bits--;
      }
      cidrs.push(`${fromNumber(start)}/${bits}`);
      start += 2 ** (32 - bits);
    }
  }
  return cidrs;
}

/**
 * The destinations a machine may reach with any protocol: the whole IPv4 space without
 * `BLOCKED_EGRESS` (but what `allow` gives back), and never the bridge's subnet (neighbours are
 * reached through their own firewalls' rules) nor any address of the host.
 */
export function outsideDestinations(policy: EgressPolicy): string[] {
  const open = [
    ...subtract([[0, LAST]], BLOCKED_EGRESS.map(rangeOf)),
    ...policy.allow.map(rangeOf),
  ];
  const closed = [
    rangeOf(policy.bridgeCidr),
    ...policy.hostAddresses.map((address) => rangeOf(`${address}/32`)),
  ];
  return toCidrs(subtract(open, closed));
}

/**
 * The closed ranges as the host's baseline drops them for traffic the bridge's machines send
 * through the host (`incus-host-guard.ts`): `BLOCKED_EGRESS` without the bridge's own subnet
 * (neighbours are their own firewalls' to decide) and without what the operator opened.
 */
export function blockedDestinations(bridgeCidr: string, allow: readonly string[]): string[] {
  return toCidrs(
    subtract(BLOCKED_EGRESS.map(rangeOf), [rangeOf(bridgeCidr), ...allow.map(rangeOf)]),
  );
}

/**
 * A machine's egress rules. With the bridge's egress default `drop`, traffic between two
 * machines is let through only by the receiving machine's own ingress rules: a neighbour on the
 * bridge gets no more than its firewall gives everyone. Of the host, only the bridge's DNS (Incus
 * lets DHCP and DNS to the host through before any ACL) and the service's port answer.
 */
export function egressRules(ipv4: string, policy: EgressPolicy): AclRule[] {
  const source = `${ipv4}/32`;
  const host = `${ipaddr.IPv4.parseCIDR(policy.bridgeCidr)[0].toString()}/32`;
  const allow = (rule: Omit<AclRule, 'action' | 'state' | 'source'>): AclRule => ({
    action: 'allow',
    state: 'enabled',
    source,
    ...rule,
  });
  const service = policy.service;
  return [
    allow({ protocol: 'udp', destination: host, destination_port: '53', description: 'DNS' }),
    allow({ protocol: 'tcp', destination: host, destination_port: '53', description: 'DNS' }),
    ...(service && service.addresses.length > 0
      ? [
          allow({
            protocol: 'tcp',
            destination: service.addresses.map((address) => `${address}/32`).join(','),
            destination_port: String(service.port),
            description: 'the service',
          }),
        ]
      : []),
    allow({ destination: outsideDestinations(policy).join(','), description: 'outside' }),
  ];
}

/**
 * Where machines reach the service: the host and port of their `SVC_API_URL` (an address, or
 * a name looked up now; one that does not resolve here opens nothing: the machines' lookups
 * would fail too).
 */
export async function serviceEndpoint(
  machineUrl: string,
  log: Logger,
): Promise<{ addresses: string[]; port: number }> {
  const url = new URL(machineUrl);
  const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIPv4(host)) return { addresses: [host], port };
  try {
    const found = await lookup(host, { all: true, family: 4 });
    return { addresses: found.map((entry) => entry.address), port };
  } catch (error) {
    log.warn({ err: error, host }, 'the service URL does not resolve: machines cannot reach it');
    return { addresses: [], port };
  }
}
