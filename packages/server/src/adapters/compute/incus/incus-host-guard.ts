import { execFile } from 'node:child_process';
import ipaddr from 'ipaddr.js';
import type { Logger } from '../../../logger.js';
import { ComputeUnavailable } from '../compute-driver.js';
import { blockedDestinations } from './incus-egress.js';

/**
 * The host's own baseline for traffic from the bridge, an nftables table Incus never touches.
 *
 * Incus enforces machines' ACLs in its table `inet incus` and rewrites the bridge's chains there
 * whenever the bridge's ACL list changes (a machine made or deleted anywhere on the bridge): it
 * deletes them, then adds them back in several `nft` runs. Between those runs the input and
 * forward hooks have no ACL at all: a machine reaches every port of the host and of its
 * neighbours (seen: the tenant-escape suite's closed host port answered while other tests made
 * machines). A drop in any base chain is final whatever another table's chains say, so this
 * table's chains, on the same hooks and ahead of Incus's, hold the line while Incus rewrites its
 * own: from the bridge, the host answers only replies, DHCP, the bridge's DNS and the services'
 * ports (`in.<bridge>`); nothing the machines send through the host goes to `BLOCKED_EGRESS` but
 * the bridge and what `INCUS_EGRESS_ALLOW` opens (`fwd.<bridge>`); and a new connection reaches
 * a machine only as some ACL on the bridge lets it in (`to.<bridge>`, `ingressRuleset`).
 *
 * One table per host; per bridge, those three chains and a set. Every service on a bridge adds
 * its own address and port to the bridge's set with a lifetime (`SERVICE_ENTRY_S`) that its
 * start and each reconciler pass renew, so services sharing a bridge keep each other's entries
 * and a gone service's port closes by itself; `in` and `fwd` are the last writer's (services
 * sharing a bridge share `INCUS_EGRESS_ALLOW`), `to` is written from every ACL on the bridge.
 * Each write is one `nft` transaction: the kernel applies all of it or none, so a chain is never
 * seen half-written.
 */
export const GUARD_TABLE = 'svc_guard';

/** How long a service's port stays open in the baseline unless its service renews it. */
export const SERVICE_ENTRY_S = 30 * 60;

/** How often the process that wrote the table renews it (`keepHostGuard`): well inside the above. */
export const RENEW_EVERY_MS = 5 * 60_000;

/** Ahead of Incus's chains (priority `filter`, 0): a drop here is final before they run. */
const PRIORITY = -10;

export interface HostGuardSpec {
  /** The Incus bridge (`incusbr0`). */
  readonly bridge: string;
  /** The bridge's own IPv4 address with its prefix (`10.77.0.1/24`). */
  readonly bridgeCidr: string;
  /** The bridge's own IPv6 address with its prefix (`fd42::1/64`), when it has one. */
  readonly bridgeIpv6Cidr?: string;
  /** Where this service's machines reach it (`SVC_API_URL`): these addresses, this TCP port. */
  readonly service?: { readonly addresses: readonly string[]; readonly port: number };
  /** IPv4 CIDRs the operator lets machines reach despite `BLOCKED_EGRESS`. */
  readonly allow: readonly string[];
  /** Seconds the service's entry lasts (none: until the set is flushed, e.g. a reboot). */
  readonly serviceEntryS?: number;
}

/** One nftables JSON command (`nft -j` schema 1): `{ add: { rule: … } }` and the like. */
export type NftCommand = Readonly<Record<string, unknown>>;
type Expr = Readonly<Record<string, unknown>>;

const match = (left: unknown, right: unknown, op = '=='): Expr => ({ match: { op, left, right } });
const meta = (key: string) => ({ meta: { key } });
const field = (protocol: string, name: string) => ({ payload: { protocol, field: name } });
const prefixes = (cidrs: readonly string[]) => ({
  set: cidrs.map((cidr) => {
    const [address, length] = ipaddr.IPv4.parseCIDR(cidr);
    return { prefix: { addr: address.toString(), len: length } };
  }),
});
const ACCEPT: Expr = { accept: null };
const DROP: Expr = { drop: null };

