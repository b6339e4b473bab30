import type { FirewallRule } from '@svc/contract';
import { stringify } from 'yaml';
import { AGENT_ENV_PATH, agentEnvFile } from '../agent-env-file.js';
import { GATEWAY_PORT } from './hetzner-server.js';

/** Where the service serves the runtime and the one-file `svc` (see `http/downloads.ts`). */
export const SVC_DOWNLOAD_PATH = '/downloads/svc-linux-x64.tar.gz';

/** An Agent's firewall: its gateway, reachable from where the edge proxy runs, nothing else. */
export const agentFirewall = (sources: readonly string[]): FirewallRule[] => [
  {
    direction: 'in',
    protocol: 'tcp',
    port: String(GATEWAY_PORT),
    sourceIps: [...sources],
    description: "the service's edge proxy",
  },
];

/** The gateway as a system service of the `agent` user, as the Incus Agent image has it. */
const GATEWAY_UNIT = `[Unit]
Description=svc gateway: this Agent's editor and terminal for the browser
After=network-online.target
Wants=network-online.target

[Service]
User=agent
Group=agent
WorkingDirectory=/home/agent
Environment=HOME=/home/agent SHELL=/bin/bash LANG=C.UTF-8
Environment=SVC_GATEWAY_HOST=0.0.0.0 SVC_GATEWAY_PORT=${GATEWAY_PORT} SVC_GATEWAY_BUILTIN_EDITOR=true
ExecStart=/usr/local/bin/svc gateway
Restart=always
RestartSec=1

[Install]
WantedBy=multi-user.target
`;

const SVC_WRAPPER = `#!/bin/sh
exec /opt/svc/bin/node /opt/svc/svc.mjs "$@"
`;

/**
 * cloud-init for an Agent's first boot on a stock image: the `agent` user (the machine is
 * theirs: passwordless sudo), its credentials in `~/.crabglamp/agent.env`, Node and `svc`
 * fetched from the service itself, and `svc gateway` as a system service. A clone boots from its
 * source's snapshot and runs this again (a new server is a new cloud-init instance), so its own
 * credentials replace the copied ones.
 */
export function agentUserData(env: Readonly<Record<string, string>>): string {
  const download = `${(env.SVC_API_URL ?? '').replace(/\/$/, '')}${SVC_DOWNLOAD_PATH}`;
  const document = {
    users: [
      {
        name: 'agent',
        uid: 1000,
        shell: '/bin/bash',
        sudo: 'ALL=(ALL) NOPASSWD:ALL',
        lock_passwd: true,
      },
    ],
    write_files: [
      {
        path: `/home/agent/${AGENT_ENV_PATH}`,
        content: agentEnvFile(env),
        owner: 'agent:agent',
        permissions: '0600',
        // After the users module: the owner exists then.
        defer: true,
      },
      { path: '/etc/systemd/system/svc-gateway.service', content: GATEWAY_UNIT },
      { path: '/usr/local/bin/svc', content: SVC_WRAPPER, permissions: '0755' },
    ],
    runcmd: [
      ['install', '-d', '-o', 'agent', '-g', 'agent', '-m', '0700', '/home/agent/.crabglamp'],
      ['install', '-d', '/opt/svc'],
      ['sh', '-c', `curl -fsS --retry 10 --retry-all-errors "$0" | tar -xz -C /opt/svc`, download],
      ['ln', '-sf', '/opt/svc/bin/node', '/usr/local/bin/node'],
      ['systemctl', 'daemon-reload'],
      ['systemctl', 'enable', '--now', 'svc-gateway.service'],
    ],
  };
  return `#cloud-config\n${stringify(document)}`;
}
