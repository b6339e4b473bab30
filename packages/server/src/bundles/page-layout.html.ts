import { escapeHtml } from '../util/escape-html.js';

/** `2026-11-22 10:51 UTC`: the same for every reader, with no script to localize it. */
export const formatTime = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;

/** What every public page's site header needs to know about its reader. */
export interface Reader {
  /** A session cookie came with the request (not checked: it only picks the header's link). */
  readonly hasSession: boolean;
}

/** The header every public page shares: home, explore, and sign-in or the dashboard. */
export function siteHeader(reader: Reader): string {
  const account = reader.hasSession
    ? '<a href="/dashboard/">Dashboard</a>'
    : '<a href="/dashboard/sign-in">Sign in</a>';
  return `<header class="site"><nav><a href="/" class="home">Home</a> <a href="/explore">Explore</a> <span class="account">${account}</span></nav></header>`;
}

/** The page frame: no script anywhere, so the app's CSP (`default-src 'self'`) holds. */
export function layout(reader: Reader, title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="/dashboard/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/dashboard/bundle-page.css">
<title>${escapeHtml(title)}</title></head>
<body>${siteHeader(reader)}<main>
${body}
</main></body></html>`;
}

export function notFoundPage(reader: Reader): string {
  return layout(
    reader,
    'Not found',
    '<h1>Not found</h1><p>There is nothing here. <a href="/explore">Explore bundles</a>.</p>',
  );
}

/** A request's problem (a malformed search) as a page. */
export function badRequestPage(reader: Reader, detail: string): string {
  return layout(reader, 'Bad request', `<h1>Bad request</h1><p>${escapeHtml(detail)}</p>`);
}
