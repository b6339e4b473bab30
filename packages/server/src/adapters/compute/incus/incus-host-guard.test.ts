import ipaddr from 'ipaddr.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ComputeUnavailable } from '../compute-driver.js';
import { toAclRules } from './incus-firewall.js';
import {
  GUARD_TABLE,
  guardRuleset,
  type HostGuardSpec,
  ingressRuleset,
  keepHostGuard,
  type NftCommand,
  type NftRunner,
  RENEW_EVERY_MS,
  requireHostGuard,
  SERVICE_ENTRY_S,
} from './incus-host-guard.js';

// The ruleset is read here, by a small evaluator of the expressions it uses: no packet is sent.
// tenant-escape.incus.test.ts tries the installed table from inside a machine.

const spec = (extra: Partial<HostGuardSpec> = {}): HostGuardSpec => ({
  bridge: 'incusbr0',
  bridgeCidr: '10.77.0.1/24',
  service: { addresses: ['10.77.0.1'], port: 8080 },
  allow: [],
  serviceEntryS: 1800,
  ...extra,
});

interface Packet {
  readonly iif?: string;
  readonly oif?: string;
  readonly saddr?: string;
  readonly family?: 'ipv4' | 'ipv6';
  readonly protocol: 'tcp' | 'udp' | 'icmp' | 'icmpv6';
  readonly daddr: string;
  readonly dport?: number;
  readonly state?: 'new' | 'established' | 'related';
  readonly icmpv6Type?: string;
}

type Json = Record<string, any>;

/** The value an expression's left side reads from the packet (`undefined`: does not apply). */
function read(left: Json, packet: Packet, services: Set<string>): unknown {
  if (left.meta?.key === 'iifname') return packet.iif ?? 'incusbr0';
  if (left.meta?.key === 'oifname') return packet.oif ?? 'incusbr0';
  if (left.meta?.key === 'nfproto') return packet.family ?? 'ipv4';
  if (left.meta?.key === 'l4proto') return packet.protocol;
  if (left.ct?.key === 'state') return packet.state ?? 'new';
  if (left.concat) {
    const parts = left.concat.map((part: Json) => read(part, packet, services));
    return parts.includes(undefined) ? undefined : parts.join(' . ');
  }
  const { protocol, field } = left.payload ?? {};
  if (protocol === 'ip' && field === 'daddr') {
    return (packet.family ?? 'ipv4') === 'ipv4' ? packet.daddr : undefined;
  }
  if (protocol === 'ip6' && field === 'daddr') {
    return packet.family === 'ipv6' ? packet.daddr : undefined;
  }
  if (protocol === 'ip' && field === 'saddr') {
    return (packet.family ?? 'ipv4') === 'ipv4' ? (packet.saddr ?? '10.77.0.50') : undefined;
  }
  if (protocol === 'icmpv6' && field === 'type') {
    return packet.protocol === 'icmpv6' ? packet.icmpv6Type : undefined;
  }
  if (field === 'dport' && (protocol === 'th' || protocol === packet.protocol)) {
    return packet.dport;
  }
  if (field === 'dport') return undefined;
  throw new Error(`the evaluator does not know ${JSON.stringify(left)}`);
}

function matches(expr: Json, packet: Packet, services: Set<string>): boolean {
  const { left, right, op } = expr.match;
  const value = read(left, packet, services);
  if (value === undefined) return false;
  if (typeof right === 'string' && right.startsWith('@')) return services.has(String(value));
  if (op === 'in') return (right as string[]).includes(String(value));
  const candidates: unknown[] = right?.set ?? [right];
  const found = candidates.some((candidate: any) => {
    if (candidate?.prefix) {
      const address = ipaddr.parse(String(value));
      const network = ipaddr.parse(candidate.prefix.addr);
      return address.kind() === network.kind() && address.match(network, candidate.prefix.len);
    }
    if (typeof candidate === 'string' && candidate.includes(':')) {
      return ipaddr.parse(String(value)).toString() === ipaddr.parse(candidate).toString();
    }
    if (candidate?.range) {
      const [first, last] = candidate.range;
      return Number(value) >= first && Number(value) <= last;
    }
    return candidate === value;
  });
  return op === '!=' ? !found : found;
}

/** The verdict of one of the bridge's chains for `packet` (`accept`: the policy). */
function verdict(commands: NftCommand[], chain: string, packet: Packet): 'accept' | 'drop' {
  const services = new Set<string>();
  for (const command of commands) {
    const elements = (command as Json).add?.element?.elem ?? [];
    for (const { elem } of elements) services.add(elem.val.concat.join(' . '));
  }
  for (const command of commands) {
    const rule = (command as Json).add?.rule;
    if (rule?.chain !== chain) continue;
    const conditions = rule.expr.filter((expr: Json) => expr.match);
    if (!conditions.every((expr: Json) => matches(expr, packet, services))) continue;
    if (rule.expr.some((expr: Json) => 'drop' in expr)) return 'drop';
    if (rule.expr.some((expr: Json) => 'accept' in expr)) return 'accept';
  }
  return 'accept';
}

