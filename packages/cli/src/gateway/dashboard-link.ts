import { gatewayKeyFromToken } from '@svc/contract/gateway-ticket';
import { loadAgentCredentials } from '../agent-env.js';

/**
 * The dashboard's page for this Agent, asked to open it at once (`?open=1`): where the gateway
 * sends a browser that has no access yet, so that a member lands back here with a fresh ticket.
 * Built from the Agent's credentials (`SVC_API_URL`, `SVC_AGENT_ID`, else the id in the token),
 * read afresh like the gateway's key: the file first, then the environment. `undefined` without
 * them.
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
  if (!/^https?:\/\/[^/]/i.test(credentials.apiUrl)) return undefined;
  const base = credentials.apiUrl.replace(/\/+$/, '');
  return `${base}/dashboard/agents/${encodeURIComponent(agentId)}?open=1`;
}
