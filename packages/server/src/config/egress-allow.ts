import ipaddr from 'ipaddr.js';

/**
 * `INCUS_EGRESS_ALLOW`: comma-separated IPv4 CIDRs machines may reach though private or
 * link-local (`10.20.0.0/16`). A problem names the entry; machines have no IPv6 route, so an
 * IPv6 range would open nothing and is refused rather than ignored.
 */
export function parseEgressAllow(raw: string): string[] | string {
  const list = raw
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  for (const entry of list) {
    if (!ipaddr.IPv4.isValidCIDR(entry)) {
      return ipaddr.IPv6.isValidCIDR(entry)
        ? `${entry}: IPv4 ranges only (machines have no IPv6 route)`
        : `${entry} is not an IPv4 CIDR such as 10.20.0.0/16`;
    }
    const network = ipaddr.IPv4.networkAddressFromCIDR(entry).toString();
    const bits = entry.split('/')[1];
    if (`${network}/${bits}` !== entry)
      return `${entry} has host bits set: write ${network}/${bits}`;
  }
  return list;
}
