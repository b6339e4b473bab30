import { z } from 'zod';
import { Id, Timestamp } from './common.js';
import { defineEndpoint } from './endpoint.js';

/**
 * Shared ports: a server a user runs inside an Agent (a dev server on port 3000) reached at
 * `<scheme>://<port>--<subdomain>.<agent domain>/`, through the service's edge and the Agent's
 * gateway. Agents' subdomains never hold `--` (`subdomainStem`), so such a host names its port
 * and its Agent unambiguously.
 */

/** The port the gateway itself listens on in a cloud machine: never shared. */
/**
 * A path on a port's own host: one leading `/` (never `//` or `/\`, another host) and no space
 * or control character anywhere (browsers drop tabs and newlines, so `/\t/evil.example` would
 * become `//evil.example`).
 */
export const isPortPath = (path: string): boolean =>
  /^\/(?![/\\])/.test(path) &&
  [...path].every((ch) => {
    const code = ch.charCodeAt(0);
    return code > 0x20 && code !== 0x7f;
  });

export const AGENT_GATEWAY_PORT = 8443;
/** Ports a user may share: unprivileged ones. */
export const PORT_MIN = 1024;
export const PORT_MAX = 65_535;
/** At most this many ports of one Agent are shared at a time. */
export const MAX_SHARED_PORTS = 20;

/**
 * Set by the edge on a request for a port's host, after it authorized it (and deleted any copy
 * the client sent): the gateway then hands the request to that port inside the machine.
 */
export const PORT_HEADER = 'x-svc-port';
/** The edge's cookie on a port's host (`__Host-` prefixed over HTTPS). */
export const PORT_COOKIE = 'svc_port';
/** The edge's own path on a port's host: it turns a ticket from the dashboard into the cookie. */
export const PORT_OPEN_PATH = '/_svc/port-open';
/** The gateway's route (for the service only) listing the ports listening inside the machine. */
export const LISTENING_PORTS_PATH = '/_svc/ports';

/**
 * Who may open a shared port: `private` the owners and admins of the Agent's account, `account`
 * every member, `public` anyone without signing in.
 */
export const PortShare = z.enum(['private', 'account', 'public']).meta({
  description:
    "Who may open the port's URL: `private` the owners and admins of the Agent's account, `account` every member of it, `public` anyone (no sign-in, and no cookie of the service's reaches the page).",
});
export type PortShare = z.infer<typeof PortShare>;

/** A port number that may be shared: 1024–65535, not the gateway's own. */
export const SharablePort = z.coerce
  .number()
  .int('Use a whole port number')
  .min(PORT_MIN, `Use a port from ${PORT_MIN} to ${PORT_MAX}: lower ports are not shared`)
  .max(PORT_MAX, `Use a port from ${PORT_MIN} to ${PORT_MAX}`)
  .refine(
    (port) => port !== AGENT_GATEWAY_PORT,
    `Port ${AGENT_GATEWAY_PORT} is the Agent's gateway: it cannot be shared`,
  );

export const AgentPort = z.object({
  port: z.number().int(),
  share: PortShare.nullable().meta({
    description: 'How the port is shared; `null`: not shared (it is only listening).',
  }),
  listening: z.boolean().meta({
    description:
      'Whether the gateway saw a server listening on the port (on loopback or every address) just now; `false` too when the Agent is not running or its gateway did not answer.',
  }),
  url: z.string().meta({ description: '`<scheme>://<port>--<subdomain>.<agent domain>/`' }),
});
export type AgentPort = z.infer<typeof AgentPort>;

const PortParams = z.object({ id: Id, port: SharablePort });

export const listAgentPorts = defineEndpoint({
  id: 'listAgentPorts',
  method: 'GET',
  path: '/api/agents/{id}/ports',
  auth: 'session',
  tag: 'agents',
  summary:
    "The Agent's shared ports and the ports its gateway sees listening inside it (1024–65535), by port number.",
  params: z.object({ id: Id }),
  response: { status: 200, body: z.array(AgentPort) },
  errors: [],
});

export const shareAgentPort = defineEndpoint({
  id: 'shareAgentPort',
  method: 'PUT',
  path: '/api/agents/{id}/ports/{port}',
  auth: 'session',
  tag: 'agents',
  summary: `Share a port of the Agent (1024–65535, not its gateway's), or change who may open it; at most ${MAX_SHARED_PORTS} per Agent.`,
  params: PortParams,
  body: z.strictObject({ share: PortShare }),
  response: { status: 200, body: AgentPort },
  errors: [],
});

export const unshareAgentPort = defineEndpoint({
  id: 'unshareAgentPort',
  method: 'DELETE',
  path: '/api/agents/{id}/ports/{port}',
  auth: 'session',
  tag: 'agents',
  summary: 'Stop sharing a port: its URL answers 404 within seconds.',
  params: PortParams,
  response: { status: 204 },
  errors: [],
});

export const openAgentPort = defineEndpoint({
  id: 'openAgentPort',
  method: 'POST',
  path: '/api/agents/{id}/ports/{port}/open',
  auth: 'session',
  tag: 'agents',
  summary:
    "A one-time link to a shared port for the caller (a `private` port: owners and admins only): the port's URL with a ticket that expires in a minute; there the browser gets the port's cookie and goes on to `next`.",
  params: PortParams,
  body: z.strictObject({
    next: z
      .string()
      .max(2048)
      .refine(
        isPortPath,
        'A path on the port, starting with one /, without spaces or control characters',
      )
      .optional(),
  }),
  response: { status: 201, body: z.object({ url: z.string(), expiresAt: Timestamp }) },
  errors: [],
});

export const agentPortEndpoints = [
  listAgentPorts,
  shareAgentPort,
  unshareAgentPort,
  openAgentPort,
] as const;
