import ipaddr from 'ipaddr.js';
import { invalidInput } from './errors.js';
import type { FirewallRuleJson } from './state.js';

const MAX_RULES = 50;
const MAX_IPS_PER_RULE = 100;
const PROTOCOLS = ['tcp', 'udp', 'icmp', 'esp', 'gre'] as const;

/**
 * A CIDR as Hetzner stores it: host bits must be empty, IPv6 comes back in RFC 5952 form
 * (`2001:0DB8:0::/32` → `2001:db8::/32`), so a re-read rule can differ from what was sent.
 */
function canonicalCidr(text: unknown, field: string): string {
  if (typeof text !== 'string') throw invalidInput(field, 'must be a string');
  let parsed: [ipaddr.IPv4 | ipaddr.IPv6, number];
  try {
    parsed = ipaddr.parseCIDR(text);
  } catch {
    throw invalidInput(field, `${text} is not a CIDR`);
  }
  const [address, length] = parsed;
  const network =
    address.kind() === 'ipv6'
      ? ipaddr.IPv6.networkAddressFromCIDR(text)
      : ipaddr.IPv4.networkAddressFromCIDR(text);
  if (network.toString() !== address.toString())
    throw invalidInput(field, `${text} has host bits set`);
  return `${address.toString()}/${length}`;
}

function ipList(value: unknown, field: string): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw invalidInput(field, 'must be a list');
  if (value.length > MAX_IPS_PER_RULE)
    throw invalidInput(field, `at most ${MAX_IPS_PER_RULE} addresses per rule`);
  return value.map((entry, i) => canonicalCidr(entry, `${field}[${i}]`));
}

function portOf(value: unknown, protocol: string, field: string): string | null {
  const hasPorts = protocol === 'tcp' || protocol === 'udp';
  if (!hasPorts) {
    if (value !== undefined && value !== null)
      throw invalidInput(field, `not allowed for protocol ${protocol}`);
    return null;
  }
  if (typeof value !== 'string') throw invalidInput(field, `is required for protocol ${protocol}`);
  const match = /^(\d{1,5})(?:-(\d{1,5}))?$/.exec(value);
  const low = Number(match?.[1]);
  const high = match?.[2] === undefined ? low : Number(match[2]);
  if (!match || low < 1 || high > 65535 || low > high)
    throw invalidInput(field, 'must be a port or a port range (1-65535)');
  return value;
}

function parseRule(value: unknown, field: string): FirewallRuleJson {
  if (typeof value !== 'object' || value === null) throw invalidInput(field, 'must be an object');
  const rule = value as Record<string, unknown>;
  const direction = rule.direction;
  if (direction !== 'in' && direction !== 'out')
    throw invalidInput(`${field}.direction`, 'must be in or out');
  const protocol = PROTOCOLS.find((p) => p === rule.protocol);
  if (!protocol) throw invalidInput(`${field}.protocol`, 'must be tcp, udp, icmp, esp or gre');
  const description = rule.description ?? null;
  if (description !== null && (typeof description !== 'string' || description.length > 255))
    throw invalidInput(`${field}.description`, 'must be a string of at most 255 characters');
  const sourceIps = ipList(rule.source_ips, `${field}.source_ips`);
  const destinationIps = ipList(rule.destination_ips, `${field}.destination_ips`);
  // Inbound rules name their sources, outbound rules their destinations, never the other.
  const [needed, forbidden] =
    direction === 'in' ? [sourceIps, destinationIps] : [destinationIps, sourceIps];
  const neededName = direction === 'in' ? 'source_ips' : 'destination_ips';
  const forbiddenName = direction === 'in' ? 'destination_ips' : 'source_ips';
  if (needed.length === 0) throw invalidInput(`${field}.${neededName}`, 'is required');
  if (forbidden.length > 0)
    throw invalidInput(`${field}.${forbiddenName}`, `not allowed for direction ${direction}`);
  return {
    description,
    direction,
    protocol,
    port: portOf(rule.port, protocol, `${field}.port`),
    source_ips: sourceIps,
    destination_ips: destinationIps,
  };
}

/** Validates a rule list as Hetzner does (≤ 50 rules) and returns it as Hetzner answers it. */
export function parseRules(value: unknown): FirewallRuleJson[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw invalidInput('rules', 'must be a list');
  if (value.length > MAX_RULES) throw invalidInput('rules', `at most ${MAX_RULES} rules`);
  return value.map((rule, i) => parseRule(rule, `rules[${i}]`));
}