describe("the host's baseline for a bridge", () => {
  const { nftables } = guardRuleset(spec());
  const toHost = (packet: Packet) => verdict(nftables, 'in.incusbr0', packet);
  const through = (packet: Packet) => verdict(nftables, 'fwd.incusbr0', packet);

  it('lets machines reach, of the host, only the service, the bridge’s DNS and DHCP', () => {
    expect(toHost({ protocol: 'tcp', daddr: '10.77.0.1', dport: 8080 })).toBe('accept');
    expect(toHost({ protocol: 'udp', daddr: '10.77.0.1', dport: 53 })).toBe('accept');
    expect(toHost({ protocol: 'tcp', daddr: '10.77.0.1', dport: 53 })).toBe('accept');
    expect(toHost({ protocol: 'udp', daddr: '255.255.255.255', dport: 67 })).toBe('accept');
    for (const [protocol, daddr, dport] of [
      ['tcp', '10.77.0.1', 22],
      ['tcp', '10.77.0.1', 5432],
      ['tcp', '10.77.0.1', 8443],
      ['tcp', '10.77.0.1', 8081],
      ['udp', '10.77.0.1', 8080],
      ['tcp', '192.0.2.2', 8080],
      ['tcp', '192.0.2.2', 22],
      ['udp', '192.0.2.2', 53],
      ['icmp', '10.77.0.1', undefined],
    ] as const) {
      expect(toHost({ protocol, daddr, dport }), `${protocol} ${daddr}:${dport}`).toBe('drop');
    }
  });

  it('lets replies in and leaves traffic from other interfaces alone', () => {
    expect(
      toHost({ protocol: 'tcp', daddr: '10.77.0.1', dport: 41000, state: 'established' }),
    ).toBe('accept');
    expect(toHost({ protocol: 'icmp', daddr: '10.77.0.1', state: 'related' })).toBe('accept');
    expect(toHost({ iif: 'eth0', protocol: 'tcp', daddr: '192.0.2.2', dport: 22 })).toBe('accept');
    expect(through({ iif: 'eth0', protocol: 'tcp', daddr: '10.0.0.1', dport: 22 })).toBe('accept');
  });

  it('over IPv6 lets in only neighbour discovery and DHCPv6 on the link, and no DNS', () => {
    const v6 = { family: 'ipv6', daddr: 'fe80::1' } as const;
    expect(toHost({ ...v6, protocol: 'icmpv6', icmpv6Type: 'nd-neighbor-solicit' })).toBe('accept');
    expect(toHost({ ...v6, protocol: 'icmpv6', icmpv6Type: 'nd-router-solicit' })).toBe('accept');
    expect(toHost({ ...v6, protocol: 'udp', dport: 547 })).toBe('accept');
    expect(toHost({ ...v6, daddr: 'ff02::1:2', protocol: 'udp', dport: 547 })).toBe('accept');
    expect(toHost({ ...v6, protocol: 'tcp', dport: 22 })).toBe('drop');
    expect(toHost({ ...v6, protocol: 'icmpv6', icmpv6Type: 'echo-request' })).toBe('drop');
    // A bridge without IPv6 has no resolver there: no DNS over IPv6 to any of the host's addresses.
    for (const daddr of ['fe80::1', '2001:db8::5', 'fd42::1']) {
      for (const protocol of ['udp', 'tcp'] as const) {
        expect(toHost({ family: 'ipv6', daddr, protocol, dport: 53 }), daddr).toBe('drop');
      }
    }
    // The host's public IPv6 address: no DHCPv6 either.
    expect(toHost({ family: 'ipv6', daddr: '2001:db8::5', protocol: 'udp', dport: 547 })).toBe(
      'drop',
    );
  });

  it("over IPv6 lets DNS reach only the bridge's own IPv6 address", () => {
    const withV6 = guardRuleset(spec({ bridgeIpv6Cidr: 'fd42:1:2:3::1/64' })).nftables;
    const check = (daddr: string, protocol: 'tcp' | 'udp', dport: number) =>
      verdict(withV6, 'in.incusbr0', { family: 'ipv6', daddr, protocol, dport });
    expect(check('fd42:1:2:3::1', 'udp', 53)).toBe('accept');
    expect(check('fd42:1:2:3::1', 'tcp', 53)).toBe('accept');
    expect(check('fd42:1:2:3::1', 'tcp', 22)).toBe('drop');
    expect(check('fd42:1:2:3::2', 'udp', 53)).toBe('drop');
    expect(check('2001:db8::5', 'udp', 53)).toBe('drop');
    expect(check('2001:db8::5', 'tcp', 53)).toBe('drop');
    expect(check('fe80::1', 'udp', 53)).toBe('drop');
    expect(check('fe80::1', 'udp', 547)).toBe('accept');
    expect(check('2001:db8::5', 'udp', 547)).toBe('drop');
  });

  it('drops what machines send through the host to the closed ranges, not to neighbours', () => {
    for (const daddr of [
      '10.0.0.1',
      '10.77.1.1',
      '169.254.169.254',
      '168.63.129.16',
      '172.16.0.1',
      '192.168.1.1',
      '192.0.0.9',
      '198.18.0.1',
      '100.64.0.1',
      '224.0.0.251',
    ]) {
      expect(through({ protocol: 'tcp', daddr, dport: 443 }), daddr).toBe('drop');
    }
    for (const daddr of ['10.77.0.2', '10.77.0.254', '1.1.1.1', '192.0.2.2', '203.0.113.9']) {
      expect(through({ protocol: 'tcp', daddr, dport: 443 }), daddr).toBe('accept');
    }
    // A reply to an outside SSH client on a private network goes back.
    expect(
      through({ protocol: 'tcp', daddr: '192.168.1.5', dport: 50000, state: 'established' }),
    ).toBe('accept');
  });

  it('opens what INCUS_EGRESS_ALLOW names, and a service on a private address', () => {
    const opened = guardRuleset(
      spec({
        allow: ['169.254.169.254/32'],
        service: { addresses: ['10.20.0.5'], port: 443 },
      }),
    ).nftables;
    const check = (daddr: string, dport: number) =>
      verdict(opened, 'fwd.incusbr0', { protocol: 'tcp', daddr, dport });
    expect(check('169.254.169.254', 80)).toBe('accept');
    expect(check('169.254.169.253', 80)).toBe('drop');
    expect(check('10.20.0.5', 443)).toBe('accept');
    expect(check('10.20.0.5', 22)).toBe('drop');
  });

  it('is one transaction that renews this service’s entry and rewrites both chains', () => {
    const kinds = nftables.map((command) => {
      const [verb, body] = Object.entries(command)[0] as [string, Json];
      return `${verb} ${Object.keys(body)[0]}`;
    });
    expect(kinds.slice(0, 5)).toEqual([
      'add table',
      'add set',
      'add element',
      'delete element',
      'add element',
    ]);
    expect(kinds.filter((kind) => kind === 'flush chain')).toHaveLength(2);
    const element = (nftables[2] as Json).add.element;
    expect(element).toMatchObject({ family: 'inet', table: GUARD_TABLE });
    expect(element.elem).toEqual([
      { elem: { val: { concat: ['10.77.0.1', 8080] }, timeout: 1800 } },
    ]);
    // Without a service URL: no entry, and the host's ports all closed.
    const closed = guardRuleset(spec({ service: undefined })).nftables;
    expect(closed.some((command) => (command as Json).add?.element)).toBe(false);
    expect(
      verdict(closed, 'in.incusbr0', { protocol: 'tcp', daddr: '10.77.0.1', dport: 8080 }),
    ).toBe('drop');
  });

  it('refuses a bridge name that is not an interface name', () => {
    expect(() => guardRuleset(spec({ bridge: 'br0"; flush ruleset' }))).toThrow(
      /not an interface name/,
    );
  });
});

