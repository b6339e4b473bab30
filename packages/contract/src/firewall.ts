import { z } from 'zod';

export const MAX_FIREWALL_RULES = 50;

/**
 * One address or CIDR, IPv4 or IPv6; the service returns it in canonical CIDR form. A rule lists
 * several, so the message names the one that is wrong.
 */
export const SourceIp = z.union([z.cidrv4(), z.cidrv6(), z.ipv4(), z.ipv6()], {
  error: (issue) =>
    `${typeof issue.input === 'string' ? `"${issue.input.slice(0, 100)}" is not an` : 'Use an'} ` +
    'IPv4 or IPv6 address or CIDR, e.g. 203.0.113.0/24 or 2001:db8::/32.',
});

/** A port (`22`) or an inclusive range (`8000-8100`), 1 to 65535. */
export const PortSpec = z
  .union([z.string(), z.number().int()])
  .transform(String)
  .pipe(
    z
      .string()
      .regex(/^\d{1,5}(-\d{1,5})?$/, 'Use a port number or a range written low-high')
      .refine((port) => {
        const [low, high = low] = port.split('-').map(Number) as [number, number?];
        return low >= 1 && (high as number) <= 65535 && low <= (high as number);
      }, 'Ports run from 1 to 65535, and a range from low to high'),
  );

export const FirewallRuleInput = z.object({
  /** Inbound only (version 1 of the firewall); may be omitted. */
  direction: z.literal('in').optional(),
  protocol: z.enum(['tcp', 'udp']),
  port: PortSpec,
  sourceIps: z.array(SourceIp).min(1, 'Give at least one source address'),
  description: z.string().max(255).optional(),
});
export type FirewallRuleInput = z.input<typeof FirewallRuleInput>;

export const FirewallRule = z.object({
  direction: z.literal('in'),
  protocol: z.enum(['tcp', 'udp']),
  port: z.string(),
  sourceIps: z.array(z.string()),
  description: z.string(),
});
export type FirewallRule = z.infer<typeof FirewallRule>;

export const FirewallRules = z.object({
  rules: z.array(FirewallRuleInput).max(MAX_FIREWALL_RULES, `At most ${MAX_FIREWALL_RULES} rules`),
});

/** Every Plain VM starts with this rule: SSH from anywhere. */
export const DEFAULT_FIREWALL_RULES: readonly FirewallRule[] = [
  {
    direction: 'in',
    protocol: 'tcp',
    port: '22',
    sourceIps: ['0.0.0.0/0', '::/0'],
    description: 'SSH',
  },
];
