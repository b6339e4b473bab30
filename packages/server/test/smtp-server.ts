import type { AddressInfo } from 'node:net';
import PostalMime, { type Email } from 'postal-mime';
import { SMTPServer, type SMTPServerError } from 'smtp-server';

/** One message as it arrived: who the session said it was for, whether TLS carried it, parsed. */
export interface ReceivedMail {
  readonly envelope: { readonly from: string; readonly to: readonly string[] };
  readonly secure: boolean;
  readonly user: string;
  readonly raw: string;
  readonly parsed: Email;
}

export interface TestSmtpServer {
  readonly received: ReceivedMail[];
  /** `SMTP_URL` for the service: STARTTLS with the server's own test certificate (not trusted). */
  readonly url: string;
  readonly user: string;
  readonly password: string;
  /** The next `count` messages are refused with a temporary failure (451) after their data. */
  refuseNext(count: number): void;
  /** The next `count` logins are refused (535), whatever the password. */
  refuseLogins(count: number): void;
  close(): Promise<void>;
}

/**
 * A real SMTP server in this process (smtp-server, nodemailer's own), on a loopback port: it
 * offers STARTTLS, takes logins only over TLS and only with its password, and keeps what arrives.
 */
export async function startTestSmtpServer(): Promise<TestSmtpServer> {
  const user = 'svc-mailer';
  const password = `smtp-pass-${crypto.randomUUID()}`;
  const received: ReceivedMail[] = [];
  let refusals = 0;
  let loginRefusals = 0;
  const server = new SMTPServer({
    // Quiet: also stops its warning about the built-in test certificate.
    logger: false,
    onAuth(auth, _session, callback) {
      if (loginRefusals > 0 || auth.username !== user || auth.password !== password) {
        loginRefusals = Math.max(0, loginRefusals - 1);
        return callback(Object.assign(new Error('Invalid login'), { responseCode: 535 }));
      }
      callback(null, { user });
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', async () => {
        if (refusals > 0) {
          refusals -= 1;
          const error: SMTPServerError = new Error('Try again later');
          error.responseCode = 451;
          return callback(error);
        }
        const raw = Buffer.concat(chunks);
        received.push({
          envelope: {
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
          },
          secure: session.secure,
          user: session.user,
          raw: raw.toString('utf8'),
          parsed: await PostalMime.parse(raw),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    received,
    url: `smtp://${user}:${password}@127.0.0.1:${port}?tls.rejectUnauthorized=false`,
    user,
    password,
    refuseNext: (count) => {
      refusals = count;
    },
    refuseLogins: (count) => {
      loginRefusals = count;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
