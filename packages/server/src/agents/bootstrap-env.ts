import { issueAgentToken } from './agent-token.js';

/** What an Agent's machine is given to reach the service: its URL, the Agent id and its token. */
export function agentBootstrapEnv(
  publicUrl: string,
  hmacKey: Buffer,
  agent: { id: string; tokenGen: number },
): Record<string, string> {
  return {
    SVC_API_URL: publicUrl,
    SVC_AGENT_ID: agent.id,
    SVC_HMAC_TOKEN: issueAgentToken(hmacKey, agent.id, agent.tokenGen),
  };
}
