import { readFile } from 'node:fs/promises';
import path from 'node:path';

/** Where the platform leaves the Agent's credentials, relative to the home directory. */
export const AGENT_ENV_FILE = '.crabglamp/agent.env';

export interface AgentCredentials {
  /** Where this machine reaches the service (`SVC_API_URL`). */
  readonly apiUrl: string;
  /**
   * The service's URL as browsers know it (`SVC_PUBLIC_URL`): links for a browser use it, since
   * the address the machine reaches the service at may be another origin to the browser.
   */
  readonly publicUrl?: string;
  readonly agentId?: string;
  readonly hmacToken: string;
}

/** Parses `KEY=value` lines (optionally quoted, `#` comments), as written to `agent.env`. */
export function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const match = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (!match) continue;
    const [, key = '', value = ''] = match;
    out[key] = value.replace(/^(['"])(.*)\1$/, '$2');
  }
  return out;
}

/** The values in the home's `agent.env`; none when it has no such file. */
export const readAgentEnv = (home: string): Promise<Record<string, string>> =>
  readFile(path.join(home, AGENT_ENV_FILE), 'utf8').then(parseEnvFile, () => ({}));

/**
 * The service URL and token: from `SVC_API_URL` and `SVC_HMAC_TOKEN`, else from
 * `~/.crabglamp/agent.env` in the home directory `HOME` names. `undefined` when neither has both.
 */
export async function loadAgentCredentials(
  env: Readonly<Record<string, string | undefined>>,
): Promise<AgentCredentials | undefined> {
  let values: Record<string, string | undefined> = env;
  if (!env.SVC_API_URL || !env.SVC_HMAC_TOKEN) {
    const fromFile = await readAgentEnv(env.HOME ?? '');
    values = { ...fromFile, ...Object.fromEntries(Object.entries(env).filter(([, v]) => v)) };
  }
  const {
    SVC_API_URL: apiUrl,
    SVC_PUBLIC_URL: publicUrl,
    SVC_HMAC_TOKEN: hmacToken,
    SVC_AGENT_ID: agentId,
  } = values;
  if (!apiUrl || !hmacToken) return undefined;
  return { apiUrl, hmacToken, ...(publicUrl && { publicUrl }), ...(agentId && { agentId }) };
}

/** The credentials, or an error that says where they come from. */
export async function requireAgentCredentials(
  env: Readonly<Record<string, string | undefined>>,
): Promise<AgentCredentials> {
  const credentials = await loadAgentCredentials(env);
  if (!credentials) {
    throw new Error(
      `no credentials: set SVC_API_URL and SVC_HMAC_TOKEN, or run on an Agent (~/${AGENT_ENV_FILE})`,
    );
  }
  return credentials;
}

/** The home directory `HOME` names: the Agent's files, and where its credentials are. */
export function requireHome(env: Readonly<Record<string, string | undefined>>): string {
  if (!env.HOME) throw new Error('HOME is not set');
  return env.HOME;
}
