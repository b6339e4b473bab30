import { gatewayKeyFromToken } from '@svc/contract/gateway-ticket';
import { loadAgentCredentials } from '../agent-env.js';

/**
 * The dashboard's page for this Agent, asked to open it at once (`?open=1`): where the gateway
 * sends a browser that has no access yet, so that a member lands back here with a fresh ticket.
 * Built from the Agent's credentials (`SVC_PUBLIC_URL`, `SVC_AGENT_ID`, else the id in the
 * token), read afresh like the gateway's key: the file first, then the environment. `undefined`
 * without them. Never from `SVC_API_URL` when the public URL is given: that is where the machine
 * reaches the service (on Incus the host's bridge address), another origin to the browser, where
 * its user is signed out. A machine made before `SVC_PUBLIC_URL` existed has only `SVC_API_URL`.
 */
export async function agentDashboardUrl(
  env: Readonly<Record<string, string | undefined>>,
): Promise<string | undefined> {
  const credentials =
    (await loadAgentCredentials({ HOME: env.HOME })) ?? (await loadAgentCredentials(env));
  if (!credentials) return undefined;
  const agentId = credentials.agentId ?? gatewayKeyFromToken(credentials.hmacToken)?.agentId;
  if (!agentId) return undefined;
  // The service's base URL, as it builds its own links (`PUBLIC_URL` + path).
  const publicUrl = credentials.publicUrl ?? credentials.apiUrl;
  if (!/^https?:\/\/[^/]/i.test(publicUrl)) return undefined;
  const base = publicUrl.replace(/\/+$/, '');
  return `${base}/dashboard/agents/${encodeURIComponent(agentId)}?open=1`;
}
