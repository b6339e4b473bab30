import type { FirewallRule } from '@svc/contract';

/** A firewall rule as Hetzner Cloud writes it. */
export interface HcloudRule {
  readonly direction: 'in' | 'out';
  readonly protocol: 'tcp' | 'udp' | 'icmp' | 'esp' | 'gre';
  readonly port?: string | null;
  readonly source_ips?: readonly string[];
  readonly destination_ips?: readonly string[];
  readonly description?: string | null;
}

/** Our inbound rules in Hetzner's words (a firewall with no `out` rule lets everything out). */
export const toHcloudRules = (rules: readonly FirewallRule[]): HcloudRule[] =>
  rules.map((rule) => ({
    direction: 'in',
    protocol: rule.protocol,
    port: rule.port,
    source_ips: rule.sourceIps,
    ...(rule.description && { description: rule.description }),
  }));

/**
 * Hetzner's rules as the service shows them: inbound TCP and UDP only (the only kinds the service
 * writes); addresses as Hetzner re-read them (IPv6 in canonical form).
 */
export const fromHcloudRules = (rules: readonly HcloudRule[]): FirewallRule[] =>
  rules.flatMap((rule) =>
    rule.direction === 'in' && (rule.protocol === 'tcp' || rule.protocol === 'udp')
      ? [
          {
            direction: 'in' as const,
            protocol: rule.protocol,
            port: rule.port ?? '1-65535',
            sourceIps: [...(rule.source_ips ?? [])],
            description: rule.description ?? '',
          },
        ]
      : [],
  );
