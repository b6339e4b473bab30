import { z } from 'zod';
import type { Clock } from '../adapters/clock.js';
import type { Database } from '../db/database.js';
import { defineJob } from '../jobs/job.js';
import type { Logger } from '../logger.js';
import { deleteRateLimitsBefore } from './rate-limits.repo.js';
import { deleteExpiredSessions } from './sessions.repo.js';
import { LONGEST_FORGET_MS } from './sign-in-limits.js';

/** Hourly: drop expired sessions and sign-in and sign-up counters every policy has forgotten. */
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
        const rateLimits = await deleteRateLimitsBefore(
          deps.database.db,
          new Date(now.getTime() - LONGEST_FORGET_MS),
        );
        deps.log.info({ sessions, rateLimits }, 'swept expired sessions and rate limits');
      },
    }),
  ];
}
