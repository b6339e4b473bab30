import type { z } from 'zod';
import { html, type SafeHtml } from './html.js';

/** What every message may say about the service that sent it. */
export interface MailSite {
  /** `PUBLIC_URL`: the base of every link, and the footer's address. */
  readonly publicUrl: string;
}

/** A message's subject and both bodies, before `frame` adds what every message shares. */
export interface RenderedParts {
  readonly subject: string;
  readonly text: string;
  readonly html: SafeHtml;
}

/**
 * One kind of message: its data's schema (checked when it is enqueued and again when it is
 * sent) and how it reads, as plain text and as HTML. Data never reaches a log.
 */
export interface MailTemplate<S extends z.ZodType = z.ZodType> {
  readonly data: S;
  render(data: z.output<S>, site: MailSite): RenderedParts;
}

export const defineTemplate = <S extends z.ZodType>(template: MailTemplate<S>) => template;

/** The frame every message shares: the body, then a footer naming the service. */
export function frame(parts: RenderedParts, site: MailSite) {
  return {
    subject: parts.subject,
    text: `${parts.text.trimEnd()}\n\n-- \nsvc, ${site.publicUrl}\n`,
    html: html`<!doctype html>
<html><head><meta charset="utf-8"><title>${parts.subject}</title></head>
<body style="font-family:system-ui,sans-serif;line-height:1.5;max-width:36rem">
${parts.html}
<hr><p style="color:#666;font-size:small">svc, <a href="${site.publicUrl}">${site.publicUrl}</a></p>
</body></html>
`.value,
  };
}
