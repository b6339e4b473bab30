import { pushPublicKey } from '@svc/contract/agent-env-push';
import { issueAgentToken } from './agent-token.js';

/** The push key's public half, per HMAC key (derived once: it is asked for on every push). */
const pushKeys = new WeakMap<Buffer, string>();

/**
 * What an Agent's machine is given to reach the service: its URL as the machine reaches it
 * (`SVC_API_URL`), the Agent id and its token, whether browsers reach its gateway over HTTPS (so
 * its cookie must be `Secure`), and the public key the service's pushes of new credentials are
 * signed with (see `agent-env-push`). Links the machine builds for a browser use `SVC_PUBLIC_URL`,
 * the dashboard's own URL: the address a machine reaches the service at (the host's bridge
 * address on Incus) is another origin to a browser, where the user is signed out.
 */
export function agentBootstrapEnv(
  service: {
    readonly publicUrl: string;
    /** Where the machine reaches the service, when not at `publicUrl` (`machineServiceUrl`). */
    readonly machineServiceUrl?: string;
    readonly agentScheme: 'http' | 'https';
  },
  hmacKey: Buffer,
  agent: { id: string; tokenGen: number },
): Record<string, string> {
  return {
    SVC_API_URL: service.machineServiceUrl ?? service.publicUrl,
    SVC_PUBLIC_URL: service.publicUrl,
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
