import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { FirewallRule } from '@svc/contract';
import { ENROLL_KEY_VARIABLE, GATEWAY_TLS_DIR, GATEWAY_TLS_FILES } from '@svc/contract/gateway-tls';
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
Environment=SVC_GATEWAY_HOST=0.0.0.0 SVC_GATEWAY_PORT=${GATEWAY_PORT}
ExecStart=/usr/local/bin/svc gateway
Restart=always
RestartSec=1

[Install]
WantedBy=multi-user.target
`;

/**
 * What installs code-server, the Agent's editor, from the npm registry (the Incus Agent image's
 * build runs the same script). Read once, from the repository the service runs from.
 */
const CODE_SERVER_SCRIPT = readFileSync(
  path.join(import.meta.dirname, '../../../../../../scripts/agent-code-server.sh'),
  'utf8',
);
const CODE_SERVER_SCRIPT_PATH = '/var/lib/svc/agent-code-server.sh';
const CODE_SERVER_LOG = '/var/log/svc-code-server.log';

const SVC_WRAPPER = `#!/bin/sh
exec /opt/svc/bin/node /opt/svc/svc.mjs "$@"
`;

/**
 * What makes the gateway's own key and a self-signed certificate for it, at first boot, in the
 * gateway's TLS directory (the service signs a certificate for that key once it enrolls).
 */
export const ENROLLMENT_KEY_COMMAND = [
  'openssl',
  'req',
  '-x509',
  '-newkey',
  'ec',
  '-pkeyopt',
  'ec_paramgen_curve:P-256',
  '-nodes',
  '-keyout',
  GATEWAY_TLS_FILES.key,
  '-out',
  GATEWAY_TLS_FILES.cert,
  '-days',
  '2',
  '-subj',
  '/CN=svc gateway enrolling',
];

/** What the user data holds: the public half of the Agent's bootstrap, never its token. */
export interface AgentBootstrap {
  /** `agent.env` without `SVC_HMAC_TOKEN`, which the first push brings. */
  readonly env: Readonly<Record<string, string>>;
  /** The service's CA certificate (PEM): the gateway's only authority for clients. */
  readonly caCert: string;
  /** The machine's one-time enrollment key (`@svc/contract/gateway-tls`). */
  readonly enrollKey: string;
}

/**
 * cloud-init for an Agent's first boot on a stock image: the `agent` user (the machine is
 * theirs: passwordless sudo), `~/.crabglamp/agent.env` without any token, the service's CA
 * certificate and a key of the machine's own for the gateway's TLS, Node and `svc` fetched from
 * the service itself, `svc gateway` as a system service, and then code-server from the npm
 * registry (`scripts/agent-code-server.sh`), which the gateway serves once it is restarted. The
 * token comes by the service's signed push once the gateway answers. A clone boots from its
 * source's snapshot (code-server already there: the script leaves it) and runs this
 * again (a new server is a new cloud-init instance): its own key, env and enrollment replace
 * the copied ones.
 */
export function agentUserData(bootstrap: AgentBootstrap): string {
  const { SVC_HMAC_TOKEN: _token, ...env } = bootstrap.env;
  const download = `${(env.SVC_API_URL ?? '').replace(/\/$/, '')}${SVC_DOWNLOAD_PATH}`;
  const tlsDir = `/home/agent/${GATEWAY_TLS_DIR}`;
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
        content: agentEnvFile({ ...env, [ENROLL_KEY_VARIABLE]: bootstrap.enrollKey }),
        owner: 'agent:agent',
        permissions: '0600',
        // After the users module: the owner exists then.
        defer: true,
      },
      {
        path: `${tlsDir}/${GATEWAY_TLS_FILES.ca}`,
        content: bootstrap.caCert,
        owner: 'agent:agent',
        defer: true,
      },
      { path: '/etc/systemd/system/svc-gateway.service', content: GATEWAY_UNIT },
      { path: '/usr/local/bin/svc', content: SVC_WRAPPER, permissions: '0755' },
      { path: CODE_SERVER_SCRIPT_PATH, content: CODE_SERVER_SCRIPT, permissions: '0755' },
    ],
    runcmd: [
      ['install', '-d', '-o', 'agent', '-g', 'agent', '-m', '0700', '/home/agent/.crabglamp'],
      ['install', '-d', '-o', 'agent', '-g', 'agent', '-m', '0700', tlsDir],
      // As the agent, in its directory: the key is the gateway's, made on this machine only.
      [
        'su',
        'agent',
        '-s',
        '/bin/sh',
        '-c',
        `cd ${tlsDir} && umask 077 && "$@"`,
        'sh',
        ...ENROLLMENT_KEY_COMMAND,
      ],
      ['install', '-d', '/opt/svc'],
      ['sh', '-c', `curl -fsS --retry 10 --retry-all-errors "$0" | tar -xz -C /opt/svc`, download],
      ['ln', '-sf', '/opt/svc/bin/node', '/usr/local/bin/node'],
      ['systemctl', 'daemon-reload'],
      ['systemctl', 'enable', '--now', 'svc-gateway.service'],
      // After the gateway answers (it serves its built-in editor meanwhile): building
      // code-server takes minutes. The gateway looks for it when it starts, hence the restart.
      [
        'sh',
        '-c',
        `bash ${CODE_SERVER_SCRIPT_PATH} >>${CODE_SERVER_LOG} 2>&1 && systemctl restart svc-gateway.service`,
      ],
    ],
  };
  return `#cloud-config\n${stringify(document)}`;
}
