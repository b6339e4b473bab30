import { accountsJobs } from './accounts/accounts.jobs.js';
import { agentJobs } from './agents/agents.jobs.js';
import { agentBootstrapEnv } from './agents/bootstrap-env.js';
import { bundlesJobs } from './bundles/bundles.jobs.js';
import type { AppContext } from './context.js';
import type { JobDefinition } from './jobs/job.js';
import { plainVmJobs } from './plain-vms/plain-vms.jobs.js';

/** Every job the service runs, one list. */
export function jobDefinitions(ctx: AppContext): JobDefinition<unknown>[] {
  return [
    ...accountsJobs({ database: ctx.database, clock: ctx.clock, log: ctx.log.accounts }),
    ...agentJobs({
      database: ctx.database,
      clock: ctx.clock,
      compute: ctx.compute,
      log: ctx.log.root.child({ subsystem: 'agents' }),
      bootstrapEnv: (agent) =>
        agentBootstrapEnv(ctx.config.http.publicUrl, ctx.secrets.hmacKey, agent),
    }),
    ...plainVmJobs({
      database: ctx.database,
      clock: ctx.clock,
      compute: ctx.compute,
      log: ctx.log.root.child({ subsystem: 'plain-vms' }),
    }),
    ...bundlesJobs({
      database: ctx.database,
      store: ctx.bundles.store,
      clock: ctx.clock,
      log: ctx.log.root.child({ subsystem: 'bundles' }),
    }),
  ] as JobDefinition<unknown>[];
}
