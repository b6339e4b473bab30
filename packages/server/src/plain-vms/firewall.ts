import type { FirewallRule, FirewallRules } from '@svc/contract';
import ipaddr from 'ipaddr.js';
import type { z } from 'zod';

/**
 * The canonical form of a validated rule set: direction `in`, a bare address as `/32` or
 * `/128`, host bits cleared, IPv6 compressed and lower-case, IPv4-mapped IPv6 as IPv4,
 * duplicates dropped.
 */
export function canonicalRules(input: z.output<typeof FirewallRules>): FirewallRule[] {
  return input.rules.map((rule) => ({
    direction: 'in',
    protocol: rule.protocol,
    port: rule.port.split('-').map(Number).join('-'),
    sourceIps: [...new Set(rule.sourceIps.map(canonicalCidr))],
    description: rule.description ?? '',
  }));
}

export function canonicalCidr(source: string): string {
  const [address, bits] = source.includes('/')
    ? ipaddr.parseCIDR(source)
    : (() => {
        const parsed = ipaddr.parse(source);
        return [parsed, parsed.kind() === 'ipv4' ? 32 : 128] as const;
      })();
  // An IPv4-mapped IPv6 rule means the IPv4 network; written so, it also matches IPv4 peers.
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96) {
    const v4 = (address as ipaddr.IPv6).toIPv4Address();
    return `${ipaddr.IPv4.networkAddressFromCIDR(`${v4.toString()}/${bits - 96}`).toString()}/${bits - 96}`;
  }
  const network =
    address.kind() === 'ipv4'
      ? ipaddr.IPv4.networkAddressFromCIDR(`${address.toString()}/${bits}`)
      : ipaddr.IPv6.networkAddressFromCIDR(`${address.toString()}/${bits}`);
  return `${network.toString()}/${bits}`;
}
