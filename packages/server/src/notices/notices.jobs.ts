import { z } from 'zod';
import type { Database } from '../db/database.js';
import { defineJob, handleJob } from '../jobs/job.js';
import type { Logger } from '../logger.js';
import type { MailService } from '../mail/mail.service.js';
import { type NoticeFacts, noticeMessage } from './notice-messages.js';
import * as repo from './notices.repo.js';

const event = { eventId: z.uuid(), accountId: z.uuid() };

/** One event to tell an account's owners and admins about; `eventId` makes it mailed once. */
export const NoticeEvent = z.discriminatedUnion('kind', [
  z.object({ ...event, kind: z.literal('connection_error'), connectionId: z.uuid() }),
  z.object({
    ...event,
    kind: z.literal('machine_error'),
    machineKind: z.enum(['agent', 'plain_vm']),
    machineId: z.uuid(),
    reason: z.string().min(1).max(200),
  }),
  z.object({ ...event, kind: z.literal('agent_idle_stopped'), agentId: z.uuid() }),
  z.object({ ...event, kind: z.literal('subscription_past_due') }),
  z.object({
    ...event,
    kind: z.literal('backup_failed'),
    machineKind: z.enum(['agent', 'plain_vm']),
    machineId: z.uuid(),
  }),
]);
export type NoticeEvent = z.infer<typeof NoticeEvent>;

/**
 * Mails one notice event: enqueued in the transaction of the change it reports, so nothing is
 * mailed for a change that rolled back. Its run records the event and queues one `mail.send`
 * per recipient in one transaction: a retry after that commit finds the event and mails nothing.
 */
export const sendNotice = defineJob({
  name: 'notice.send',
  payload: NoticeEvent,
  retryLimit: 8,
  retryDelaySeconds: 30,
});

export function noticesJobs(deps: {
  database: Database;
  mail: Pick<MailService, 'enqueue'>;
  publicUrl: string;
  log: Logger;
}) {
  return [
    handleJob(sendNotice, async (notice) => {
      const mailed = await deps.database.transaction(async (tx) => {
        const id = notice.eventId;
        if (!(await repo.claimEvent(tx, { id, kind: notice.kind, accountId: notice.accountId }))) {
          return null;
        }
        const account = await repo.accountOf(tx, notice.accountId);
        if (!account) return 0;
        const facts = await factsOf(tx, notice);
        if (!facts) return 0;
        const data = noticeMessage(facts, account, deps.publicUrl);
        const recipients = await repo.recipientsOf(tx, notice.accountId, notice.kind);
        for (const { email } of recipients) {
          await deps.mail.enqueue(tx, { template: 'notice', to: email, data });
        }
        return recipients.length;
      });
      const line = { eventId: notice.eventId, kind: notice.kind, accountId: notice.accountId };
      if (mailed === null) deps.log.debug(line, 'notice already mailed');
      else deps.log.info({ ...line, recipients: mailed }, 'notice mailed');
    }),
  ];
}

/** What the message names, read when it is sent; null when its subject is gone meanwhile. */
async function factsOf(
  tx: Parameters<typeof repo.accountOf>[0],
  notice: NoticeEvent,
): Promise<NoticeFacts | null> {
  switch (notice.kind) {
    case 'connection_error': {
      const connection = await repo.connectionOf(tx, notice.connectionId);
      return connection ? { ...notice, ...connection } : null;
    }
    case 'machine_error': {
      const table = notice.machineKind === 'agent' ? 'agents' : 'plainVms';
      const machine = await repo.machineNameOf(tx, table, notice.machineId);
      return machine ? { ...notice, name: machine.name } : null;
    }
    case 'backup_failed': {
      const table = notice.machineKind === 'agent' ? 'agents' : 'plainVms';
      const machine = await repo.machineNameOf(tx, table, notice.machineId);
      return machine ? { ...notice, name: machine.name } : null;
    }
    case 'agent_idle_stopped': {
      const agent = await repo.machineNameOf(tx, 'agents', notice.agentId);
      return agent ? { ...notice, name: agent.name } : null;
    }
    case 'subscription_past_due':
      return notice;
  }
}
