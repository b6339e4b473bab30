import { randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createTransport } from 'nodemailer';
import PostalMime from 'postal-mime';
import type { Clock } from '../adapters/clock.js';
import type { Mailer } from './mailer.js';

/**
 * The embedded default: each message an RFC 822 `.eml` file in `dir`, composed by nodemailer
 * exactly as SMTP would carry it. Names begin with the time, so they sort oldest first.
 */
export function createOutboxMailer(dir: string, from: string, clock: Clock): Mailer {
  const composer = createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
  return {
    async send(mail, signal) {
      const now = clock.now();
      const info = await composer.sendMail({ ...mail, from, date: now, signal });
      const name = `${now.toISOString().replaceAll(':', '-')}-${randomUUID()}.eml`;
      const file = path.join(dir, name);
      await mkdir(dir, { recursive: true, mode: 0o700 });
      // Mode 600: messages carry links that act for their recipient. Written aside and renamed,
      // so a reader never sees half a message.
      const partial = path.join(dir, `.${name}.partial`);
      // `buffer: true` above: the message is a Buffer, not a stream.
      await writeFile(partial, info.message as Buffer, { mode: 0o600 });
      await rename(partial, file);
      return { messageId: info.messageId, file };
    },
  };
}

/**
 * The newest outbox message to `email`, for a person to read: its file, the main headers and the
 * plain text decoded (a quoted-printable link reads whole), or `undefined` when there is none.
 */
export async function latestOutboxMessage(dir: string, email: string) {
  const names = await readdir(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw error;
  });
  const newestFirst = names
    .filter((name) => name.endsWith('.eml'))
    .sort()
    .reverse();
  // One by one from the newest: an outbox is one machine's mail, and the match is usually near.
  for (const name of newestFirst) {
    const file = path.join(dir, name);
    const message = await PostalMime.parse(await readFile(file));
    const to = message.to ?? [];
    if (!to.some((mailbox) => mailbox.address?.toLowerCase() === email.toLowerCase())) continue;
    return [
      `File: ${file}`,
      `From: ${mailboxText(message.from)}`,
      `To: ${to.map(mailboxText).join(', ')}`,
      `Date: ${message.date ?? ''}`,
      `Subject: ${message.subject ?? ''}`,
      '',
      message.text ?? '',
    ].join('\n');
  }
  return undefined;
}

const mailboxText = (mailbox: { name?: string; address?: string } | undefined) =>
  mailbox?.name ? `${mailbox.name} <${mailbox.address ?? ''}>` : (mailbox?.address ?? '');
