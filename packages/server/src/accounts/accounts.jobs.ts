import { z } from 'zod';
import type { Clock } from '../adapters/clock.js';
import type { Database } from '../db/database.js';
import { defineJob } from '../jobs/job.js';
import type { Logger } from '../logger.js';
import { deleteExpiredSessions } from './sessions.repo.js';
import { deleteStaleRateLimits } from './sign-in-limits.js';

/** Hourly: drop expired sessions and finished sign-in rate-limit windows. */
export function accountsJobs(deps: { database: Database; clock: Clock; log: Logger }) {
  return [
    defineJob({
      name: 'accounts.sweep',
      payload: z.object({}),
      cron: '17 * * * *',
      retryLimit: 0,
      async run() {
        const now = deps.clock.now();
        const sessions = await deleteExpiredSessions(deps.database.db, now);
        const rateLimits = await deleteStaleRateLimits(deps.database.db, now);
        deps.log.info({ sessions, rateLimits }, 'swept expired sessions and rate limits');
      },
    }),
  ];
}
