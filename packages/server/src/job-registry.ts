import { accountsJobs } from './accounts/accounts.jobs.js';
import type { AppContext } from './context.js';
import type { JobDefinition } from './jobs/job.js';

/** Every job the service runs, one list. */
export function jobDefinitions(ctx: AppContext): JobDefinition<unknown>[] {
  return [...accountsJobs({ database: ctx.database, clock: ctx.clock, log: ctx.log.accounts })];
}