/** The names in the table of one bridge's chains and set. */
export const guardNames = (bridge: string) => ({
  input: `in.${bridge}`,
  forward: `fwd.${bridge}`,
  toMachines: `to.${bridge}`,
  services: `services.${bridge}`,
});

/** Interface names as the kernel takes them: the bridge's name is matched, never parsed. */
const BRIDGE_NAME = /^[A-Za-z0-9_.-]{1,15}$/;

function requireBridgeName(bridge: string) {
  if (!BRIDGE_NAME.test(bridge)) {
    throw new Error(`Incus network name ${JSON.stringify(bridge)} is not an interface name`);
  }
}

const TABLE = { family: 'inet', table: GUARD_TABLE } as const;
const ADD_TABLE: NftCommand = { add: { table: { family: 'inet', name: GUARD_TABLE } } };
const REPLIES = match({ ct: { key: 'state' } }, ['established', 'related'], 'in');

/** A base chain made where missing and emptied, in the transaction that fills it again. */
const freshChain = (name: string, hook: string): NftCommand[] => [
  { add: { chain: { ...TABLE, name, type: 'filter', hook, prio: PRIORITY, policy: 'accept' } } },
  { flush: { chain: { ...TABLE, name } } },
];

/**
 * The transaction that makes the bridge's part of the table what `spec` says: the table, the
 * set and the chains made where missing, this service's entry added (or renewed: added, deleted
 * and added again, which works on kernels that do not renew a present element's timeout), both
 * chains flushed and written again.
 */
export function guardRuleset(spec: HostGuardSpec): { nftables: NftCommand[] } {
  requireBridgeName(spec.bridge);
  const names = guardNames(spec.bridge);
  const table = TABLE;
  const bridgeHost = ipaddr.IPv4.parseCIDR(spec.bridgeCidr)[0].toString();
  const bridgeHost6 =
    spec.bridgeIpv6Cidr && ipaddr.IPv6.parseCIDR(spec.bridgeIpv6Cidr)[0].toString();
  const fromBridge = match(meta('iifname'), spec.bridge);
  const rule = (chain: string, ...expr: Expr[]): NftCommand => ({
    add: { rule: { ...table, chain, expr: [fromBridge, ...expr] } },
  });
  const replies = REPLIES;
  /** The bridge's resolver, over UDP and TCP, at the bridge's own address only. */
  const dnsTo = (protocol: 'ip' | 'ip6', address: string) =>
    rule(
      names.input,
      match(field(protocol, 'daddr'), address),
      match(meta('l4proto'), { set: ['tcp', 'udp'] }),
      match(field('th', 'dport'), 53),
      ACCEPT,
    );
  const toService = match(
    { concat: [field('ip', 'daddr'), field('tcp', 'dport')] },
    `@${names.services}`,
  );
  const entries = (spec.service?.addresses ?? []).map((address) => ({
    elem: {
      val: { concat: [ipaddr.IPv4.parse(address).toString(), spec.service?.port] },
      ...(spec.serviceEntryS !== undefined && { timeout: spec.serviceEntryS }),
    },
  }));
  const element = { ...table, name: names.services, elem: entries };
  const blocked = blockedDestinations(spec.bridgeCidr, spec.allow);
  return {
    nftables: [
      ADD_TABLE,
      {
        add: {
          set: {
            ...table,
            name: names.services,
            type: ['ipv4_addr', 'inet_service'],
            flags: ['timeout'],
          },
        },
      },
      ...(entries.length > 0
        ? [{ add: { element } }, { delete: { element } }, { add: { element } }]
        : []),
      ...freshChain(names.input, 'input'),
      // To the host: replies to what the host opened (the edge, SSH, pushes), DHCP, the
      // bridge's DNS, the services' ports; over IPv6 what address autoconfiguration and a
      // bridge with IPv6 need (neighbour discovery, DHCPv6, the bridge's DNS). Nothing else of
      // the host.
      rule(names.input, replies, ACCEPT),
      rule(names.input, match(field('udp', 'dport'), 67), ACCEPT),
      dnsTo('ip', bridgeHost),
      rule(names.input, toService, ACCEPT),
      rule(
        names.input,
        match(field('icmpv6', 'type'), {
          set: ['nd-router-solicit', 'nd-neighbor-solicit', 'nd-neighbor-advert'],
        }),
        ACCEPT,
      ),
      // DHCPv6 only to the host's link-local addresses and the servers' multicast group, DNS
      // only to the bridge's own IPv6 address: never to the host's other (public) addresses.
      rule(
        names.input,
        match(field('ip6', 'daddr'), {
          set: [{ prefix: { addr: 'fe80::', len: 10 } }, 'ff02::1:2'],
        }),
        match(field('udp', 'dport'), 547),
        ACCEPT,
      ),
      ...(bridgeHost6 ? [dnsTo('ip6', bridgeHost6)] : []),
      rule(names.input, DROP),
      ...freshChain(names.forward, 'forward'),
      // Through the host: replies (an outside SSH client's, whatever its address), the
      // services' ports, and anything but the closed ranges. Between machines on the bridge
      // (bridged traffic passes this hook too) the bridge's subnet is not in `blocked`.
      rule(names.forward, replies, ACCEPT),
      rule(names.forward, toService, ACCEPT),
      ...(blocked.length > 0
        ? [rule(names.forward, match(field('ip', 'daddr'), prefixes(blocked)), DROP)]
        : []),
    ],
  };
}

