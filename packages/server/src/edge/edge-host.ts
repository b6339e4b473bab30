/** One DNS label, as Agents' subdomains are made (`subdomainStem` plus a random suffix). */
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const PORT = /:\d+$/;

/**
 * Reads the Agent subdomain out of a request's `Host`: exactly `<label>.<domain>`, compared in
 * lower case, the port included when the Agents' domain has one (`localhost:8080`) and ignored
 * when it has none (a proxy in front may or may not name it). The dashboard's own host never
 * matches, even when it is a subdomain of the Agents' domain (`app.example.com` beside
 * `AGENT_DOMAIN=example.com`). `undefined`: the request is not the edge's.
 */
export function agentHostMatcher(
  agentDomain: string,
  publicUrl: string,
): (host: string | undefined) => string | undefined {
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
    return LABEL.test(label) ? label : undefined;
  };
}
