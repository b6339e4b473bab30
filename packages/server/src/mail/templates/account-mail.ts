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

/**
 * To a requested new address: the link that makes it the account's address (once, 24 hours).
 * Until it is opened, nothing changes.
 */
export const confirmEmailChange = defineTemplate({
  data: z.object({ name: Name, newEmail: z.string().max(254), url: Link }),
  render: ({ name, newEmail, url }) => ({
    subject: 'Confirm your new e-mail address',
    text: `Hello ${name},\n\nyou asked to use ${newEmail} for your account. Open this link to confirm it (it works once, for 24 hours):\n\n${url}\n\nUntil then your account keeps its current address. If you did not ask for this, ignore this message.`,
    html: html`<p>Hello ${name},</p>
<p>You asked to use <b>${newEmail}</b> for your account. <a href="${url}">Confirm the new address</a>; the link works once, for 24 hours.</p>
<p>Until then your account keeps its current address. If you did not ask for this, ignore this message.</p>`,
  }),
});

/** The words of both notices to the current address: what the undo link does. */
const undoText = (undoUrl: string) =>
  `If you did not do this, someone else knows your password. Open this link (it works once, for 7 days): it keeps or gives back this address, signs out every browser, revokes every access token, and lets you choose a new password:\n\n${undoUrl}`;
const undoHtml = (undoUrl: string) =>
  html`<p>If you did not do this, someone else knows your password. <a href="${undoUrl}">Take your account back</a>: the link keeps or gives back this address, signs out every browser, revokes every access token, and lets you choose a new password. It works once, for 7 days.</p>`;

/**
 * To the current address when a change to another is asked for, so a takeover does not go
 * unseen: nothing has changed yet, and the link undoes it.
 */
export const emailChangeRequested = defineTemplate({
  data: z.object({ name: Name, newEmail: z.string().max(254), undoUrl: Link }),
  render: ({ name, newEmail, undoUrl }) => ({
    subject: 'A change of your e-mail address was asked for',
    text: `Hello ${name},\n\nsomeone signed in to your account asked to change its e-mail address to ${newEmail}. Nothing changes until that address confirms it.\n\n${undoText(undoUrl)}`,
    html: html`<p>Hello ${name},</p>
<p>Someone signed in to your account asked to change its e-mail address to <b>${newEmail}</b>. Nothing changes until that address confirms it.</p>
${undoHtml(undoUrl)}`,
  }),
});

/** To the previous address once a change took effect, with a link that reverts it. */
export const emailChanged = defineTemplate({
  data: z.object({ name: Name, newEmail: z.string().max(254), undoUrl: Link }),
  render: ({ name, newEmail, undoUrl }) => ({
    subject: 'Your e-mail address was changed',
    text: `Hello ${name},\n\nthe e-mail address of your account was changed to ${newEmail}. Messages now go there.\n\n${undoText(undoUrl)}`,
    html: html`<p>Hello ${name},</p>
<p>The e-mail address of your account was changed to <b>${newEmail}</b>. Messages now go there.</p>
${undoHtml(undoUrl)}`,
  }),
});

/**
 * To an address someone asked to move their account to while another account has it. Whoever
 * asked is told nothing different (their answer and their mail look the same either way), so
 * the address's owner is the only one who learns of it.
 */
export const emailInUse = defineTemplate({
  data: z.object({}),
  render: (_, site) => ({
    subject: 'Someone tried to use your e-mail address',
    text: `Hello,\n\nsomeone asked to move another account to this address, which already has an account here. Nothing changed, and nothing will.\n\nIf it was you, sign in with this address instead; if you forgot the password, reset it: ${site.publicUrl}/dashboard/forgot-password\n\nOtherwise ignore this message.`,
    html: html`<p>Hello,</p>
<p>Someone asked to move another account to this address, which already has an account here. Nothing changed, and nothing will.</p>
<p>If it was you, sign in with this address instead; if you forgot the password, <a href="${`${site.publicUrl}/dashboard/forgot-password`}">reset it</a>.</p>
<p>Otherwise ignore this message.</p>`,
  }),
});