describe("the host's copy of the machines' ingress rules", () => {
  const rules = [
    ...toAclRules(
      [
        {
          direction: 'in',
          protocol: 'tcp',
          port: '8000',
          sourceIps: ['0.0.0.0/0', '::/0'],
          description: '',
        },
        {
          direction: 'in',
          protocol: 'udp',
          port: '6000-6010',
          sourceIps: ['10.77.0.5/32'],
          description: '',
        },
      ],
      '10.77.0.2',
    ),
    ...toAclRules(
      [
        {
          direction: 'in',
          protocol: 'tcp',
          port: '22',
          sourceIps: ['203.0.113.0/24'],
          description: '',
        },
      ],
      '10.77.0.3',
    ),
    // An egress rule's shape as an ingress rule would open nothing of another machine.
    {
      action: 'allow',
      state: 'disabled',
      protocol: 'tcp',
      destination: '10.77.0.3/32',
      destination_port: '80',
    },
  ];
  const { nftables } = ingressRuleset('incusbr0', rules);
  const toMachine = (packet: Omit<Packet, 'protocol'> & Partial<Pick<Packet, 'protocol'>>) =>
    verdict(nftables, 'to.incusbr0', { protocol: 'tcp', ...packet });

  it("lets in only what some machine's rules let in, from a neighbour or from outside", () => {
    expect(toMachine({ daddr: '10.77.0.2', dport: 8000 })).toBe('accept');
    expect(toMachine({ daddr: '10.77.0.2', dport: 8001 })).toBe('drop');
    expect(toMachine({ daddr: '10.77.0.3', dport: 8000 })).toBe('drop');
    expect(toMachine({ daddr: '10.77.0.3', dport: 80 })).toBe('drop');
    expect(toMachine({ iif: 'eth0', saddr: '203.0.113.7', daddr: '10.77.0.3', dport: 22 })).toBe(
      'accept',
    );
    expect(toMachine({ iif: 'eth0', saddr: '198.51.100.7', daddr: '10.77.0.3', dport: 22 })).toBe(
      'drop',
    );
    const udp = { protocol: 'udp', daddr: '10.77.0.2' } as const;
    expect(toMachine({ ...udp, saddr: '10.77.0.5', dport: 6005 })).toBe('accept');
    expect(toMachine({ ...udp, saddr: '10.77.0.6', dport: 6005 })).toBe('drop');
    expect(toMachine({ ...udp, saddr: '10.77.0.5', dport: 6011 })).toBe('drop');
    expect(toMachine({ protocol: 'icmp', daddr: '10.77.0.2' })).toBe('drop');
  });

  it('lets replies through, leaves IPv6 to Incus, and other interfaces alone', () => {
    expect(toMachine({ daddr: '10.77.0.3', dport: 41000, state: 'established' })).toBe('accept');
    expect(toMachine({ family: 'ipv6', daddr: 'fe80::2', dport: 9 })).toBe('accept');
    expect(toMachine({ oif: 'eth0', daddr: '192.0.2.9', dport: 9 })).toBe('accept');
  });

  it('with no machine, lets nothing new in', () => {
    const none = ingressRuleset('incusbr0', []).nftables;
    expect(verdict(none, 'to.incusbr0', { protocol: 'tcp', daddr: '10.77.0.2', dport: 22 })).toBe(
      'drop',
    );
  });
});

