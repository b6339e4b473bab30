import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSmtpServer, type TestSmtpServer } from '../../test/smtp-server.js';
import { createTestContext, type TestContext } from '../../test/test-context.js';
import { databaseKinds } from '../../test/test-db.js';
import { waitFor } from '../../test/wait.js';
import { sendMail } from './mail.jobs.js';
import type { MailMessage } from './templates.js';

const RESET_URL = 'https://svc.example/dashboard/reset?token=secret-token-in-a-link';

const message = (to: string, subject: string): MailMessage => ({
  template: 'notice',
  to,
  data: {
    subject,
    paragraphs: ['Hello <Ada> & co.', 'Someone asked to reset your password.'],
    action: { label: 'Reset it', url: RESET_URL },
  },
});

describe.each(databaseKinds)('mail over SMTP on %s', (kind) => {
  let smtp: TestSmtpServer;
  let t: TestContext;

  beforeAll(async () => {
    smtp = await startTestSmtpServer();
    t = await createTestContext(kind, {
      env: { SMTP_URL: smtp.url, MAIL_FROM: 'Svc Mail <mail@svc.example>' },
      overrides: { immediateJobRetries: true },
    });
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  /** Enqueues in a transaction, as a feature does, and waits for the server to hold it. */
  async function send(to: string, subject: string) {
    await t.ctx.database.transaction((tx) => t.ctx.mail.enqueue(tx, message(to, subject)));
    return waitFor(
      () => smtp.received.find((mail) => mail.parsed.subject === subject),
      15_000,
      `"${subject}" at the SMTP server`,
    );
  }

  it('sends through the job queue: logged in over STARTTLS, From, To, subject, text and HTML', async () => {
    const mail = await send('Ada@Example.com', 'Reset your password');
    expect(mail.secure).toBe(true);
    expect(mail.user).toBe(smtp.user);
    expect(mail.envelope).toEqual({ from: 'mail@svc.example', to: ['ada@example.com'] });
    expect(mail.parsed.from).toMatchObject({ name: 'Svc Mail', address: 'mail@svc.example' });
    expect(mail.parsed.to).toEqual([expect.objectContaining({ address: 'ada@example.com' })]);
    expect(mail.parsed.messageId).toMatch(/^<.+@.+>$/);
    expect(mail.parsed.text).toContain('Hello <Ada> & co.');
    expect(mail.parsed.text).toContain(`Reset it: ${RESET_URL}`);
    // User text is escaped in the HTML part; the link is whole.
    expect(mail.parsed.html).toContain('<p>Hello &#60;Ada&#62; &#38; co.</p>');
    expect(mail.parsed.html).toContain(`<a href="${RESET_URL}">Reset it</a>`);
    expect(mail.parsed.html).toContain(t.ctx.config.http.publicUrl);

    // The server holds the message a moment before the job hears its answer and logs.
    const sent = await waitFor(
      () => t.logs.entries().find((entry) => entry.msg === 'mail sent'),
      15_000,
      'the "mail sent" log line',
    );
    expect(sent).toMatchObject({
      template: 'notice',
      to: 'ada@example.com',
      durationMs: expect.any(Number),
    });
    expect(sent?.messageId).toBe(mail.parsed.messageId);
  });

  it('retries a refused message until the server takes it', async () => {
    smtp.refuseNext(2);
    const before = smtp.received.length;
    await send('bob@example.com', 'After two refusals');
    expect(smtp.received.length).toBe(before + 1);
    const failures = t.logs
      .entries()
      .filter((entry) => entry.msg === 'job failed' && entry.job === sendMail.name);
    expect(failures.map((entry) => entry.retryCount)).toEqual([0, 1]);
    expect(JSON.stringify(failures)).toContain('451');
  });

  it('never logs the SMTP password or the message, not even when a login fails', async () => {
    smtp.refuseLogins(1);
    await send('cy@example.com', 'After a refused login');
    const logged = t.logs.text();
    expect(logged).toContain('Invalid login');
    const plain = `\0${smtp.user}\0${smtp.password}`;
    for (const secret of [
      smtp.password,
      Buffer.from(smtp.password).toString('base64'),
      Buffer.from(plain).toString('base64'),
      'secret-token-in-a-link',
      'Someone asked',
    ]) {
      expect(logged).not.toContain(secret);
    }
  });

  it('refuses data its template does not accept when it is enqueued', async () => {
    await expect(
      t.ctx.database.transaction((tx) =>
        t.ctx.mail.enqueue(tx, {
          template: 'notice',
          to: 'ada@example.com',
          data: { subject: 'Two\nlines', paragraphs: [] },
        }),
      ),
    ).rejects.toMatchObject({
      issues: expect.arrayContaining([
        expect.objectContaining({ path: ['data', 'subject'] }),
        expect.objectContaining({ path: ['data', 'paragraphs'] }),
      ]),
    });
  });
});
