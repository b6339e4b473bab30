import { defineJob, handleJob } from '../jobs/job.js';
import type { Logger } from '../logger.js';
import type { Mailer } from './mailer.js';
import type { MailSite } from './template.js';
import { MailMessageSchema, renderMail } from './templates.js';

/**
 * Renders one message and hands it to the mailer. A refused or unreachable server
 * fails the attempt, retried with backoff (from 30 s, doubling with jitter: the eighth and last
 * retry comes two to four hours after the first failure).
 * A crash between the server's acceptance and the job's completion sends it again: mail is
 * delivered at least once. The log names template, recipient, Message-ID (and the outbox
 * file) and how long the send took, never the data: it may hold a link that acts for the recipient.
 */
export const sendMail = defineJob({
  name: 'mail.send',
  payload: MailMessageSchema,
  retryLimit: 8,
  retryDelaySeconds: 30,
  expireInSeconds: 300,
});

export function mailJobs(deps: { mailer: Mailer; site: MailSite; log: Logger }) {
  return [
    handleJob(sendMail, async (message, job) => {
      const startedAt = performance.now();
      const rendered = renderMail(message, deps.site);
      const delivery = await deps.mailer.send({ to: message.to, ...rendered }, job.signal);
      const durationMs = Math.round(performance.now() - startedAt);
      deps.log.info(
        { template: message.template, to: message.to, ...delivery, durationMs },
        delivery.file ? 'mail written to the outbox' : 'mail sent',
      );
    }),
  ];
}
