import { z } from 'zod';
import { html } from '../html.js';
import { defineTemplate } from '../template.js';

// Names reach the subject line: each is made one line (control characters become spaces), so
// no header can be smuggled in, and a name stored before the contract refused them still sends.
const Name = z
  .string()
  .transform((name) => name.replace(/[\p{Cc}\u2028\u2029]+/gu, ' ').trim())
  .pipe(z.string().min(1).max(100));
const Link = z.url({ protocol: /^https?$/ });

/** The link to the e-mail verification page; it works once, for 24 hours. */
export const verifyEmail = defineTemplate({
  data: z.object({ name: Name, url: Link }),
  render: ({ name, url }) => ({
    subject: 'Verify your e-mail address',
    text: `Hello ${name},\n\nopen this link to verify your e-mail address (it works once, for 24 hours):\n\n${url}\n\nIf you did not sign up, ignore this message.`,
    html: html`<p>Hello ${name},</p>
<p><a href="${url}">Verify your e-mail address</a>. The link works once, for 24 hours.</p>
<p>If you did not sign up, ignore this message.</p>`,
  }),
});

/** The link to choose a new password; it works once, for an hour. */
export const passwordReset = defineTemplate({
  data: z.object({ name: Name, url: Link }),
  render: ({ name, url }) => ({
    subject: 'Reset your password',
    text: `Hello ${name},\n\nsomeone asked to reset your password. To choose a new one, open this link (it works once, for an hour):\n\n${url}\n\nIf it was not you, ignore this message: your password stays as it is.`,
    html: html`<p>Hello ${name},</p>
<p>Someone asked to reset your password. <a href="${url}">Choose a new password</a>; the link works once, for an hour.</p>
<p>If it was not you, ignore this message: your password stays as it is.</p>`,
  }),
});

/** An invitation to join an organization with a role; the link works once, for 7 days. */
export const invitation = defineTemplate({
  data: z.object({
    inviterName: Name,
    organizationName: Name,
    role: z.enum(['owner', 'admin', 'member']),
    url: Link,
  }),
  render: ({ inviterName, organizationName, role, url }) => ({
    subject: `${inviterName} invited you to ${organizationName}`,
    text: `${inviterName} invited you to join ${organizationName} as ${role === 'admin' ? 'an' : 'a'} ${role}.\n\nOpen this link to accept (sign up first if you have no account; it works once, for 7 days):\n\n${url}`,
    html: html`<p>${inviterName} invited you to join <b>${organizationName}</b> as ${role === 'admin' ? 'an' : 'a'} ${role}.</p>
<p><a href="${url}">Accept the invitation</a> (sign up first if you have no account). The link works once, for 7 days.</p>`,
  }),
});

/** Sent to the old address when a user's e-mail changes, so a takeover does not go unseen. */
export const emailChanged = defineTemplate({
  data: z.object({ name: Name, newEmail: z.string().max(254) }),
  render: ({ name, newEmail }) => ({
    subject: 'Your e-mail address was changed',
    text: `Hello ${name},\n\nthe e-mail address of your account was changed to ${newEmail}. Messages now go there.\n\nIf you did not do this, reset your password and tell the service's operator.`,
    html: html`<p>Hello ${name},</p>
<p>The e-mail address of your account was changed to <b>${newEmail}</b>. Messages now go there.</p>
<p>If you did not do this, reset your password and tell the service's operator.</p>`,
  }),
});
