import type { AppProvider } from '@svc/contract';

/** An event with what its message names, read when it is mailed. */
export type NoticeFacts =
  | { kind: 'connection_error'; provider: AppProvider; providerAccountName: string }
  | {
      kind: 'machine_error';
      machineKind: 'agent' | 'plain_vm';
      machineId: string;
      name: string;
      reason: string;
    }
  | { kind: 'agent_idle_stopped'; agentId: string; name: string }
  | { kind: 'subscription_past_due' }
  | { kind: 'backup_failed'; machineKind: 'agent' | 'plain_vm'; machineId: string; name: string };

/**
 * What others wrote (names, a provider's account name, a reason) made one line, so the `notice`
 * template, which takes single lines, never refuses a message and leaves its event unmailed.
 */
const oneLine = (text: string) => text.replace(/[\p{Cc}\u2028\u2029]+/gu, ' ').trim();
const SUBJECT_MAX = 200;
const PARAGRAPH_MAX = 2_000;
const clip = (text: string, max: number) =>
  text.length > max ? `${text.slice(0, max - 1)}…` : text;

interface NoticeData {
  subject: string;
  paragraphs: string[];
  action: { label: string; url: string };
}

/**
 * The `notice` template's data for one event: what happened, in the account's name, with the
 * link to the page where it is acted on, and where to turn such notices off.
 */
export function noticeMessage(
  facts: NoticeFacts,
  account: { slug: string; name: string },
  publicUrl: string,
): NoticeData {
  const base = `${publicUrl}/dashboard/accounts/${encodeURIComponent(account.slug)}`;
  const footer = `You get this as an owner or admin of ${account.name}. Turn these notices off in Settings: ${publicUrl}/dashboard/settings`;
  const message = (subject: string, text: string, label: string, url: string) => ({
    subject: clip(oneLine(subject), SUBJECT_MAX),
    paragraphs: [text, footer].map((p) => clip(oneLine(p), PARAGRAPH_MAX)),
    action: { label, url },
  });
  switch (facts.kind) {
    case 'connection_error':
      return message(
        `Your ${facts.provider} connection in ${account.name} stopped working`,
        `The ${facts.provider} connection of ${account.name} (${facts.providerAccountName}) is in error: the provider no longer accepts its refresh token (it was revoked, expired, or the app's access was removed). Programs asking for its token get 410 until it is connected again.`,
        'Connect it again',
        `${base}/apps`,
      );
    case 'machine_error': {
      const noun = facts.machineKind === 'agent' ? 'Agent' : 'Plain VM';
      const page = facts.machineKind === 'agent' ? 'agents' : 'plain-vms';
      return message(
        `${noun} ${facts.name} in ${account.name} failed`,
        `The ${noun} ${facts.name} of ${account.name} is in error: ${facts.reason}. A machine in error can only be destroyed (and made again); its page shows it.`,
        `Open the ${noun}`,
        `${base}/${page}/${facts.machineId}`,
      );
    }
    case 'backup_failed': {
      const noun = facts.machineKind === 'agent' ? 'Agent' : 'Plain VM';
      const page = facts.machineKind === 'agent' ? 'agents' : 'plain-vms';
      return message(
        `Today's backup of ${noun} ${facts.name} in ${account.name} failed`,
        `The daily backup of the ${noun} ${facts.name} of ${account.name} failed on each of today's tries, so today has no backup; the earlier backups are kept. Tomorrow's is tried as usual; take a snapshot from its page if you need one now (you are told of this at most once a day per machine).`,
        `Open the ${noun}`,
        `${base}/${page}/${facts.machineId}`,
      );
    }
    case 'agent_idle_stopped':
      return message(
        `Agent ${facts.name} in ${account.name} was stopped: nobody used it`,
        `The Agent ${facts.name} of ${account.name} was stopped because nobody used it for its idle time, so it no longer runs up its bill. Start it again from its page when you need it (you are told of this at most once a day per Agent).`,
        'Open the Agent',
        `${base}/agents/${facts.agentId}`,
      );
    case 'subscription_past_due':
      return message(
        `The subscription of ${account.name} is past due`,
        `The subscription of ${account.name} is past due: an invoice is unpaid past its due date, or a payment failed. Once the grace period passes unpaid, the subscription ends.`,
        'Open billing',
        `${base}/billing`,
      );
  }
}
