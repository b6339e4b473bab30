import type { FirewallRule } from '@svc/contract';
import ipaddr from 'ipaddr.js';

// Rule matching is what a machine's firewall does, so it lives with the drivers that enforce
// rules (the local driver's SSH server); the service only validates and canonicalizes them.

/** Whether some rule lets `address` reach `protocol`/`port` (what a stateful firewall checks). */
export function allows(
  rules: readonly FirewallRule[],
  protocol: 'tcp' | 'udp',
  port: number,
  address: string,
): boolean {
  let peer = ipaddr.parse(address);
  // A v4 peer on a dual-stack socket arrives as ::ffff:a.b.c.d.
  if (peer.kind() === 'ipv6' && (peer as ipaddr.IPv6).isIPv4MappedAddress()) {
    peer = (peer as ipaddr.IPv6).toIPv4Address();
  }
  return rules.some((rule) => {
    if (rule.protocol !== protocol) return false;
    const [low, high = low] = rule.port.split('-').map(Number) as [number, number?];
    if (port < low || port > (high as number)) return false;
    return rule.sourceIps.some((cidr) => {
      const [network, bits] = ipaddr.parseCIDR(cidr);
      return network.kind() === peer.kind() && peer.match(network, bits);
    });
  });
}
