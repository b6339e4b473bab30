import { pushPublicKey } from '@svc/contract/agent-env-push';
import { issueAgentToken } from './agent-token.js';

/** The push key's public half, per HMAC key (derived once: it is asked for on every push). */
const pushKeys = new WeakMap<Buffer, string>();

/**
 * What an Agent's machine is given to reach the service: its URL, the Agent id and its token,
 * whether browsers reach its gateway over HTTPS (so its cookie must be `Secure`), and the public
 * key the service's pushes of new credentials are signed with (see `agent-env-push`).
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
    SVC_PUSH_KEY: pushKeyOf(hmacKey),
  };
}

function pushKeyOf(hmacKey: Buffer): string {
  let key = pushKeys.get(hmacKey);
  if (!key) {
    key = pushPublicKey(hmacKey);
    pushKeys.set(hmacKey, key);
  }
  return key;
}
