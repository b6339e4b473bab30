import { Email } from '@svc/contract';
import { z } from 'zod';
import type { Clock } from '../adapters/clock.js';
import type { Database } from '../db/database.js';
import { defineJob } from '../jobs/job.js';
import type { Logger } from '../logger.js';
import { type EmailLinksService, PASSWORD_RESET_JOB } from './email-links.service.js';
import type { InvitationsService } from './invitations.service.js';
import { deleteRateLimitsBefore } from './rate-limits.repo.js';
import { deleteExpiredSessions } from './sessions.repo.js';
import { LONGEST_FORGET_MS } from './sign-in-limits.js';

/**
 * `accounts.sweep`, hourly: drop expired sessions, e-mail links and invitations, and the rate
 * counters every policy has forgotten. `accounts.password-reset`: mail a reset link to an address
 * if it has an account (a job, so the request takes the same time either way).
 */
export function accountsJobs(deps: {
  database: Database;
  clock: Clock;
  emailLinks: Pick<EmailLinksService, 'sweep' | 'sendPasswordReset'>;
  invitations: Pick<InvitationsService, 'sweep'>;
  log: Logger;
}) {
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
        const emailLinks = await deps.emailLinks.sweep(now);
        const invitations = await deps.invitations.sweep(now);
        deps.log.info(
          { sessions, rateLimits, emailLinks, invitations },
          'swept expired sessions, links, invitations and rate limits',
        );
      },
    }),
    defineJob({
      name: PASSWORD_RESET_JOB,
      payload: z.object({ email: Email }),
      retryLimit: 5,
      retryDelaySeconds: 10,
      async run({ email }) {
        await deps.emailLinks.sendPasswordReset(email);
      },
    }),
  ];
}