/** One ingress rule of a machine's ACL, as Incus holds it (`AclRule`'s fields read here). */
export interface IngressRule {
  readonly action: string;
  readonly state: string;
  readonly protocol?: string;
  readonly source?: string;
  readonly destination?: string;
  readonly destination_port?: string;
}

/** The IPv4 CIDRs of an ACL field (`10.0.0.0/8,::/0`): `undefined` for any, `[]` for none. */
function ipv4Field(value: string | undefined): string[] | undefined {
  const all = (value ?? '')
    .split(',')
    .map((each) => each.trim())
    .filter(Boolean);
  if (all.length === 0) return undefined;
  return all
    .filter((each) => !each.includes(':'))
    .map((each) => (each.includes('/') ? each : `${each}/32`));
}

/** `22`, `80-81`, `80,443` as nftables set elements. */
const portElements = (ports: string) =>
  ports
    .split(',')
    .map((each) => each.trim())
    .filter(Boolean)
    .map((each) => {
      const [first, last] = each.split('-').map(Number);
      return last === undefined ? first : { range: [first, last] };
    });

/** One machine's ingress rule as the expressions of an nftables rule; `undefined`: none (IPv6). */
function ingressExprs(rule: IngressRule): Expr[] | undefined {
  if (rule.action !== 'allow' || rule.state === 'disabled') return undefined;
  const sources = ipv4Field(rule.source);
  const destinations = ipv4Field(rule.destination);
  if (sources?.length === 0 || destinations?.length === 0) return undefined;
  const protocol = rule.protocol === 'icmp4' ? 'icmp' : rule.protocol;
  if (protocol && !['tcp', 'udp', 'icmp'].includes(protocol)) return undefined;
  return [
    match(meta('nfproto'), 'ipv4'),
    ...(sources ? [match(field('ip', 'saddr'), prefixes(sources))] : []),
    ...(destinations ? [match(field('ip', 'daddr'), prefixes(destinations))] : []),
    ...(protocol ? [match(meta('l4proto'), protocol)] : []),
    ...(protocol !== 'icmp' && rule.destination_port
      ? [match(field('th', 'dport'), { set: portElements(rule.destination_port) })]
      : []),
  ];
}

/**
 * The bridge's `to` chain: what reaches a machine through the host (from a neighbour, bridged;
 * from outside, forwarded) is what some machine's ACL lets in, as the bridge's ACLs with their
 * default `drop` say, and stays so while Incus rewrites its chains (its `aclfwd` chain is gone
 * for a while then, and every machine's every port open to its neighbours). Written from every
 * ACL on the bridge, any service's, after each change; IPv6 is left to Incus (the NICs'
 * `ipv6_filtering` drops it while the bridge has none).
 */
