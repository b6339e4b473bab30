import type { ServerInfo } from '../compute-driver.js';
import type { Action } from './hcloud-actions.js';
import type { HcloudRule } from './hetzner-firewall-rules.js';

/** A server as Hetzner Cloud describes it (the fields the driver reads). */
export interface HcloudServer {
  readonly id: number;
  readonly name: string;
  readonly status: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly public_net: {
    readonly ipv4: { readonly ip: string } | null;
    readonly ipv6: { readonly ip: string } | null;
    readonly firewalls?: readonly { readonly id: number; readonly status: string }[];
  };
}

export interface ServerAnswer {
  readonly server: HcloudServer;
  readonly action: Action;
  readonly next_actions: readonly Action[];
}

export interface HcloudFirewall {
  readonly id: number;
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly rules: readonly HcloudRule[];
  readonly applied_to: readonly {
    readonly type: string;
    readonly server?: { readonly id: number };
  }[];
}

export interface HcloudImage {
  readonly id: number;
  readonly name: string | null;
  readonly type: string;
  readonly status: string;
  readonly labels: Readonly<Record<string, string>>;
}

/** Every resource the driver makes carries the machine's id under this label. */
export const MACHINE_LABEL = 'svc/machine';
/** The service's own labels (`managedBy`, `kind`, …) are written under this prefix. */
const LABEL_PREFIX = 'svc/';
/** Where `svc gateway` listens on an Agent's server. */
export const GATEWAY_PORT = 8443;

/** Server and firewall names: unique per project, so a second create of the same is refused. */
export const resourceName = (id: string) => `svc-${id}`;

export const selectorFor = (labels: Readonly<Record<string, string>>) =>
  [MACHINE_LABEL, ...Object.entries(labels).map(([k, v]) => `${LABEL_PREFIX}${k}==${v}`)].join(',');

export const hcloudLabels = (id: string, labels: Readonly<Record<string, string>>) => ({
  [MACHINE_LABEL]: id,
  ...Object.fromEntries(Object.entries(labels).map(([k, v]) => [`${LABEL_PREFIX}${k}`, v])),
});

/** The service's labels back from Hetzner's. */
export const labelsOf = (labels: Readonly<Record<string, string>>): Record<string, string> =>
  Object.fromEntries(
    Object.entries(labels)
      .filter(([key]) => key.startsWith(LABEL_PREFIX) && key !== MACHINE_LABEL)
      .map(([key, value]) => [key.slice(LABEL_PREFIX.length), value]),
  );

export const isAgentServer = (server: HcloudServer) =>
  server.labels[`${LABEL_PREFIX}kind`] === 'agent';

/** Hetzner gives each server an IPv6 /64; its first address is the server's own. */
const firstAddress = (network: string) => {
  const [prefix = ''] = network.split('/');
  return prefix.endsWith('::') ? `${prefix}1` : prefix;
};

export function info(server: HcloudServer, gatewayPort = GATEWAY_PORT): ServerInfo {
  const ipv4 = server.public_net.ipv4?.ip;
  const ipv6 = server.public_net.ipv6?.ip && firstAddress(server.public_net.ipv6.ip);
  const host = ipv4 ?? ipv6;
  return {
    id: server.labels[MACHINE_LABEL] as string,
    status: server.status === 'running' ? 'running' : 'off',
    labels: labelsOf(server.labels),
    ...(ipv4 && { ipv4 }),
    ...(ipv6 && { ipv6 }),
    ...(host &&
      (isAgentServer(server)
        ? { gateway: { host, port: gatewayPort, tls: true } }
        : { ssh: { host, port: 22 } })),
  };
}
