import { DEFAULT_FIREWALL_RULES, type FirewallRule } from '@svc/contract';
import { describe, expect, it } from 'vitest';
import { fromAclRules, NO_IPV6_DESTINATION, toAclRules } from './incus-firewall.js';

const rule = (sourceIps: string[], extra: Partial<FirewallRule> = {}): FirewallRule => ({
  direction: 'in',
  protocol: 'tcp',
  port: '22',
  sourceIps,
  description: '',
  ...extra,
});

describe('incus firewall mapping', () => {
  it('limits every rule to the machine’s address, one rule per address family', () => {
    expect(toAclRules(DEFAULT_FIREWALL_RULES, '10.77.0.9')).toEqual([
      {
        action: 'allow',
        state: 'enabled',
        protocol: 'tcp',
        source: '0.0.0.0/0',
        destination: '10.77.0.9/32',
        destination_port: '22',
        description: 'SSH',
      },
      {
        action: 'allow',
        state: 'enabled',
        protocol: 'tcp',
        source: '::/0',
        destination: NO_IPV6_DESTINATION,
        destination_port: '22',
        description: 'SSH',
      },
    ]);
  });

  it('reads back exactly the rules it wrote', () => {
    const cases: FirewallRule[][] = [
      [...DEFAULT_FIREWALL_RULES],
      [],
      [
        rule(['203.0.113.0/24', '198.51.100.7/32'], { port: '8000-8100', description: 'web' }),
        rule(['2001:db8::/32'], { protocol: 'udp', port: '53' }),
        rule(['10.0.0.0/8', 'fe80::/10']),
      ],
    ];
    for (const rules of cases) {
      expect(fromAclRules(toAclRules(rules, '10.77.0.2'))).toEqual(rules);
    }
  });

  it('ignores rules it did not write (other actions, disabled, other protocols)', () => {
    expect(
      fromAclRules([
        { action: 'drop', state: 'enabled', protocol: 'tcp', source: '0.0.0.0/0' },
        { action: 'allow', state: 'disabled', protocol: 'tcp', source: '0.0.0.0/0' },
        { action: 'allow', state: 'enabled', protocol: 'icmp4', source: '0.0.0.0/0' },
      ]),
    ).toEqual([]);
  });
});
