import { PORT_MAX, PORT_MIN } from '@svc/contract';

/** One DNS label, as Agents' subdomains are made (`subdomainStem` plus a random suffix). */
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const PORT = /:\d+$/;
/**
 * A shared port's label: `<port>--<subdomain>`. Subdomains never hold `--` (`subdomainStem`
 * folds every run of other characters into one `-`), so the first `--` ends the port.
 */
const PORT_LABEL = /^([1-9]\d{3,4})--(.+)$/;

/** A host of the edge: an Agent's subdomain, and the port when the host is a shared port's. */
export interface AgentHost {
  readonly subdomain: string;
  readonly port?: number;
}

/**
 * Reads the Agent subdomain out of a request's `Host`: exactly `<label>.<domain>`, compared in
 * lower case, the port included when the Agents' domain has one (`localhost:8080`) and ignored
 * when it has none (a proxy in front may or may not name it). The dashboard's own host never
 * matches, even when it is a subdomain of the Agents' domain (`app.example.com` beside
 * `AGENT_DOMAIN=example.com`). A label `<port>--<subdomain>` (port 1024–65535) is that port of
 * the Agent (shared ports). `undefined`: the request is not the edge's.
 */
export function agentHostMatcher(
  agentDomain: string,
  publicUrl: string,
): (host: string | undefined) => AgentHost | undefined {
  const domain = agentDomain.toLowerCase();
  const withPort = PORT.test(domain);
  const normal = (host: string) => (withPort ? host : host.replace(PORT, ''));
  const publicHost = normal(new URL(publicUrl).host.toLowerCase());
  const suffix = `.${domain}`;
  return (header) => {
    if (!header) return undefined;
    const host = normal(header.toLowerCase());
    if (host === publicHost || !host.endsWith(suffix)) return undefined;
    const label = host.slice(0, -suffix.length);
    if (!LABEL.test(label)) return undefined;
    const shared = PORT_LABEL.exec(label);
    const port = Number(shared?.[1]);
    if (shared && port >= PORT_MIN && port <= PORT_MAX && LABEL.test(shared[2] ?? '')) {
      return { subdomain: shared[2] as string, port };
    }
    return { subdomain: label };
  };
}
