import { getSelfAgent } from '@svc/contract';
import { loadAgentCredentials } from '../agent-env.js';
import { createApiClient } from '../api-client.js';

/** How long a page waits for the service to say the Agent's name before it shows without it. */
const NAME_TIMEOUT_MS = 2_000;

/**
 * The Agent's name as the service knows it (`GET /api/agent/self`), for the gateway's pages: asked
 * when a page is served, kept once known. `undefined` without credentials or an answer in time;
 * the next page asks again.
 */
export function agentNameSource(
  env: Readonly<Record<string, string | undefined>>,
  fetchImpl: typeof fetch = fetch,
): () => Promise<string | undefined> {
  let known: string | undefined;
  return async () => {
    if (known) return known;
    const credentials =
      (await loadAgentCredentials({ HOME: env.HOME })) ?? (await loadAgentCredentials(env));
    if (!credentials) return undefined;
    const timed: typeof fetch = (url, init) =>
      fetchImpl(url, { ...init, signal: AbortSignal.timeout(NAME_TIMEOUT_MS) });
    try {
      known = (await createApiClient(credentials, timed)(getSelfAgent)).name;
    } catch {
      return undefined;
    }
    return known;
  };
}