describe('requireHostGuard', () => {
  it('fails with one line naming the fix when it cannot set the table', async () => {
    const refused: NftRunner = async () => {
      throw new Error('nft -j <ruleset>: Operation not permitted');
    };
    const error = await requireHostGuard(spec(), refused).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ComputeUnavailable);
    const message = (error as Error).message;
    expect(message).not.toContain('\n');
    expect(message).toContain(`inet ${GUARD_TABLE}`);
    expect(message).toContain('Operation not permitted');
    expect(message).toMatch(/as root or with CAP_NET_ADMIN/);
  });

  it('hands nft the whole ruleset as one JSON transaction', async () => {
    const calls: string[][] = [];
    await requireHostGuard(spec(), async (args) => {
      calls.push([...args]);
      return '';
    });
    expect(calls).toEqual([['-j', JSON.stringify(guardRuleset(spec()))]]);
  });
});

describe('keepHostGuard', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('renews on its own timer well inside the entry’s lifetime, retrying after a failure', async () => {
    expect(RENEW_EVERY_MS * 3).toBeLessThanOrEqual(SERVICE_ENTRY_S * 1000);
    vi.useFakeTimers();
    const warnings: unknown[][] = [];
    let renewals = 0;
    let failNext = false;
    const stop = keepHostGuard(
      async () => {
        renewals += 1;
        if (failNext) {
          failNext = false;
          throw new Error('nft -j <ruleset>: Operation not permitted');
        }
      },
      { warn: (...args: unknown[]) => warnings.push(args) } as never,
      1000,
    );
    await vi.advanceTimersByTimeAsync(999);
    expect(renewals).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(renewals).toBe(1);
    failNext = true;
    await vi.advanceTimersByTimeAsync(1000);
    expect(renewals).toBe(2);
    expect(warnings).toHaveLength(1);
    expect(JSON.stringify(warnings[0])).toContain('Operation not permitted');
    await vi.advanceTimersByTimeAsync(1000);
    expect(renewals).toBe(3);
    stop();
    await vi.advanceTimersByTimeAsync(5000);
    expect(renewals).toBe(3);
  });

  it('skips a tick while a renewal still runs', async () => {
    vi.useFakeTimers();
    let started = 0;
    let finish = () => {};
    const stop = keepHostGuard(
      () => {
        started += 1;
        return new Promise<void>((resolve) => {
          finish = resolve;
        });
      },
      { warn: () => {} } as never,
      1000,
    );
    await vi.advanceTimersByTimeAsync(3000);
    expect(started).toBe(1);
    finish();
    await vi.advanceTimersByTimeAsync(1000);
    expect(started).toBe(2);
    stop();
  });
});
