import type { Clock } from '../adapters/clock.js';
import type { MailConfig } from '../config/config.js';
import type { Secrets } from '../config/secrets.js';
import { createOutboxMailer } from './outbox.js';
import { createSmtpMailer } from './smtp-mailer.js';

/** One rendered message for one recipient; the sender is the mailer's (`MAIL_FROM`). */
export interface OutgoingMail {
  readonly to: string;
  readonly subject: string;
  readonly text: string;
  readonly html: string;
}

/** What became of a message: its Message-ID, and the outbox file when it went there. */
export interface Delivery {
  readonly messageId: string;
  readonly file?: string;
}

/** Hands messages on: to an SMTP server, or into the outbox. */
export interface Mailer {
  /** Resolves once the message is accepted; rejects (the job retries) when it is not. */
  send(mail: OutgoingMail, signal: AbortSignal): Promise<Delivery>;
}

export function createMailer(config: MailConfig, secrets: Secrets, clock: Clock): Mailer {
  if (config.transport.kind === 'outbox') {
    return createOutboxMailer(config.transport.dir, config.from, clock);
  }
  const url = new URL(config.transport.url);
  if (secrets.smtpPassword) url.password = secrets.smtpPassword;
  return createSmtpMailer(url.href, config.from, clock);
}
