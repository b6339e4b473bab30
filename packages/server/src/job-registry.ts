import { accountsJobs } from './accounts/accounts.jobs.js';
import { issueAgentToken } from './agents/agent-token.js';
import { agentJobs } from './agents/agents.jobs.js';
import type { AppContext } from './context.js';
import type { JobDefinition } from './jobs/job.js';

/** Every job the service runs, one list. */
export function jobDefinitions(ctx: AppContext): JobDefinition<unknown>[] {
  return [
    ...accountsJobs({ database: ctx.database, clock: ctx.clock, log: ctx.log.accounts }),
    ...agentJobs({
      database: ctx.database,
      clock: ctx.clock,
      compute: ctx.compute,
      log: ctx.log.root.child({ subsystem: 'agents' }),
      bootstrapEnv: (agent) => ({
        SVC_API_URL: ctx.config.http.publicUrl,
        SVC_AGENT_ID: agent.id,
        SVC_HMAC_TOKEN: issueAgentToken(ctx.secrets.hmacKey, agent.id, agent.tokenGen),
      }),
    }),
  ] as JobDefinition<unknown>[];
}
