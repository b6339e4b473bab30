import { describe, expect, it } from 'vitest';
import { html } from './html.js';
import { MailMessageSchema, renderMail } from './templates.js';

const site = { publicUrl: 'https://svc.example' };

describe('mail templates', () => {
  it('escape every interpolated string in HTML, and what html made only once', () => {
    const name = `<img src=x onerror="alert('x')"> & co`;
    const inner = html`<b>${name}</b>`;
    expect(html`<p>${inner}${[html`<i>${'1 < 2'}</i>`]}${undefined}</p>`.value).toBe(
      '<p><b>&#60;img src=x onerror=&#34;alert(&#39;x&#39;)&#34;&#62; &#38; co</b><i>1 &#60; 2</i></p>',
    );
  });

  it('render a notice as plain text and HTML in the shared frame, the link last', () => {
    const message = MailMessageSchema.parse({
      template: 'notice',
      to: 'Ada@Example.com',
      data: {
        subject: 'Your <Agent> is ready',
        paragraphs: ['It runs.', 'Open it & have fun.'],
        action: { label: 'Open', url: 'https://svc.example/a?b=1&c=2' },
      },
    });
    expect(message.to).toBe('ada@example.com');
    const mail = renderMail(message, site);
    expect(mail.subject).toBe('Your <Agent> is ready');
    expect(mail.text).toBe(
      'It runs.\n\nOpen it & have fun.\n\nOpen: https://svc.example/a?b=1&c=2\n\n-- \nsvc, https://svc.example\n',
    );
    expect(mail.html).toContain('<title>Your &#60;Agent&#62; is ready</title>');
    expect(mail.html).toContain('<p>It runs.</p>\n<p>Open it &#38; have fun.</p>');
    expect(mail.html).toContain('<a href="https://svc.example/a?b=1&#38;c=2">Open</a>');
    expect(mail.html).toContain('<a href="https://svc.example">https://svc.example</a>');
    expect(renderMail({ ...message, data: { subject: 'S', paragraphs: ['P'] } }, site).text).toBe(
      'P\n\n-- \nsvc, https://svc.example\n',
    );
  });

  it('refuse an unknown template, a bad recipient, and data the template does not take', () => {
    const refused = (value: unknown) =>
      MailMessageSchema.safeParse(value).error?.issues.map((issue) => issue.path.join('.'));
    const data = { subject: 'S', paragraphs: ['P'] };
    expect(refused({ template: 'nope', to: 'a@example.com', data })).toEqual(['template']);
    expect(refused({ template: 'notice', to: 'not an address', data })).toEqual(['to']);
    expect(
      refused({
        template: 'notice',
        to: 'a@example.com',
        data: {
          subject: 'a\r\nBcc: x@example.com',
          paragraphs: ['P'],
          action: { label: 'L', url: 'javascript:x' },
        },
      }),
    ).toEqual(['data.subject', 'data.action.url']);
  });

  it('render the account messages with their link in both bodies, names escaped in HTML', () => {
    const url = 'https://svc.example/dashboard/reset-password?token=abc&x=1';
    for (const template of ['verifyEmail', 'passwordReset'] as const) {
      const mail = renderMail(
        MailMessageSchema.parse({ template, to: 'a@example.com', data: { name: 'Ada <3', url } }),
        site,
      );
      expect(mail.text).toContain(`\n${url}\n`);
      expect(mail.html).toContain(
        'href="https://svc.example/dashboard/reset-password?token=abc&#38;x=1"',
      );
      expect(mail.html).toContain('Ada &#60;3');
    }
    const invite = renderMail(
      MailMessageSchema.parse({
        template: 'invitation',
        to: 'b@example.com',
        data: { inviterName: 'Ada', organizationName: 'Acme', role: 'admin', url },
      }),
      site,
    );
    expect(invite.subject).toBe('Ada invited you to Acme');
    expect(invite.text).toContain('join Acme as an admin');
    // A line break in a name cannot start a header: it becomes a space.
    const flattened = renderMail(
      MailMessageSchema.parse({
        template: 'invitation',
        to: 'b@example.com',
        data: {
          inviterName: 'Ada\r\nBcc: x@example.com',
          organizationName: 'Acme',
          role: 'owner',
          url,
        },
      }),
      site,
    );
    expect(flattened.subject).toBe('Ada Bcc: x@example.com invited you to Acme');
  });

  it('render the e-mail change messages: the confirmation link, the undo link, the taken note', () => {
    const url = 'https://svc.example/dashboard/verify-email?token=abc';
    const undoUrl = 'https://svc.example/dashboard/undo-email-change?token=def';
    const render = (template: string, data: unknown) =>
      renderMail(MailMessageSchema.parse({ template, to: 'a@example.com', data }), site);
    const confirm = render('confirmEmailChange', { name: 'Ada', newEmail: 'n@example.com', url });
    expect(confirm.text).toContain(`\n${url}\n`);
    expect(confirm.html).toContain(`href="${url}"`);
    for (const template of ['emailChangeRequested', 'emailChanged']) {
      const notice = render(template, { name: 'Ada', newEmail: '<n@example.com>', undoUrl });
      expect(notice.text).toContain(undoUrl);
      expect(notice.html).toContain(`href="${undoUrl}"`);
      expect(notice.html).toContain('&#60;n@example.com&#62;');
    }
    const inUse = render('emailInUse', {});
    expect(inUse.subject).toBe('Someone tried to use your e-mail address');
    expect(inUse.text).toContain('https://svc.example/dashboard/forgot-password');
    expect(inUse.text).not.toMatch(/token=/);
  });
});
