import { DEFAULT_FIREWALL_RULES, FirewallRules } from '@svc/contract';
import { describe, expect, it } from 'vitest';
import { allows } from '../adapters/compute/firewall-match.js';
import { canonicalRules } from './firewall.js';

const rule = (over: Record<string, unknown> = {}) => ({
  protocol: 'tcp',
  port: '22',
  sourceIps: ['0.0.0.0/0'],
  description: 'x',
  ...over,
});
const many = (n: number) => Array.from({ length: n }, (_, i) => rule({ port: String(i + 1) }));

// [name, rules, expected canonical (sourceIps and port of each rule)]
const VALID: [string, unknown[], { port: string; sourceIps: string[] }[]][] = [
  ['empty set (deny all)', [], []],
  [
    'default SSH rule',
    [rule({ sourceIps: ['0.0.0.0/0', '::/0'] })],
    [{ port: '22', sourceIps: ['0.0.0.0/0', '::/0'] }],
  ],
  [
    'bare IPv4 becomes /32',
    [rule({ sourceIps: ['203.0.113.7'] })],
    [{ port: '22', sourceIps: ['203.0.113.7/32'] }],
  ],
  [
    'bare IPv6 becomes /128',
    [rule({ sourceIps: ['2001:db8::1'] })],
    [{ port: '22', sourceIps: ['2001:db8::1/128'] }],
  ],
  [
    'IPv6 upper case is lowered',
    [rule({ sourceIps: ['2001:DB8::/32'] })],
    [{ port: '22', sourceIps: ['2001:db8::/32'] }],
  ],
  [
    'IPv6 long form is compressed',
    [rule({ sourceIps: ['2001:0db8:0000:0000:0000:0000:0000:0001/128'] })],
    [{ port: '22', sourceIps: ['2001:db8::1/128'] }],
  ],
  [
    'IPv4 host bits are cleared',
    [rule({ sourceIps: ['10.1.2.3/8'] })],
    [{ port: '22', sourceIps: ['10.0.0.0/8'] }],
  ],
  [
    'IPv6 host bits are cleared',
    [rule({ sourceIps: ['2001:db8::1/32'] })],
    [{ port: '22', sourceIps: ['2001:db8::/32'] }],
  ],
  [
    'duplicate sources collapse',
    [rule({ sourceIps: ['1.2.3.4', '1.2.3.4/32'] })],
    [{ port: '22', sourceIps: ['1.2.3.4/32'] }],
  ],
  [
    'IPv4-mapped IPv6 is the IPv4 address',
    [rule({ sourceIps: ['::ffff:1.2.3.4', '::ffff:10.0.0.0/104'] })],
    [{ port: '22', sourceIps: ['1.2.3.4/32', '10.0.0.0/8'] }],
  ],
  ['port as a number', [rule({ port: 443 })], [{ port: '443', sourceIps: ['0.0.0.0/0'] }]],
  ['port range', [rule({ port: '8000-8100' })], [{ port: '8000-8100', sourceIps: ['0.0.0.0/0'] }]],
  ['single-port range', [rule({ port: '80-80' })], [{ port: '80-80', sourceIps: ['0.0.0.0/0'] }]],
  ['lowest port', [rule({ port: '1' })], [{ port: '1', sourceIps: ['0.0.0.0/0'] }]],
  [
    'leading zeros in ports',
    [rule({ port: '080-0443' })],
    [{ port: '80-443', sourceIps: ['0.0.0.0/0'] }],
  ],
  ['highest port', [rule({ port: '65535' })], [{ port: '65535', sourceIps: ['0.0.0.0/0'] }]],
  ['full range', [rule({ port: '1-65535' })], [{ port: '1-65535', sourceIps: ['0.0.0.0/0'] }]],
  [
    'udp',
    [rule({ protocol: 'udp', port: '51820' })],
    [{ port: '51820', sourceIps: ['0.0.0.0/0'] }],
  ],
  [
    'direction given as in',
    [rule({ direction: 'in' })],
    [{ port: '22', sourceIps: ['0.0.0.0/0'] }],
  ],
  [
    'no description',
    [{ protocol: 'tcp', port: '22', sourceIps: ['::/0'] }],
    [{ port: '22', sourceIps: ['::/0'] }],
  ],
  [
    '/0 and /32 mixed',
    [rule({ sourceIps: ['0.0.0.0/0', '192.0.2.1'] })],
    [{ port: '22', sourceIps: ['0.0.0.0/0', '192.0.2.1/32'] }],
  ],
  ['IPv6 loopback', [rule({ sourceIps: ['::1'] })], [{ port: '22', sourceIps: ['::1/128'] }]],
  ['exactly 50 rules', many(50), many(50).map((r) => ({ port: r.port, sourceIps: ['0.0.0.0/0'] }))],
  [
    'two rules',
    [rule(), rule({ port: '80' })],
    [
      { port: '22', sourceIps: ['0.0.0.0/0'] },
      { port: '80', sourceIps: ['0.0.0.0/0'] },
    ],
  ],
  [
    'private ranges',
    [rule({ sourceIps: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16'] })],
    [{ port: '22', sourceIps: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16'] }],
  ],
  [
    'link-local v6 net',
    [rule({ sourceIps: ['fe80::/10'] })],
    [{ port: '22', sourceIps: ['fe80::/10'] }],
  ],
];

// [name, rules, path of the first issue]
const INVALID: [string, unknown, (string | number)[]][] = [
  ['51 rules', many(51), ['rules']],
  ['rules not an array', 'all', ['rules']],
  ['protocol icmp', [rule({ protocol: 'icmp' })], ['rules', 0, 'protocol']],
  ['protocol esp', [rule({ protocol: 'esp' })], ['rules', 0, 'protocol']],
  ['protocol upper case', [rule({ protocol: 'TCP' })], ['rules', 0, 'protocol']],
  ['missing protocol', [{ port: '22', sourceIps: ['::/0'] }], ['rules', 0, 'protocol']],
  ['direction out', [rule({ direction: 'out' })], ['rules', 0, 'direction']],
  ['port 0', [rule({ port: '0' })], ['rules', 0, 'port']],
  ['port 65536', [rule({ port: '65536' })], ['rules', 0, 'port']],
  ['port negative', [rule({ port: -1 })], ['rules', 0, 'port']],
  ['port decimal', [rule({ port: 22.5 })], ['rules', 0, 'port']],
  ['port word', [rule({ port: 'ssh' })], ['rules', 0, 'port']],
  ['reversed range', [rule({ port: '100-10' })], ['rules', 0, 'port']],
  ['range to 65536', [rule({ port: '1-65536' })], ['rules', 0, 'port']],
  ['open range', [rule({ port: '100-' })], ['rules', 0, 'port']],
  ['range with spaces', [rule({ port: '1 - 2' })], ['rules', 0, 'port']],
  ['missing port', [{ protocol: 'tcp', sourceIps: ['::/0'] }], ['rules', 0, 'port']],
  ['no sources', [rule({ sourceIps: [] })], ['rules', 0, 'sourceIps']],
  ['sources not a list', [rule({ sourceIps: '0.0.0.0/0' })], ['rules', 0, 'sourceIps']],
  ['prefix over 32', [rule({ sourceIps: ['10.0.0.0/33'] })], ['rules', 0, 'sourceIps', 0]],
  ['prefix over 128', [rule({ sourceIps: ['2001:db8::/129'] })], ['rules', 0, 'sourceIps', 0]],
  ['octet over 255', [rule({ sourceIps: ['256.0.0.1'] })], ['rules', 0, 'sourceIps', 0]],
  ['leading zero octet', [rule({ sourceIps: ['010.0.0.1'] })], ['rules', 0, 'sourceIps', 0]],
  ['three octets', [rule({ sourceIps: ['10.0.0'] })], ['rules', 0, 'sourceIps', 0]],
  ['host name', [rule({ sourceIps: ['example.com'] })], ['rules', 0, 'sourceIps', 0]],
  ['IPv6 zone id', [rule({ sourceIps: ['fe80::1%eth0'] })], ['rules', 0, 'sourceIps', 0]],
  ['empty prefix', [rule({ sourceIps: ['1.2.3.4/'] })], ['rules', 0, 'sourceIps', 0]],
  ['second source bad', [rule({ sourceIps: ['1.2.3.4', 'nope'] })], ['rules', 0, 'sourceIps', 1]],
  ['second rule bad', [rule(), rule({ port: '0' })], ['rules', 1, 'port']],
  ['description too long', [rule({ description: 'x'.repeat(256) })], ['rules', 0, 'description']],
];

describe('firewall rule validation and canonical form', () => {
  it('has at least 50 rule sets in its table', () => {
    expect(VALID.length + INVALID.length).toBeGreaterThanOrEqual(50);
  });

  it.each(VALID)('accepts %s', (_, rules, expected) => {
    const parsed = FirewallRules.safeParse({ rules });
    expect(parsed.success).toBe(true);
    if (!parsed.success) return;
    const canonical = canonicalRules(parsed.data);
    expect(canonical.map(({ port, sourceIps }) => ({ port, sourceIps }))).toEqual(expected);
    for (const r of canonical) expect(r.direction).toBe('in');
  });

  it.each(INVALID)('refuses %s, naming where', (_, rules, path) => {
    const parsed = FirewallRules.safeParse({ rules });
    expect(parsed.success).toBe(false);
    if (parsed.success) return;
    expect(parsed.error.issues[0]?.path).toEqual(path);
    expect(parsed.error.issues[0]?.message).toBeTruthy();
  });
});

describe('firewall matching', () => {
  const rules = canonicalRules(
    FirewallRules.parse({
      rules: [
        rule({ sourceIps: ['203.0.113.0/24', '2001:db8::/32'] }),
        rule({ protocol: 'udp', port: '1000-2000', sourceIps: ['::/0'] }),
      ],
    }),
  );
  it.each([
    ['tcp', 22, '203.0.113.9', true],
    ['tcp', 22, '198.51.100.1', false],
    ['tcp', 22, '::ffff:203.0.113.9', true],
    ['tcp', 22, '2001:db8::42', true],
    ['tcp', 23, '203.0.113.9', false],
    ['udp', 22, '203.0.113.9', false],
    ['udp', 1500, '2001:db8::1', true],
    ['udp', 2001, '2001:db8::1', false],
  ] as const)('%s port %d from %s: %s', (protocol, port, address, expected) => {
    expect(allows(rules, protocol, port, address)).toBe(expected);
  });

  it('the default rule lets anyone reach SSH', () => {
    expect(allows(DEFAULT_FIREWALL_RULES, 'tcp', 22, '127.0.0.1')).toBe(true);
    expect(allows(DEFAULT_FIREWALL_RULES, 'tcp', 22, '::1')).toBe(true);
    expect(allows(DEFAULT_FIREWALL_RULES, 'tcp', 80, '127.0.0.1')).toBe(false);
  });
});
