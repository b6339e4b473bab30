import { Email } from '@svc/contract';
import { z } from 'zod';
import type { Clock } from '../adapters/clock.js';
import type { Database } from '../db/database.js';
import { defineJob, handleJob } from '../jobs/job.js';
import type { Logger } from '../logger.js';
import type { EmailLinksService } from './email-links.service.js';
import type { InvitationsService } from './invitations.service.js';
import { deleteRateLimitsBefore } from './rate-limits.repo.js';
import { deleteExpiredSessions } from './sessions.repo.js';
import { LONGEST_FORGET_MS } from './sign-in-limits.js';

/** Hourly: see accountsJobs. */
export const sweepAccounts = defineJob({
  name: 'accounts.sweep',
  payload: z.object({}),
  cron: '17 * * * *',
  retryLimit: 0,
});

/** Looks an address up and mails it a reset link, if it has an account. */
export const passwordReset = defineJob({
  name: 'accounts.password-reset',
  payload: z.object({ email: Email }),
  retryLimit: 5,
  retryDelaySeconds: 10,
});

/**
 * The sweep, hourly: drop expired sessions, e-mail links and invitations, and the rate
 * counters every policy has forgotten. The password reset: mail a reset link to an address
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
    handleJob(sweepAccounts, async () => {
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
    }),
    handleJob(passwordReset, ({ email }) => deps.emailLinks.sendPasswordReset(email)),
  ];
}
