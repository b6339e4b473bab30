import { z } from 'zod';
import { html } from '../html.js';
import { defineTemplate } from '../template.js';

/** One line of text: no line break may reach a header or split a paragraph's meaning. */
const Line = z
  .string()
  .trim()
  .min(1)
  .max(2_000)
  .regex(/^[^\r\n]*$/, 'one line');

/**
 * A generic notice: a subject, paragraphs, and at most one link to act on. Features with a
 * message of their own (a sign-up confirmation, a password reset) add a template beside it.
 */
export const notice = defineTemplate({
  data: z.object({
    subject: Line.max(200),
    paragraphs: z.array(Line).min(1).max(20),
    action: z.object({ label: Line.max(100), url: z.url({ protocol: /^https?$/ }) }).optional(),
  }),
  render: ({ subject, paragraphs, action }) => ({
    subject,
    text: [...paragraphs, ...(action ? [`${action.label}: ${action.url}`] : [])].join('\n\n'),
    html: html`${paragraphs.map((p) => html`<p>${p}</p>\n`)}${
      action ? html`<p><a href="${action.url}">${action.label}</a></p>` : undefined
    }`,
  }),
});