export function ingressRuleset(
  bridge: string,
  rules: readonly IngressRule[],
): { nftables: NftCommand[] } {
  requireBridgeName(bridge);
  const chain = guardNames(bridge).toMachines;
  const toBridge = match(meta('oifname'), bridge);
  const rule = (...expr: Expr[]): NftCommand => ({
    add: { rule: { ...TABLE, chain, expr: [toBridge, ...expr] } },
  });
  const allowed = rules.flatMap((each) => {
    const exprs = ingressExprs(each);
    return exprs ? [rule(...exprs, ACCEPT)] : [];
  });
  return {
    nftables: [
      ADD_TABLE,
      ...freshChain(chain, 'forward'),
      rule(REPLIES, ACCEPT),
      rule(match(meta('nfproto'), 'ipv4', '!='), ACCEPT),
      ...allowed,
      rule(DROP),
    ],
  };
}

/** Writes the bridge's `to` chain (`ingressRuleset`) in one transaction. */
export async function installIngressGuard(
  bridge: string,
  rules: readonly IngressRule[],
  nft: NftRunner = runNft,
) {
  await nft(['-j', JSON.stringify(ingressRuleset(bridge, rules))]);
}

/** Runs `nft` with `args`; its standard output. */
export type NftRunner = (args: readonly string[]) => Promise<string>;

/**
 * The ruleset goes as an argument (`nft -j '{…}'`), not on standard input: `nft -f -` opens
 * `/dev/stdin`, which fails on the socket Node gives a child for it.
 */
export const runNft: NftRunner = (args) =>
  new Promise((resolve, reject) => {
    execFile('nft', [...args], { timeout: 30_000 }, (error, stdout, stderr) => {
      if (!error) return resolve(stdout);
      // A ruleset is named, not repeated, in the message.
      const command = args.map((arg) => (arg.startsWith('{') ? '<ruleset>' : arg)).join(' ');
      const why = stderr.trim().split('\n')[0] || error.message;
      reject(new Error(`nft ${command}: ${why}`, { cause: error }));
    });
  });

/** Writes the bridge's part of the table (`guardRuleset`) in one transaction. */
export async function installHostGuard(spec: HostGuardSpec, nft: NftRunner = runNft) {
  await nft(['-j', JSON.stringify(guardRuleset(spec))]);
}

/**
 * Installs the baseline at start-up and at each reconciler pass, on the host Incus runs on. A
 * process that cannot (no `nft`, or not allowed) refuses to start with one line naming the fix,
 * as it does without `br_netfilter`; a table someone else installed is not enough, as its `to`
 * chain must follow every firewall change this process makes.
 */
export async function requireHostGuard(spec: HostGuardSpec, nft: NftRunner = runNft) {
  try {
    await installHostGuard(spec, nft);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new ComputeUnavailable(
      `the host's baseline firewall for machines on ${spec.bridge} (nftables table inet ${GUARD_TABLE}) could not be set (${why}): run the service on the Incus host as root or with CAP_NET_ADMIN (systemd: AmbientCapabilities=CAP_NET_ADMIN), with \`nft\` installed (apt-get install nftables)`,
      { cause: error },
    );
  }
}

/**
 * Runs `renew` every `everyMs` in the process that wrote the table, whatever role it has and
 * whether or not it runs jobs: an API or edge process whose job worker is down or elsewhere
 * still keeps its service's entry from lapsing. A failed renewal is logged (its message only)
 * and tried again at the next tick; one still running skips the tick. The timer keeps no
 * process alive. Answers the function that stops it.
 */
export function keepHostGuard(
  renew: () => Promise<void>,
  log: Pick<Logger, 'warn'>,
  everyMs = RENEW_EVERY_MS,
): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    renew()
      .catch((error: unknown) => {
        const reason = error instanceof Error ? error.message : String(error);
        log.warn({ table: GUARD_TABLE, reason }, "renewing the host's baseline failed; retrying");
      })
      .finally(() => {
        running = false;
      });
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
