/**
 * HAProxy in front of the service's replicas: Agents' hosts (`<subdomain>.<AGENT_DOMAIN>`) to the
 * edge processes, everything else to the API processes, each server taken out once its
 * `/readyz` fails twice in a row (a process that is stopping says so first and keeps serving for
 * `SHUTDOWN_DRAIN_SECONDS`) and put back as soon as it passes. `npm run haproxy-config` prints it; the cluster test runs it.
 */
export interface HaproxyOptions {
  /** Where HAProxy listens (`0.0.0.0:80`, `127.0.0.1:8080`). */
  readonly listen: string;
  /** The API processes (`--role=api` or `all`), `host:port` each. */
  readonly api: readonly string[];
  /** The edge processes (`--role=edge`); without any, the API processes serve Agents' hosts. */
  readonly edge: readonly string[];
  /** `AGENT_DOMAIN`, without a port (`agents.example.com`, `localhost`). */
  readonly agentDomain: string;
  /**
   * How often each server's `/readyz` is asked (ms); two failures in a row take it out, so a
   * stopping process's `SHUTDOWN_DRAIN_SECONDS` must be more than twice this.
   */
  readonly checkIntervalMs?: number;
}

const servers = (name: string, addresses: readonly string[]) =>
  addresses.map((address, i) => `  server ${name}${i + 1} ${address}`).join('\n');

const backend = (name: string, addresses: readonly string[], intervalMs: number) => `backend ${name}
  option httpchk GET /readyz
  http-check expect status 200
  default-server check inter ${intervalMs} fall 2 rise 1
${servers(name, addresses)}`;

export function haproxyConfig(options: HaproxyOptions): string {
  const intervalMs = options.checkIntervalMs ?? 1_000;
  const domain = options.agentDomain.toLowerCase().replace(/:\d+$/, '');
  if (!/^[a-z0-9.-]+$/.test(domain)) throw new Error(`not a domain: ${options.agentDomain}`);
  const edge = options.edge.length > 0 ? options.edge : options.api;
  return `# Written by npm run haproxy-config; see the README's deployment section.
global
  maxconn 4096

defaults
  mode http
  timeout connect 5s
  timeout client 120s
  timeout server 120s
  # Terminals and editors stay open for hours.
  timeout tunnel 1h
  timeout http-keep-alive 10s
  # A busy process may take a moment to answer /readyz: slow is not down.
  timeout check 3s
  # A request that never reached a server (refused, or a keep-alive connection the server had
  # just closed) goes to another one; one a server has begun to answer is never sent twice.
  retries 3
  option redispatch 1
  retry-on conn-failure empty-response
  # No server ready (every one's /readyz fails while the database is away): the service's own
  # answer to that, the error envelope with Retry-After, not HAProxy's page.
  http-error status 503 content-type application/json string '{"error":"unavailable"}' hdr retry-after 5

frontend svc
  bind ${options.listen}
  option forwardfor
  acl agent_host req.hdr(host),lower,regsub(:[0-9]+$,) -m end .${domain}
  use_backend edge if agent_host
  default_backend api

${backend('api', options.api, intervalMs)}

${backend('edge', edge, intervalMs)}
`;
}
