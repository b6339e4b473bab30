import type { MailConfig } from '../config/config.js';
import type { Executor } from '../db/database.js';
import { AppError } from '../errors.js';
import type { JobQueue } from '../jobs/queue.js';
import { sendMail } from './mail.jobs.js';
import { latestOutboxMessage } from './outbox.js';
import type { MailMessage } from './templates.js';

export interface MailService {
  /**
   * Queues a message through the caller's transaction: it is sent (by the `mail.send` job, never
   * inside the request) only if the transaction commits. Its data is checked now.
   */
  enqueue(tx: Executor, message: MailMessage): Promise<void>;
  /** The newest outbox message to `email`, as text to print (the operator's `mail last`). */
  latestInOutbox(email: string): Promise<string>;
}

export function createMailService(deps: { jobs: JobQueue; config: MailConfig }): MailService {
  const { transport } = deps.config;
  return {
    async enqueue(tx, message) {
      await deps.jobs.enqueue(tx, sendMail, message);
    },

    async latestInOutbox(email) {
      if (transport.kind === 'smtp') {
        throw new AppError('invalid_state', {
          message: 'SMTP_URL is set: mail goes to the SMTP server and no outbox is kept',
        });
      }
      const found = await latestOutboxMessage(transport.dir, email);
      if (!found) {
        throw new AppError('not_found', { message: `no message to ${email} in ${transport.dir}` });
      }
      return found;
    },
  };
}
