import { createTransport } from 'nodemailer';
import type { Clock } from '../adapters/clock.js';
import type { Mailer } from './mailer.js';

/**
 * Sends through the SMTP server of `url` (`smtp://` upgrades with STARTTLS when the server offers
 * it, and insists with a login to another host: `splitSmtpUrl`; `smtps://` is TLS from the start). One connection per message: mail is rare, and a pool
 * would hold a connection open between messages. Nodemailer's own logger stays off: it would
 * print the AUTH exchange.
 */
export function createSmtpMailer(url: string, from: string, clock: Clock): Mailer {
  const transport = createTransport(url);
  return {
    async send(mail, signal) {
      const info = await transport.sendMail({ ...mail, from, date: clock.now(), signal });
      return { messageId: info.messageId };
    },
  };
}
