import { issueAgentToken } from './agent-token.js';

/**
 * What an Agent's machine is given to reach the service: its URL, the Agent id and its token, and
 * whether browsers reach its gateway over HTTPS (so its cookie must be `Secure`).
 */
export function agentBootstrapEnv(
  service: { readonly publicUrl: string; readonly agentScheme: 'http' | 'https' },
  hmacKey: Buffer,
  agent: { id: string; tokenGen: number },
): Record<string, string> {
  return {
    SVC_API_URL: service.publicUrl,
    SVC_AGENT_ID: agent.id,
    SVC_HMAC_TOKEN: issueAgentToken(hmacKey, agent.id, agent.tokenGen),
    SVC_GATEWAY_SECURE_COOKIES: String(service.agentScheme === 'https'),
  };
}
