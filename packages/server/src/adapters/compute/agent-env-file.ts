/** Where an Agent's machine keeps its credentials, relative to the Agent's home. */
export const AGENT_ENV_PATH = '.crabglamp/agent.env';

/**
 * `agent.env` as `svc` reads it: `KEY=value` lines. Values are the service's own (a URL, a uuid,
 * a token of base64url characters), never containing a newline.
 */
export const agentEnvFile = (env: Readonly<Record<string, string>>): string =>
  `${Object.entries(env)
    .map(([key, value]) => `${key}=${value}`)
    .join('\n')}\n`;
