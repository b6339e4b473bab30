import { Email } from '@svc/contract';
import { z } from 'zod';
import { frame, type MailSite, type MailTemplate } from './template.js';
import {
  confirmEmailChange,
  emailChanged,
  emailChangeRequested,
  emailInUse,
  invitation,
  passwordReset,
  verifyEmail,
} from './templates/account-mail.js';
import { notice } from './templates/notice.js';

/**
 * Every message the service sends, by name. To add one: a file in `templates/` with
 * `defineTemplate` (data schema, plain-text and HTML bodies through `html`, which escapes), an
 * entry here, and a test that renders it; features then `mail.enqueue(tx, {template, to, data})`.
 */
export const MAIL_TEMPLATES = {
  notice,
  verifyEmail,
  passwordReset,
  invitation,
  confirmEmailChange,
  emailChangeRequested,
  emailChanged,
  emailInUse,
} satisfies Record<string, MailTemplate>;

export type TemplateName = keyof typeof MAIL_TEMPLATES;

/** What a feature asks to send: the template's data is typed by its schema. */
export type MailMessage = {
  [N in TemplateName]: {
    readonly template: N;
    readonly to: string;
    readonly data: z.input<(typeof MAIL_TEMPLATES)[N]['data']>;
  };
}[TemplateName];

/** The `mail.send` job's payload: a known template, one recipient, data its schema accepts. */
export const MailMessageSchema = z
  .object({
    template: z.enum(Object.keys(MAIL_TEMPLATES) as [TemplateName, ...TemplateName[]]),
    to: Email,
    data: z.unknown(),
  })
  .superRefine((message, ctx) => {
    const result = MAIL_TEMPLATES[message.template].data.safeParse(message.data);
    for (const issue of result.error?.issues ?? []) {
      ctx.addIssue({ code: 'custom', message: issue.message, path: ['data', ...issue.path] });
    }
  });

/** Subject, plain text and HTML of one message, in the frame every message shares. */
export function renderMail(message: z.output<typeof MailMessageSchema>, site: MailSite) {
  const template: MailTemplate = MAIL_TEMPLATES[message.template];
  return frame(template.render(template.data.parse(message.data), site), site);
}
