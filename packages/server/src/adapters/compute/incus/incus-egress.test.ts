import ipaddr from 'ipaddr.js';
import { describe, expect, it } from 'vitest';
import {
  BLOCKED_EGRESS,
  blockedDestinations,
  type EgressPolicy,
  egressRules,
  toCidrs,
} from './incus-egress.js';
import type { AclRule } from './incus-firewall.js';

// The rules are read, never tried: no packet goes to any of these ranges.

const policy = (extra: Partial<EgressPolicy> = {}): EgressPolicy => ({
  bridgeCidr: '10.77.0.1/24',
  hostAddresses: ['10.77.0.1', '192.0.2.2', '203.0.113.5', '127.0.0.1'],
  service: { addresses: ['10.77.0.1'], port: 8080 },
  allow: [],
  ...extra,
});

/** Whether a rule of `rules` lets the machine send `protocol` to `address`:`port`. */
function allows(rules: readonly AclRule[], address: string, protocol: string, port: number) {
  return rules.some((rule) => {
    if (rule.action !== 'allow' || rule.state !== 'enabled') return false;
    if (rule.protocol && rule.protocol !== protocol) return false;
    if (rule.destination_port && rule.destination_port !== String(port)) return false;
    return (rule.destination ?? '')
      .split(',')
      .some((cidr) => ipaddr.parse(address).match(ipaddr.parseCIDR(cidr) as [ipaddr.IPv4, number]));
  });
}

describe('incus egress rules', () => {
  const rules = egressRules('10.77.0.9', policy());

  it('are the machine’s own: every rule matches its address as the source', () => {
    for (const rule of rules) expect(rule.source).toBe('10.77.0.9/32');
  });

  it('reach, on the host, only the service’s port and the bridge’s DNS', () => {
    expect(allows(rules, '10.77.0.1', 'tcp', 8080)).toBe(true);
    expect(allows(rules, '10.77.0.1', 'udp', 53)).toBe(true);
    expect(allows(rules, '10.77.0.1', 'tcp', 53)).toBe(true);
    for (const [protocol, port] of [
      ['tcp', 22],
      ['tcp', 5432],
      ['tcp', 8443],
      ['tcp', 8081],
      ['udp', 8080],
      ['icmp4', 0],
    ] as const) {
      for (const host of policy().hostAddresses) {
        expect(allows(rules, host, protocol, port), `${host} ${protocol}/${port}`).toBe(false);
      }
    }
  });

  it('never reach link-local or private ranges outside the bridge, nor neighbours', () => {
    for (const address of [
      '169.254.169.254',
      '169.254.0.1',
      '10.0.0.1',
      '10.76.255.255',
      '10.77.1.0',
      '10.255.255.255',
      '172.16.0.1',
      '172.31.255.254',
      '192.168.1.1',
      '168.63.129.16',
      '192.0.0.8',
      '192.0.0.170',
      '198.18.0.1',
      '198.19.255.255',
      '100.64.0.1',
      '100.127.255.254',
      '127.0.0.53',
      '0.0.0.0',
      '224.0.0.251',
      '255.255.255.255',
      // neighbours on the bridge: only their own ingress rules let anything through
      '10.77.0.2',
      '10.77.0.200',
      '10.77.0.255',
    ]) {
      for (const protocol of ['tcp', 'udp', 'icmp4']) {
        expect(allows(rules, address, protocol, 443), `${address} ${protocol}`).toBe(false);
      }
    }
  });

  it('reach the public internet with any protocol', () => {
    for (const address of [
      '1.1.1.1',
      '9.9.9.9',
      '151.101.0.223',
      '100.63.255.255',
      '100.128.0.0',
      '172.15.255.255',
      '172.32.0.0',
      '192.167.255.255',
      '192.169.0.0',
      '223.255.255.255',
      '11.0.0.0',
      '168.63.129.15',
      '168.63.129.17',
      '191.255.255.255',
      '192.0.1.0',
      '198.17.255.255',
      '198.20.0.0',
    ]) {
      expect(allows(rules, address, 'tcp', 443), address).toBe(true);
      expect(allows(rules, address, 'udp', 123), address).toBe(true);
    }
  });

  it('let INCUS_EGRESS_ALLOW open private ranges, but never the bridge or the host', () => {
    const opened = egressRules(
      '10.77.0.9',
      policy({ allow: ['10.0.0.0/8', '169.254.169.254/32', '203.0.113.0/24'] }),
    );
    expect(allows(opened, '10.20.30.40', 'tcp', 5432)).toBe(true);
    expect(allows(opened, '169.254.169.254', 'tcp', 80)).toBe(true);
    expect(allows(opened, '169.254.169.253', 'tcp', 80)).toBe(false);
    expect(allows(opened, '192.168.1.1', 'tcp', 80)).toBe(false);
    for (const closed of ['10.77.0.1', '10.77.0.2', '10.77.0.9', '203.0.113.5']) {
      expect(allows(opened, closed, 'tcp', 5432), closed).toBe(false);
    }
    expect(allows(opened, '203.0.113.6', 'tcp', 22)).toBe(true);
  });

  it('without a service URL, leave only DNS of the host', () => {
    const { service: _none, ...rest } = policy();
    const closed = egressRules('10.77.0.9', rest);
    expect(allows(closed, '10.77.0.1', 'tcp', 8080)).toBe(false);
    expect(allows(closed, '10.77.0.1', 'udp', 53)).toBe(true);
  });

  it('keep the rule set small: four rules, some hundred ranges', () => {
    expect(rules).toHaveLength(4);
    const outside = (rules.at(-1)?.destination ?? '').split(',');
    expect(outside.length).toBeLessThan(150);
    // None overlaps another, and none of the blocked ranges is inside any.
    const parsed = outside.map((cidr) => ipaddr.IPv4.parseCIDR(cidr));
    for (const blocked of BLOCKED_EGRESS) {
      const [network] = ipaddr.IPv4.parseCIDR(blocked);
      expect(
        parsed.some((range) => network.match(range)),
        blocked,
      ).toBe(false);
    }
  });

  it('cover exactly the ranges given with the fewest CIDRs', () => {
    expect(toCidrs([[0, 2 ** 32 - 1]])).toEqual(['0.0.0.0/0']);
    expect(toCidrs([[1, 6]])).toEqual(['0.0.0.1/32', '0.0.0.2/31', '0.0.0.4/31', '0.0.0.6/32']);
    expect(toCidrs([[167_772_160, 184_549_375]])).toEqual(['10.0.0.0/8']);
  });

  it('give the host baseline every closed range but the bridge and what the operator opened', () => {
    const blocked = blockedDestinations('10.77.0.1/24', ['169.254.169.254/32']);
    const inside = (address: string) =>
      blocked.some((cidr) => ipaddr.parse(address).match(ipaddr.IPv4.parseCIDR(cidr)));
    for (const closed of [
      '10.0.0.1',
      '10.77.1.1',
      '10.76.255.255',
      '168.63.129.16',
      '169.254.169.253',
      '169.254.169.255',
      '192.0.0.9',
      '198.18.5.5',
      '172.16.0.1',
      '192.168.0.1',
      '100.64.0.1',
    ]) {
      expect(inside(closed), closed).toBe(true);
    }
    for (const open of ['10.77.0.1', '10.77.0.9', '10.77.0.255', '169.254.169.254', '1.1.1.1']) {
      expect(inside(open), open).toBe(false);
    }
  });
});
