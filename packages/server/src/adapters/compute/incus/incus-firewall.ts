import type { FirewallRule } from '@svc/contract';

/** One rule of an Incus network ACL, as its API spells it. */
export interface AclRule {
  readonly action: 'allow' | 'reject' | 'drop';
  readonly state: 'enabled' | 'disabled' | 'logged';
  readonly protocol?: string;
  readonly source?: string;
  readonly destination?: string;
  readonly destination_port?: string;
  readonly description?: string;
}

/**
 * Where IPv6 sources are sent while the machine has no IPv6 address: the unspecified address,
 * which no packet is addressed to. Incus refuses a rule mixing families, and the bridge has no
 * IPv6 here, so this keeps an IPv6 source in the rule set (it round-trips) without opening
 * anything.
 */
export const NO_IPV6_DESTINATION = '::/128';

const isV6 = (cidr: string) => cidr.includes(':');

/**
 * A machine's rules as ACL ingress rules. The ACL sits on the bridge, so it sees traffic to
 * every machine there: each rule matches the machine's own address only. A rule with both
 * families becomes two, IPv4 first.
 */
export function toAclRules(rules: readonly FirewallRule[], ipv4: string): AclRule[] {
  return rules.flatMap((rule) => {
    const halves: [string[], string][] = [
      [rule.sourceIps.filter((cidr) => !isV6(cidr)), `${ipv4}/32`],
      [rule.sourceIps.filter(isV6), NO_IPV6_DESTINATION],
    ];
    return halves
      .filter(([sources]) => sources.length > 0)
      .map(([sources, destination]) => ({
        action: 'allow' as const,
        state: 'enabled' as const,
        protocol: rule.protocol,
        source: sources.join(','),
        destination,
        destination_port: rule.port,
        ...(rule.description && { description: rule.description }),
      }));
  });
}

/**
 * The contract's rules from what Incus holds: `toAclRules` reversed, an IPv6 half joined to
 * the IPv4 half before it when they agree on protocol, port and description (two such rules
 * written apart allow the same traffic as one, so joining them loses nothing).
 */
export function fromAclRules(aclRules: readonly AclRule[]): FirewallRule[] {
  const rules: FirewallRule[] = [];
  let joinable: FirewallRule | undefined;
  for (const acl of aclRules) {
    if (acl.action !== 'allow' || acl.state === 'disabled') continue;
    if (acl.protocol !== 'tcp' && acl.protocol !== 'udp') continue;
    const sourceIps = (acl.source ?? '').split(',').filter(Boolean);
    const rule: FirewallRule = {
      direction: 'in',
      protocol: acl.protocol,
      port: acl.destination_port ?? '',
      sourceIps,
      description: acl.description ?? '',
    };
    const isV6Half = sourceIps.length > 0 && sourceIps.every(isV6);
    if (
      isV6Half &&
      joinable &&
      joinable.protocol === rule.protocol &&
      joinable.port === rule.port &&
      joinable.description === rule.description
    ) {
      joinable.sourceIps.push(...sourceIps);
      joinable = undefined;
      continue;
    }
    rules.push(rule);
    joinable = isV6Half ? undefined : rule;
  }
  return rules;
}
